package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// StackProps are the CDK stack props plus this deployment's settings. Tests pass an
// AssetDir holding placeholder bootstrap files and a fixed account/region.
type StackProps struct {
	awscdk.StackProps
	Settings Settings
}

// Stack is the whole suite in one stack: data, Bedrock role, bus, functions, routing.
type Stack struct {
	Stack     awscdk.Stack
	Settings  Settings
	Data      *Data
	Bedrock   *BedrockRole
	Bus       awsevents.EventBus
	Functions *Functions
	Routing   *Routing
	SageMaker *SageMaker
	// Tokens holds the hashed API keys in token auth mode (nil in iam mode).
	Tokens  *TokenKeys
	Reports *Reports
	// Notifications is the webhook secret; Monitoring the dashboard and metric alarms.
	Notifications *Notifications
	Monitoring    *Monitoring
	// Anthropic is the Anthropic API key secret (anthropic.go).
	Anthropic *Anthropic
	// Providers makes mcp's Anthropic and SageMaker control-plane calls (providers.go).
	Providers *Providers
	// Reconciler is the schedule and its alarms (reconciler.go).
	Reconciler *Reconciler
	// Validate checks file submits (validate.go).
	Validate *Validate
	// Fanout is the validation queue of jobs over many files (fanout.go).
	Fanout *Fanout
	// Alarms is the alarm topic and the DLQ and failed-job alarms (ops.go).
	Alarms *Alarms
	// Vectors is the S3 Vectors bucket of embedding indexes (vectors.go).
	Vectors *Vectors
	// Endpoints are the SageMaker endpoints the stack deploys (endpoints.go).
	Endpoints *Endpoints
}

// NewStack validates the settings and the function assets, then builds the stack.
func NewStack(scope constructs.Construct, id string, props *StackProps) (*Stack, error) {
	s := props.Settings
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := s.CheckAssets(); err != nil {
		return nil, err
	}
	sp := props.StackProps
	if sp.StackName == nil {
		sp.StackName = jsii.String(s.StackName)
	}
	if sp.Description == nil {
		sp.Description = jsii.String("mcpbatch: MCP tools for bulk and long-running inference (Bedrock batch)")
	}
	stack := awscdk.NewStack(scope, jsii.String(id), &sp)
	st := &Stack{Stack: stack, Settings: s}
	stackName := *stack.StackName()

	st.Data = NewData(stack, "Data")
	st.Bedrock = NewBedrockRole(stack, "Bedrock", &BedrockRoleProps{Data: st.Data, Catalog: s.catalog(), Models: s.BedrockModels})
	st.Bus = NewProjectBus(stack, "Bus", stackName)
	st.Functions = NewFunctions(stack, "Functions", &FunctionsProps{
		Settings: s, Data: st.Data, Bedrock: st.Bedrock, Bus: st.Bus,
	})
	if s.Auth == config.AuthToken {
		st.Tokens = NewTokenKeys(stack, "Auth", st.Functions.MCP)
	}
	st.Routing = NewRouting(stack, "Routing", &RoutingProps{
		JobPrefix: s.JobPrefix, Bus: st.Bus, Functions: st.Functions,
	})
	st.SageMaker = NewSageMaker(stack, "SageMaker", &SageMakerProps{Settings: s, Data: st.Data, Bus: st.Bus, Functions: st.Functions})
	pipelines, err := LoadPipelines(stack.Node())
	if err != nil {
		return nil, err
	}
	st.Reports = NewReports(stack, "Reports", &ReportsProps{Settings: s, Data: st.Data, Bedrock: st.Bedrock, Bus: st.Bus, Functions: st.Functions, Pipelines: pipelines})
	st.Vectors = NewVectors(stack, "Vectors", &VectorsProps{Settings: s, Functions: st.Functions, Data: st.Data, OnDemand: st.Reports.OnDemand, NightlyReport: st.Reports.NightlyReport})
	rs, err := ReconcilerSettingsFromContext(scope.Node())
	if err != nil {
		return nil, err
	}
	st.Anthropic = NewAnthropic(stack, "Anthropic")
	st.Anthropic.Grant(st.Functions.Ingest)
	// mcp reaches Anthropic and the SageMaker control plane through it.
	st.Providers = NewProviders(stack, "Providers", &ProvidersProps{Settings: s, Data: st.Data, Functions: st.Functions, Anthropic: st.Anthropic})
	st.Reconciler = NewReconciler(stack, "Reconciler", &ReconcilerProps{
		Settings: s, Reconciler: rs, Data: st.Data, Bedrock: st.Bedrock, Bus: st.Bus, Functions: st.Functions, Anthropic: st.Anthropic,
	})
	// The reconciler refreshes the account's model facts: daily, and at its
	// cold start when the stored ones are a day old. mcp only reads them from the table.
	grantAccountReads(st.Reconciler.Function)
	st.Endpoints = NewEndpoints(stack, "SageMakerEndpoints", &EndpointsProps{
		Settings: s, Data: st.Data, SageMaker: st.SageMaker, Functions: st.Functions, Reconciler: st.Reconciler, Providers: st.Providers,
	})
	st.Validate = NewValidate(stack, "Validate", &ValidateProps{
		Settings: s, Reconciler: rs, Data: st.Data, Bedrock: st.Bedrock, Bus: st.Bus, Functions: st.Functions, Anthropic: st.Anthropic,
	})
	if st.Fanout, err = NewFanout(stack, "Fanout", &FanoutProps{Validate: st.Validate}); err != nil {
		return nil, err
	}
	st.Alarms = NewAlarms(stack, "Alarms", &AlarmsProps{
		Settings: s,
		Functions: []*GoFunction{st.Functions.MCP, st.Functions.BedrockEvents, st.Functions.Ingest, st.SageMaker.Events,
			st.Reports.NightlyReport, st.Reports.OnDemand, st.Reconciler.Function, st.Validate.Function, st.Providers.Function},
		Existing:    []awscloudwatch.Alarm{st.Reconciler.Alarm, st.Reconciler.DLQAlarm, st.Fanout.DLQAlarm},
		HasDLQAlarm: []*GoFunction{st.Reconciler.Function},
	})
	st.Notifications = NewNotifications(stack, "Notifications", st.Reports.NightlyReport, st.Functions.MCP, st.Reports.Topic.TopicArn())
	st.Monitoring = NewMonitoring(stack, "Monitoring", &MonitoringProps{
		Settings: s, Namespace: MetricsNamespace(s.StackName), Alarms: st.Alarms,
		Functions: []*GoFunction{st.Functions.MCP, st.Functions.BedrockEvents, st.Functions.Ingest, st.SageMaker.Events,
			st.Reports.NightlyReport, st.Reports.OnDemand, st.Reconciler.Function, st.Validate.Function, st.Providers.Function},
		HasErrorAlarm: []*GoFunction{st.Reconciler.Function},
	})
	st.output("AlarmTopicArn", "SNS topic every alarm notifies (DLQs, failed jobs, reconciler errors): subscribe on-call", st.Alarms.Topic.TopicArn())
	st.addOutputs()
	st.addNagSuppressions()
	st.Reconciler.addNagSuppressions()
	st.output("AnthropicKeySecretArn", "Secret to put the Anthropic API key in (aws secretsmanager put-secret-value)", st.Anthropic.Secret.SecretArn())
	return st, nil
}

func (s *Stack) output(id, desc string, value *string) {
	awscdk.NewCfnOutput(s.Stack, jsii.String(id), &awscdk.CfnOutputProps{
		Description: jsii.String(desc),
		Value:       value,
	})
}

func (s *Stack) addOutputs() {
	url := s.Functions.URL.Url()
	// The MCP endpoint is served under /mcp, as in local mode (http://127.0.0.1:8787/mcp).
	endpoint := jsii.String(*url + "mcp")
	region := *s.Stack.Region()
	urlDesc := "Function URL of the MCP server (AWS_IAM auth: requests must be SigV4-signed)"
	if s.Settings.Auth == config.AuthToken {
		urlDesc = "Function URL of the MCP server (token auth: send Authorization: Bearer <API key>)"
	}
	s.output("McpUrl", urlDesc, url)
	s.output("TableName", "DynamoDB table (jobs and results)", s.Data.Table.TableName())
	s.output("BucketName", "S3 data bucket (input/, output/, results/, exports/)", s.Data.Bucket.BucketName())
	s.output("BusName", "Project EventBridge bus", s.Bus.EventBusName())
	s.output("BedrockRoleArn", "Service role Bedrock assumes for batch jobs", s.Bedrock.Role.RoleArn())
	s.output("BedrockEventsDlqUrl", "Dead-letter queue of the bedrock-events function", s.Functions.BedrockEvents.DLQ.QueueUrl())
	s.output("IngestDlqUrl", "Dead-letter queue of the ingest function", s.Functions.Ingest.DLQ.QueueUrl())
	if s.Tokens != nil {
		s.addTokenOutputs(*endpoint)
		return
	}
	// MCP clients cannot SigV4-sign; the AWS MCP proxy bridges stdio to the IAM-authed URL
	// with the caller's own credentials, which need the McpCallerPolicy permissions.
	s.output("McpProxyCommand", "Run the MCP server locally through the SigV4 proxy",
		jsii.String(fmt.Sprintf("uvx mcp-proxy-for-aws@latest %s --service lambda --region %s", *endpoint, region)))
	s.output("McpClientConfig", "Paste into an MCP client's config (mcpServers) for IAM mode",
		jsii.String(fmt.Sprintf(`{"mcpServers":{"mcpbatch":{"command":"uvx","args":["mcp-proxy-for-aws@latest","%s","--service","lambda","--region","%s"]}}}`,
			*endpoint, region)))
	s.output("McpCallerPolicy", "IAM policy a caller (user/role) needs to use the MCP endpoint",
		jsii.String(fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["lambda:InvokeFunctionUrl","lambda:InvokeFunction"],"Resource":"%s"}]}`,
			*s.Functions.MCP.Function.FunctionArn())))
}
