package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// Context keys of operations: the mcp function's concurrency cap and where alarms go.
const (
	// CtxMcpReservedConcurrency caps the mcp function in token mode (public URL); 0 leaves it unset.
	CtxMcpReservedConcurrency = "mcpReservedConcurrency"
	// CtxAlarmEmail subscribes one address to the alarm topic (empty: no subscription).
	CtxAlarmEmail = "alarmEmail"

	// DefaultMcpReservedConcurrency: 20 concurrent tool calls is plenty for a team, and bounds
	// what a flood of requests at the public URL can cost or take from the account's other functions.
	DefaultMcpReservedConcurrency = 20
	maxMcpReservedConcurrency     = 1000
)

// FailedJobFilterPattern matches the JSON log line the service writes when a job
// reaches a terminal state, for failed jobs: {"msg":"job finished","status":"failed",...}.
const FailedJobFilterPattern = `{ ($.msg = "job finished") && ($.status = "failed") }`

// emailPattern is a plain sanity check (one address, no spaces); SNS sends a confirmation mail.
var emailPattern = regexp.MustCompile(`^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$`)

// readOpsSettings reads the operations context keys into s.
func readOpsSettings(node constructs.Node, s *Settings) error {
	var errs []error
	switch v := node.TryGetContext(jsii.String(CtxMcpReservedConcurrency)).(type) {
	case nil:
	case float64:
		s.McpReservedConcurrency = int(v)
		if float64(int(v)) != v {
			errs = append(errs, fmt.Errorf("context %s %v: want a whole number 0..%d", CtxMcpReservedConcurrency, v, maxMcpReservedConcurrency))
		}
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			errs = append(errs, fmt.Errorf("context %s %q: want a whole number 0..%d", CtxMcpReservedConcurrency, v, maxMcpReservedConcurrency))
		}
		s.McpReservedConcurrency = n
	default:
		errs = append(errs, fmt.Errorf("context %s: want a whole number 0..%d, got %T", CtxMcpReservedConcurrency, maxMcpReservedConcurrency, v))
	}
	switch v := node.TryGetContext(jsii.String(CtxAlarmEmail)).(type) {
	case nil:
	case string:
		s.AlarmEmail = strings.TrimSpace(v)
	default:
		errs = append(errs, fmt.Errorf("context %s: want one email address, got %T", CtxAlarmEmail, v))
	}
	return errors.Join(errs...)
}

// validateOps checks the operations settings.
func (s Settings) validateOps() []error {
	var errs []error
	if s.McpReservedConcurrency < 0 || s.McpReservedConcurrency > maxMcpReservedConcurrency {
		errs = append(errs, fmt.Errorf("%s %d: want 0..%d (0: no reservation; the account must keep 100 unreserved)",
			CtxMcpReservedConcurrency, s.McpReservedConcurrency, maxMcpReservedConcurrency))
	}
	if s.AlarmEmail != "" && !emailPattern.MatchString(s.AlarmEmail) {
		errs = append(errs, fmt.Errorf("%s %q: want one email address (name@domain)", CtxAlarmEmail, s.AlarmEmail))
	}
	return errs
}

// mcpReservedConcurrency is the mcp function's ReservedConcurrentExecutions: set in
// token mode only, where the Function URL takes unsigned requests. Lambda refuses a
// reservation that leaves the account less than 100 unreserved
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html, read
// 2026-11-30), so a new account with a low quota deploys with -c mcpReservedConcurrency=0.
func mcpReservedConcurrency(s Settings) *float64 {
	if s.Auth != config.AuthToken || s.McpReservedConcurrency == 0 {
		return nil
	}
	return jsii.Number(float64(s.McpReservedConcurrency))
}

// newDLQAlarm is the alarm on a dead-letter queue holding any message.
func newDLQAlarm(scope constructs.Construct, q awssqs.IQueue, description string) awscloudwatch.Alarm {
	return awscloudwatch.NewAlarm(scope, jsii.String("DlqNotEmpty"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String(description),
		Metric: q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum"),
		}),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}

// AlarmsProps name what alarms watch.
type AlarmsProps struct {
	Settings Settings
	// Functions are all the suite's functions: their DLQs and log groups are watched.
	Functions []*GoFunction
	// Existing alarms (made elsewhere) that get the topic as their action.
	Existing []awscloudwatch.Alarm
	// HasDLQAlarm lists functions whose DLQ already has an alarm in Existing.
	HasDLQAlarm []*GoFunction
}

// Alarms is the stack's one alarm topic and the alarms that notify it.
type Alarms struct {
	Scope        constructs.Construct
	Key          awskms.Key
	Topic        awssns.Topic
	DLQAlarms    []awscloudwatch.Alarm
	FailedJobs   awscloudwatch.Alarm
	FailedMetric awscloudwatch.Metric
}

// NewAlarms creates the alarm topic (its own KMS key, TLS only, an optional email
// subscription), a not-empty alarm on every dead-letter queue, the failed-job count
// from the functions' logs with its alarm, and points every alarm at the topic.
func NewAlarms(scope constructs.Construct, id string, p *AlarmsProps) *Alarms {
	c := constructs.NewConstruct(scope, jsii.String(id))
	stack := awscdk.Stack_Of(c)
	a := &Alarms{Scope: c}

	// CloudWatch can publish to an encrypted topic only with a customer managed key whose
	// policy lets cloudwatch.amazonaws.com use it; the AWS managed alias/aws/sns cannot
	// (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services, read 2026-11-30).
	a.Key = awskms.NewKey(c, jsii.String("TopicKey"), &awskms.KeyProps{
		Description:       jsii.String("mcpbatch alarm topic"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_DESTROY,
	})
	fromAccount := map[string]interface{}{"StringEquals": map[string]interface{}{"aws:SourceAccount": stack.Account()}}
	a.Key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsEncrypt"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
		Resources:  jsii.Strings("*"),
		Conditions: &fromAccount,
	}), nil)
	a.Topic = awssns.NewTopic(c, jsii.String("Topic"), &awssns.TopicProps{
		DisplayName: jsii.String("mcpbatch alarms"),
		MasterKey:   a.Key,
		EnforceSSL:  jsii.Bool(true),
	})
	a.Topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  &[]*string{a.Topic.TopicArn()},
		Conditions: &fromAccount,
	}))
	if p.Settings.AlarmEmail != "" {
		a.Topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(p.Settings.AlarmEmail), nil))
	}
	action := awscloudwatchactions.NewSnsAction(a.Topic)

	covered := map[*GoFunction]bool{}
	for _, g := range p.HasDLQAlarm {
		covered[g] = true
	}
	for _, g := range p.Functions {
		if g.DLQ == nil || covered[g] {
			continue
		}
		al := newDLQAlarm(g.Scope, g.DLQ, "mcpbatch "+g.Name+": events gave up (dead-letter queue not empty); inspect and redrive")
		al.AddAlarmAction(action)
		a.DLQAlarms = append(a.DLQAlarms, al)
	}

	// Every function that can end a job (submit refused, provider failure, ingest, runs,
	// reconciler) logs it; one metric sums them.
	ns, name := "mcpbatch/"+p.Settings.StackName, "FailedJobs"
	for _, g := range p.Functions {
		awslogs.NewMetricFilter(g.Scope, jsii.String("FailedJobsFilter"), &awslogs.MetricFilterProps{
			LogGroup:        g.LogGroup,
			FilterPattern:   awslogs.FilterPattern_Literal(jsii.String(FailedJobFilterPattern)),
			MetricNamespace: jsii.String(ns),
			MetricName:      jsii.String(name),
			MetricValue:     jsii.String("1"),
		})
	}
	a.FailedMetric = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(ns), MetricName: jsii.String(name),
		Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5)),
	})
	a.FailedJobs = awscloudwatch.NewAlarm(c, jsii.String("FailedJobs"), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String("mcpbatch jobs failed (log lines \"job finished\" with status failed): see the functions' logs"),
		Metric:             a.FailedMetric,
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	a.FailedJobs.AddAlarmAction(action)
	for _, al := range p.Existing {
		al.AddAlarmAction(action)
	}
	return a
}
