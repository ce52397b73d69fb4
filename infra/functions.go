package main

import (
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// Async retry settings of the functions EventBridge invokes. Lambda's own async queue
// retries a failed invocation twice; every handler is idempotent, so a retry is safe.
const (
	asyncRetryAttempts = 2
	asyncMaxEventAgeHr = 6
	dlqRetentionDays   = 14 // SQS maximum: room for an operator to inspect and redrive
	logRetention       = awslogs.RetentionDays_ONE_MONTH
)

// GoFunctionProps describe one Go Lambda.
type GoFunctionProps struct {
	Name        string // folder under the asset dir: <assetDir>/<Name>/bootstrap
	Description string
	AssetDir    string
	Env         map[string]*string
	Timeout     awscdk.Duration
	MemoryMB    float64
	LogLevel    string
	// Async marks a function invoked asynchronously (by EventBridge): it gets a DLQ.
	Async bool
	// ReservedConcurrency caps (and reserves) concurrent instances; nil: none.
	ReservedConcurrency *float64
}

// GoFunction is a Go Lambda with its own role, log group and (when async) dead-letter queue.
type GoFunction struct {
	// Scope is the construct that groups these resources (not embedded, so the Go
	// wrapper can never be handed to jsii as a construct by mistake).
	Scope    constructs.Construct
	Name     string
	Function awslambda.Function
	Role     awsiam.Role
	LogGroup awslogs.LogGroup
	// DLQ receives events that could not be handled: from the EventBridge rule target when
	// delivery fails, and from Lambda's on-failure destination when the handler keeps failing.
	DLQ awssqs.Queue
}

// NewGoFunction creates one function. The role is explicit (not CDK's default) so it carries
// no AWS managed policy: logging is granted on this function's log group only.
func NewGoFunction(scope constructs.Construct, id string, p *GoFunctionProps) *GoFunction {
	c := constructs.NewConstruct(scope, jsii.String(id))
	stack := awscdk.Stack_Of(c)
	g := &GoFunction{Scope: c, Name: p.Name}

	g.LogGroup = awslogs.NewLogGroup(c, jsii.String("Logs"), &awslogs.LogGroupProps{
		LogGroupName: jsii.String("/mcpbatch/" + *stack.StackName() + "/" + p.Name),
		Retention:    logRetention,
		// Logs age out after a month anyway; do not leave an orphan behind on stack delete.
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	g.Role = awsiam.NewRole(c, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("mcpbatch " + p.Name + " function"),
	})
	g.LogGroup.GrantWrite(g.Role)

	props := &awslambda.FunctionProps{
		Description:                  jsii.String(p.Description),
		Runtime:                      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:                 awslambda.Architecture_ARM_64(),
		Handler:                      jsii.String("bootstrap"),
		Code:                         awslambda.Code_FromAsset(jsii.String(filepath.Join(p.AssetDir, p.Name)), nil),
		Role:                         g.Role,
		Timeout:                      p.Timeout,
		MemorySize:                   jsii.Number(p.MemoryMB),
		Environment:                  &p.Env,
		LogGroup:                     g.LogGroup,
		LoggingFormat:                awslambda.LoggingFormat_JSON,
		ApplicationLogLevelV2:        applicationLogLevel(p.LogLevel),
		ReservedConcurrentExecutions: p.ReservedConcurrency,
	}
	if p.Async {
		g.DLQ = awssqs.NewQueue(c, jsii.String("DLQ"), &awssqs.QueueProps{
			Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:      jsii.Bool(true),
			RetentionPeriod: awscdk.Duration_Days(jsii.Number(dlqRetentionDays)),
		})
		// onFailure (a destination) rather than the function's legacy DeadLetterQueue: the
		// record carries the error and the retry count next to the event.
		props.OnFailure = awslambdadestinations.NewSqsDestination(g.DLQ)
		props.RetryAttempts = jsii.Number(asyncRetryAttempts)
		props.MaxEventAge = awscdk.Duration_Hours(jsii.Number(asyncMaxEventAgeHr))
	}
	g.Function = awslambda.NewFunction(c, jsii.String("Function"), props)
	dependOnPolicyOnly(stack, g)
	return g
}

// dependOnPolicyOnly keeps the function's DependsOn on the role's policy (the function must not
// run before it may log or reach its DLQ) but drops the role itself: the Role property's GetAtt
// already orders that, and the duplicate is cfn-lint W3005.
func dependOnPolicyOnly(stack awscdk.Stack, g *GoFunction) {
	child := g.Role.Node().TryFindChild(jsii.String("DefaultPolicy"))
	if child == nil {
		return
	}
	policy := child.Node().DefaultChild().(awsiam.CfnPolicy)
	fn := g.Function.Node().DefaultChild().(awslambda.CfnFunction)
	fn.AddOverride(jsii.String("DependsOn"), jsii.Strings(*stack.GetLogicalId(policy)))
}

func applicationLogLevel(level string) awslambda.ApplicationLogLevel {
	switch strings.ToLower(level) {
	case "debug":
		return awslambda.ApplicationLogLevel_DEBUG
	case "warn":
		return awslambda.ApplicationLogLevel_WARN
	case "error":
		return awslambda.ApplicationLogLevel_ERROR
	default:
		return awslambda.ApplicationLogLevel_INFO
	}
}

// FunctionsProps wire the functions to the rest of the stack.
type FunctionsProps struct {
	Settings Settings
	Data     *Data
	Bedrock  *BedrockRole
	Bus      awsevents.EventBus
}

// Functions are the suite's Lambdas.
type Functions struct {
	// Scope is the construct that groups these resources (not embedded, so the Go
	// wrapper can never be handed to jsii as a construct by mistake).
	Scope         constructs.Construct
	MCP           *GoFunction
	URL           awslambda.FunctionUrl
	BedrockEvents *GoFunction
	Ingest        *GoFunction

	// Env is the environment every function gets (more functions reuse it).
	Env map[string]*string
}

// NewFunctions creates the three functions, the MCP Function URL and their permissions.
// EnvWith is the shared environment plus extra variables, for functions other
// constructs add.
func (f *Functions) EnvWith(extra map[string]*string) map[string]*string {
	env := make(map[string]*string, len(f.Env)+len(extra))
	for k, v := range f.Env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func NewFunctions(scope constructs.Construct, id string, p *FunctionsProps) *Functions {
	c := constructs.NewConstruct(scope, jsii.String(id))
	s := p.Settings
	// Every function gets the same environment so the shared service code can build any port.
	env := map[string]*string{
		config.EnvTable:          p.Data.Table.TableName(),
		config.EnvBucket:         p.Data.Bucket.BucketName(),
		config.EnvBus:            p.Bus.EventBusName(),
		config.EnvBedrockRoleARN: p.Bedrock.Role.RoleArn(),
		config.EnvJobPrefix:      jsii.String(s.JobPrefix),
		config.EnvBedrockModels:  jsii.String(strings.Join(s.BedrockModels, ",")),
		config.EnvLogLevel:       jsii.String(s.LogLevel),
		// The EMF metrics of this stack (dashboard and alarms: monitoring.go).
		config.EnvMetricsNamespace: jsii.String(MetricsNamespace(s.StackName)),
	}
	if s.ModelsOverride != "" {
		env[model.EnvModelsJSON] = jsii.String(s.ModelsOverride)
	}
	f := &Functions{Scope: c, Env: env}
	f.MCP = NewGoFunction(c, "Mcp", &GoFunctionProps{
		Name:        FnMCP,
		Description: "mcpbatch MCP server (Streamable HTTP behind the Function URL)",
		AssetDir:    s.AssetDir, Env: env, LogLevel: s.LogLevel,
		// A tool call only submits or reads a page, but an upload of a large batch to S3 takes time,
		// and invoke_endpoint may wait SageMaker's full 60 s for a model's answer.
		Timeout:  awscdk.Duration_Seconds(jsii.Number(90)),
		MemoryMB: 512,
		// Token mode's URL is public: cap what a request flood can run (ops.go).
		ReservedConcurrency: mcpReservedConcurrency(s),
	})
	f.URL = f.MCP.Function.AddFunctionUrl(&awslambda.FunctionUrlOptions{
		// SigV4: same-account callers need lambda:InvokeFunctionUrl and (for URLs created since
		// October 2025) lambda:InvokeFunction on this function; see the McpCallerPolicy output.
		// In token mode (-c auth=token) the URL is public and the function checks bearer keys.
		AuthType: functionURLAuth(s.Auth),
		// aws-lambda-go's lambdaurl handler only works with a streamed response.
		InvokeMode: awslambda.InvokeMode_RESPONSE_STREAM,
	})
	f.BedrockEvents = NewGoFunction(c, "BedrockEvents", &GoFunctionProps{
		Name:        FnBedrockEvents,
		Description: "mcpbatch Bedrock batch job state changes -> job status",
		AssetDir:    s.AssetDir, Env: env, LogLevel: s.LogLevel,
		Timeout:  awscdk.Duration_Seconds(jsii.Number(30)),
		MemoryMB: 256,
		Async:    true,
	})
	f.Ingest = NewGoFunction(c, "Ingest", &GoFunctionProps{
		Name:        FnIngest,
		Description: "mcpbatch batch output -> DynamoDB results",
		AssetDir:    s.AssetDir, Env: env, LogLevel: s.LogLevel,
		// Streams up to 50,000 records per part; checkpoints let a timed-out run resume.
		Timeout:  awscdk.Duration_Minutes(jsii.Number(15)),
		MemoryMB: 1024,
		Async:    true,
	})
	grantAccess(f, p)
	return f
}
