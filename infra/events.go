package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

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

// NewRouting creates the two rules.
//
// Dead-letter choice: both. The rule target's DLQ catches events EventBridge could not hand
// to Lambda at all (after its own retries); once Lambda has accepted an async invocation,
// only the function's onFailure destination sees a handler that keeps failing. Either alone
// leaves a silent gap; both point at the function's one queue, so an operator watches one
// place per function (EventBridge messages carry RULE_ARN/ERROR_CODE attributes, Lambda
// records carry requestContext, so the two are easy to tell apart on redrive).
func NewRouting(scope constructs.Construct, id string, p *RoutingProps) *Routing {
	c := constructs.NewConstruct(scope, jsii.String(id))
	stack := awscdk.Stack_Of(c)
	r := &Routing{Scope: c}

	target := func(g *GoFunction) awsevents.IRuleTarget {
		return awseventstargets.NewLambdaFunction(g.Function, &awseventstargets.LambdaFunctionProps{
			DeadLetterQueue: g.DLQ,
			RetryAttempts:   jsii.Number(targetRetryAttempts),
			MaxEventAge:     awscdk.Duration_Hours(jsii.Number(targetMaxEventAgeHr)),
		})
	}

	// Bedrock publishes job state changes on the default bus only (best effort: the
	// reconciler polls as a backstop). The jobName prefix keeps other stacks' and other
	// tools' jobs in the same account out.
	r.BedrockJobs = awsevents.NewRule(c, jsii.String("BedrockJobStateChange"), &awsevents.RuleProps{
		Description: jsii.String("Bedrock batch jobs named " + p.JobPrefix + "-* -> bedrock-events"),
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings(config.BedrockEventSource),
			DetailType: jsii.Strings(config.BedrockDetailType),
			Account:    &[]*string{stack.Account()},
			Detail: &map[string]interface{}{
				"batchJobName": awsevents.Match_Prefix(jsii.String(p.JobPrefix + "-")),
			},
		},
		Targets: &[]awsevents.IRuleTarget{target(p.Functions.BedrockEvents)},
	})

	r.OutputReady = awsevents.NewRule(c, jsii.String("JobOutputReady"), &awsevents.RuleProps{
		Description: jsii.String("Job Output Ready -> ingest"),
		EventBus:    p.Bus,
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings(config.EventSource),
			DetailType: jsii.Strings(config.DetailJobOutputReady),
		},
		Targets: &[]awsevents.IRuleTarget{target(p.Functions.Ingest)},
	})
	return r
}
