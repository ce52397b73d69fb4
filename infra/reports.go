package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/app/routes"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
)

// Functions of the report pipelines and on-demand runs.
const (
	FnNightlyReport = routes.FnNightlyReport
	FnOnDemand      = routes.FnOnDemand
)

// Bucket prefixes of report pipelines.
const (
	PrefixSources = "sources/" // documents pipelines read (s3_prefix under {bucket})
	PrefixReports = "reports/" // reports/<pipeline>/<date>/report.{md,html,json}
)

var wildReports = wildcard{
	pattern: `/^Resource::<[A-Za-z0-9]+\.Arn>\/(sources|reports)\/\*$/`,
	reason: "Pipelines read documents under sources/ and write reports under reports/<pipeline>/<date>/; " +
		"run dates are run-time values, and the grant is limited to those two prefixes of the stack's own bucket.",
}

// CtxPipelinesFile overrides the pipelines file (default: the one shipped in
// infra/pipelines, embedded here so synth validates exactly what the build copies
// beside the mcp and nightly-report bootstraps).
const CtxPipelinesFile = "pipelinesFile"

//go:embed pipelines/pipelines.json
var shippedPipelines []byte

// LoadPipelines reads the pipelines file named in context, or the shipped one.
func LoadPipelines(node constructs.Node) (*pipeline.Config, error) {
	raw := shippedPipelines
	if f, ok := node.TryGetContext(jsii.String(CtxPipelinesFile)).(string); ok && f != "" {
		var err error
		if raw, err = os.ReadFile(f); err != nil {
			return nil, fmt.Errorf("context %s: %w", CtxPipelinesFile, err)
		}
	}
	cfg, err := pipeline.Parse(bytes.NewReader(raw))
	if err == nil {
		err = cfg.CheckTemplates()
	}
	if err != nil {
		return nil, fmt.Errorf("pipelines file: %w", err)
	}
	return cfg, nil
}

// ReportsProps wire the report pipelines into the stack.
type ReportsProps struct {
	Settings  Settings
	Data      *Data
	Bedrock   *BedrockRole
	Bus       awsevents.EventBus
	Functions *Functions
	Pipelines *pipeline.Config
}

// Reports are the on-demand runner, the nightly-report function, its schedules
// (EventBridge Scheduler, one per pipeline) and the notification topic.
type Reports struct {
	Scope         constructs.Construct
	Topic         awssns.Topic
	NightlyReport *GoFunction
	OnDemand      *GoFunction
	SchedulerRole awsiam.Role
	Schedules     []awsscheduler.CfnSchedule
	Rules         []awsevents.Rule
}

// NewReports builds the pipelines part of the stack.
func NewReports(scope constructs.Construct, id string, p *ReportsProps) *Reports {
	c := constructs.NewConstruct(scope, jsii.String(id))
	stack := awscdk.Stack_Of(c)
	s := p.Settings
	r := &Reports{Scope: c}

	r.Topic = awssns.NewTopic(c, jsii.String("Topic"), &awssns.TopicProps{
		DisplayName: jsii.String("mcpbatch reports"),
		// SNS encrypts at rest with the AWS managed key; Lambda publishes through SNS, so the
		// key's default policy is enough.
		MasterKey:  awskms.Alias_FromAliasName(c, jsii.String("SnsKey"), jsii.String("alias/aws/sns")),
		EnforceSSL: jsii.Bool(true),
	})
	env := p.Functions.EnvWith(map[string]*string{config.EnvReportTopic: r.Topic.TopicArn()})
	r.NightlyReport = NewGoFunction(c, "NightlyReport", &GoFunctionProps{
		Name:        FnNightlyReport,
		Description: "mcpbatch report pipelines: scheduled runs -> jobs; Job Completed -> report + SNS",
		AssetDir:    s.AssetDir, Env: env, LogLevel: s.LogLevel,
		// Lists the source and submits a batch, or renders a report of up to 50,000 records.
		Timeout:  awscdk.Duration_Minutes(jsii.Number(15)),
		MemoryMB: 1024,
		Async:    true,
	})
	r.OnDemand = NewGoFunction(c, "OnDemand", &GoFunctionProps{
		Name:        FnOnDemand,
		Description: "mcpbatch on-demand runs: records through bedrock-runtime with bounded concurrency",
		AssetDir:    s.AssetDir, Env: env, LogLevel: s.LogLevel,
		// Checkpoints hand long runs to a fresh invocation before the timeout.
		Timeout:  awscdk.Duration_Minutes(jsii.Number(15)),
		MemoryMB: 512,
		Async:    true,
	})
	r.grant(p)
	r.linkSigner(p)
	r.route(c, p)
	r.schedule(c, stack, p)
	for _, g := range []*GoFunction{r.NightlyReport, r.OnDemand} {
		suppress(g.DLQ, "AwsSolutions-SQS3",
			"This queue is itself the dead-letter queue of the "+g.Name+" function (EventBridge and Scheduler target DLQ, Lambda onFailure destination).")
	}
	suppressWildcards(r.NightlyReport.Role, wildObjects, wildJobs, wildModelRegions, wildReports)
	suppressWildcards(p.Functions.MCP.Role, wildReports)
	suppressWildcards(r.OnDemand.Role, wildObjects, wildModelRegions)
	awscdk.NewCfnOutput(stack, jsii.String("ReportTopicArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("SNS topic report summaries go to: subscribe your recipients"),
		Value:       r.Topic.TopicArn(),
	})
	return r
}

func (r *Reports) grant(p *ReportsProps) {
	stack := awscdk.Stack_Of(r.Scope)
	d := p.Data
	tableRW := d.GrantStore
	putEvents := func(g *GoFunction) {
		g.Role.AddToPrincipalPolicy(allow("PutProjectEvents", []string{"events:PutEvents"}, []*string{p.Bus.EventBusArn()}, nil))
	}
	// nightly-report: read sources, submit jobs (input/ and Bedrock batch), write reports, notify.
	nr := r.NightlyReport
	tableRW(nr)
	putEvents(nr)
	nr.Role.AddToPrincipalPolicy(allow("ReadSources", []string{"s3:GetObject"}, d.ObjectArns(PrefixSources, PrefixReports), nil))
	nr.Role.AddToPrincipalPolicy(allow("WriteInputAndReports", []string{"s3:PutObject", "s3:AbortMultipartUpload"},
		d.ObjectArns(PrefixInput, PrefixReports), nil))
	nr.Role.AddToPrincipalPolicy(allow("ListSources", []string{"s3:ListBucket"}, []*string{d.Bucket.BucketArn()},
		map[string]interface{}{"StringLike": map[string]interface{}{"s3:prefix": jsii.Strings(PrefixSources+"*", PrefixReports+"*")}}))
	jobs := []*string{JobArnPattern(stack)}
	createOn := append(append([]*string{}, jobs...), p.Bedrock.ModelArns...)
	nr.Role.AddToPrincipalPolicy(allow("CreateBatchJobs", []string{"bedrock:CreateModelInvocationJob"}, createOn, nil))
	nr.Role.AddToPrincipalPolicy(allow("TagBatchJobs", []string{"bedrock:TagResource"}, jobs,
		map[string]interface{}{"ForAllValues:StringLike": map[string]interface{}{"aws:TagKeys": jsii.Strings("mcpbatch:*")}}))
	nr.Role.AddToPrincipalPolicy(allow("PassBedrockRole", []string{"iam:PassRole"}, []*string{p.Bedrock.Role.RoleArn()},
		map[string]interface{}{"StringEquals": map[string]interface{}{"iam:PassedToService": bedrockPrincipal}}))
	topics := []*string{r.Topic.TopicArn()}
	for _, pl := range p.Pipelines.Pipelines {
		if a := pl.Recipients.SNSTopicARN; a != "" {
			topics = append(topics, jsii.String(a))
		}
	}
	nr.Role.AddToPrincipalPolicy(allow("NotifyRecipients", []string{"sns:Publish"}, topics, nil))

	// ondemand: read the job's input, call the allowed models, write results and counts.
	od := r.OnDemand
	tableRW(od)
	putEvents(od)
	od.Role.AddToPrincipalPolicy(allow("ReadInput", []string{"s3:GetObject"}, d.ObjectArns(PrefixInput), nil))
	od.Role.AddToPrincipalPolicy(allow("WriteResults", []string{"s3:PutObject", "s3:AbortMultipartUpload"}, d.ObjectArns(PrefixResults), nil))
	od.Role.AddToPrincipalPolicy(allow("InvokeModels", []string{"bedrock:InvokeModel"}, p.Bedrock.ModelArns, nil))

	// mcp: get_report reads and presigns reports; run_pipeline publishes on the bus (already granted).
	p.Functions.MCP.Role.AddToPrincipalPolicy(allow("ReadReports", []string{"s3:GetObject"}, d.ObjectArns(PrefixReports), nil))
}

func (r *Reports) route(c constructs.Construct, p *ReportsProps) {
	r.Rules = append(r.Rules, routeRule(c, p.Bus, "", r.OnDemand), routeRule(c, p.Bus, "", r.NightlyReport))
}

// schedule creates one EventBridge Scheduler schedule per pipeline, invoking
// nightly-report with {"pipeline": name} through a role only Scheduler (of this
// account) can assume.
func (r *Reports) schedule(c constructs.Construct, stack awscdk.Stack, p *ReportsProps) {
	if len(p.Pipelines.Pipelines) == 0 {
		return
	}
	r.SchedulerRole = awsiam.NewRole(c, jsii.String("SchedulerRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: &map[string]interface{}{"StringEquals": map[string]interface{}{"aws:SourceAccount": stack.Account()}},
		}),
		Description: jsii.String("EventBridge Scheduler invokes the mcpbatch nightly-report function"),
	})
	r.SchedulerRole.AddToPrincipalPolicy(allow("InvokeNightlyReport", []string{"lambda:InvokeFunction"},
		[]*string{r.NightlyReport.Function.FunctionArn()}, nil))
	r.SchedulerRole.AddToPrincipalPolicy(allow("DeadLetter", []string{"sqs:SendMessage"}, []*string{r.NightlyReport.DLQ.QueueArn()}, nil))
	for _, pl := range p.Pipelines.Pipelines {
		// The scheduler substitutes the time the run was scheduled for, so a retry
		// delivered after midnight still reports the scheduled day.
		input, _ := json.Marshal(pipeline.TickRequest{Pipeline: pl.Name, ScheduledTime: "<aws.scheduler.scheduled-time>"})
		sch := awsscheduler.NewCfnSchedule(c, jsii.String("Schedule-"+pl.Name), &awsscheduler.CfnScheduleProps{
			Description:                jsii.String("mcpbatch pipeline " + pl.Name + ": " + pl.Title),
			ScheduleExpression:         jsii.String(pl.Schedule),
			ScheduleExpressionTimezone: jsii.String(pl.TimeZone),
			FlexibleTimeWindow:         &awsscheduler.CfnSchedule_FlexibleTimeWindowProperty{Mode: jsii.String("OFF")},
			State:                      jsii.String("ENABLED"),
			Target: &awsscheduler.CfnSchedule_TargetProperty{
				Arn:     r.NightlyReport.Function.FunctionArn(),
				RoleArn: r.SchedulerRole.RoleArn(),
				Input:   jsii.String(string(input)),
				// A rerun of the same date submits nothing, so retries are safe.
				RetryPolicy:      &awsscheduler.CfnSchedule_RetryPolicyProperty{MaximumRetryAttempts: jsii.Number(3), MaximumEventAgeInSeconds: jsii.Number(3600)},
				DeadLetterConfig: &awsscheduler.CfnSchedule_DeadLetterConfigProperty{Arn: r.NightlyReport.DLQ.QueueArn()},
			},
		})
		r.Schedules = append(r.Schedules, sch)
	}
}
