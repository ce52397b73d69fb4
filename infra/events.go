package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/app/routes"
	"github.com/mcpbatch/mcpbatch/shared/config"
)

// Rule-target retry policy: how long EventBridge keeps trying to hand an event to Lambda
// (throttled Invoke, a function being updated) before it goes to the target's DLQ.
const (
	targetRetryAttempts = 10
	targetMaxEventAgeHr = 4
)

// NewProjectBus creates the suite's own event bus, "mcpbatch-<stack>".
func NewProjectBus(scope constructs.Construct, id, stackName string) awsevents.EventBus {
	return awsevents.NewEventBus(scope, jsii.String(id), &awsevents.EventBusProps{
		EventBusName: jsii.String("mcpbatch-" + stackName),
		Description:  jsii.String("mcpbatch job events (" + config.EventSource + ")"),
	})
}

// RoutingProps connect event sources to the asynchronous functions.
type RoutingProps struct {
	JobPrefix string
	Bus       awsevents.EventBus
	Functions *Functions
}

// Routing holds the EventBridge rules.
type Routing struct {
	// Scope is the construct that groups these resources (not embedded, so the Go
	// wrapper can never be handed to jsii as a construct by mistake).
	Scope       constructs.Construct
	BedrockJobs awsevents.Rule
	OutputReady awsevents.Rule
}

// NewRouting creates the rules of the provider's job events and of ingest.
//
// Dead-letter choice: both. The rule target's DLQ catches events EventBridge could not hand
// to Lambda at all (after its own retries); once Lambda has accepted an async invocation,
// only the function's onFailure destination sees a handler that keeps failing. Either alone
// leaves a silent gap; both point at the function's one queue, so an operator watches one
// place per function (EventBridge messages carry RULE_ARN/ERROR_CODE attributes, Lambda
// records carry requestContext, so the two are easy to tell apart on redrive).
func NewRouting(scope constructs.Construct, id string, p *RoutingProps) *Routing {
	c := constructs.NewConstruct(scope, jsii.String(id))
	r := &Routing{Scope: c}
	r.BedrockJobs = routeRule(c, nil, p.JobPrefix, p.Functions.BedrockEvents)
	r.OutputReady = routeRule(c, p.Bus, p.JobPrefix, p.Functions.Ingest)
	return r
}

// routeRule is the rule of g's row in the route table (shared/app/routes),
// which make dev routes by too, handing the events to g.
//
// A row on the default bus takes this account's events only: AWS services
// publish there (Bedrock's job state changes, best effort: the reconciler
// polls as a backstop). A row naming a job-name field matches it by the
// deployment's job prefix, which keeps other stacks' and other tools' jobs
// in the same account out.
func routeRule(scope constructs.Construct, bus awsevents.IEventBus, jobPrefix string, g *GoFunction) awsevents.Rule {
	rt := routes.Of(g.Name)
	pattern := &awsevents.EventPattern{Source: jsii.Strings(rt.Source), DetailType: jsii.Strings(rt.DetailTypes...)}
	props := &awsevents.RuleProps{Description: jsii.String(rt.Description()), EventPattern: pattern, Targets: &[]awsevents.IRuleTarget{ruleTarget(g)}}
	if rt.DefaultBus {
		pattern.Account = &[]*string{awscdk.Stack_Of(scope).Account()}
	} else {
		props.EventBus = bus
	}
	if rt.JobNameField != "" {
		pattern.Detail = &map[string]interface{}{rt.JobNameField: awsevents.Match_Prefix(jsii.String(jobPrefix + "-"))}
		props.Description = jsii.String(strings.Join(rt.DetailTypes, ", ") + " of jobs named " + jobPrefix + "-* -> " + rt.Function)
	}
	return awsevents.NewRule(scope, jsii.String(rt.Rule), props)
}

// ruleTarget hands a rule's events to g: EventBridge retries, then g's DLQ.
func ruleTarget(g *GoFunction) awsevents.IRuleTarget {
	return awseventstargets.NewLambdaFunction(g.Function, &awseventstargets.LambdaFunctionProps{
		DeadLetterQueue: g.DLQ,
		RetryAttempts:   jsii.Number(targetRetryAttempts),
		MaxEventAge:     awscdk.Duration_Hours(jsii.Number(targetMaxEventAgeHr)),
	})
}
