package main

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// Context keys of the reconciler and the Anthropic provider.
const (
	CtxReconcileMinutes = "reconcileMinutes"
	CtxBedrockQuota     = "bedrockQuota"
	CtxStaleMinutes     = "staleMinutes"

	FnReconciler = "reconciler"

	DefaultReconcileMinutes = 5
	DefaultStaleMinutes     = 15
)

// ReconcilerSettings are the reconciler's knobs, read from context.
type ReconcilerSettings struct {
	EveryMinutes int // schedule, 1..60
	BedrockQuota int // per-model submitted + in-progress Bedrock jobs, 1..1000
	StaleMinutes int // a Bedrock job without an event this long is polled, 1..1440
}

// ReconcilerSettingsFromContext reads and checks the reconciler's context keys.
func ReconcilerSettingsFromContext(node constructs.Node) (ReconcilerSettings, error) {
	s := ReconcilerSettings{EveryMinutes: DefaultReconcileMinutes, BedrockQuota: 20, StaleMinutes: DefaultStaleMinutes}
	for _, k := range []struct {
		key      string
		dst      *int
		min, max int
	}{
		{CtxReconcileMinutes, &s.EveryMinutes, 1, 60},
		{CtxBedrockQuota, &s.BedrockQuota, 1, 1000},
		{CtxStaleMinutes, &s.StaleMinutes, 1, 1440},
	} {
		n, set, err := wholeContext(node, k.key, k.min, k.max)
		if err != nil {
			return s, err
		}
		if !set {
			continue
		}
		*k.dst = n
	}
	return s, nil
}

// wholeContext reads context key as a whole number in min..max (set is
// false when the key is absent).
func wholeContext(node constructs.Node, key string, min, max int) (n int, set bool, err error) {
	switch v := node.TryGetContext(jsii.String(key)).(type) {
	case nil:
		return 0, false, nil
	case float64:
		n = int(v)
		if float64(n) != v {
			n = -1
		}
	case string:
		if n, err = strconv.Atoi(v); err != nil {
			n = -1
		}
	default:
		n = -1
	}
	if n < min || n > max {
		return 0, true, fmt.Errorf("context %s: want a whole number %d..%d, got %v", key, min, max, node.TryGetContext(jsii.String(key)))
	}
	return n, true, nil
}

// ReconcilerProps connect the reconciler to the rest of the stack.
type ReconcilerProps struct {
	Settings   Settings
	Reconciler ReconcilerSettings
	Data       *Data
	Bedrock    *BedrockRole
	Bus        awsevents.EventBus
	Functions  *Functions
	Anthropic  *Anthropic
}

// Reconciler is the scheduled backstop (Anthropic polling, lost Bedrock events,
// the quota queue) and the alarm on its errors.
type Reconciler struct {
	Scope    constructs.Construct
	Function *GoFunction
	Schedule awsevents.Rule
	Alarm    awscloudwatch.Alarm
	DLQAlarm awscloudwatch.Alarm
}

// NewReconciler creates the reconciler function on its schedule and its
// permissions; it reads the Anthropic key like the other Anthropic callers.
func NewReconciler(scope constructs.Construct, id string, p *ReconcilerProps) *Reconciler {
	c := constructs.NewConstruct(scope, jsii.String(id))
	s := p.Settings
	r := &Reconciler{Scope: c}

	env := p.Functions.EnvWith(map[string]*string{
		config.EnvBedrockQuota: jsii.String(strconv.Itoa(p.Reconciler.BedrockQuota)),
		config.EnvStaleMinutes: jsii.String(strconv.Itoa(p.Reconciler.StaleMinutes)),
	})
	r.Function = NewGoFunction(c, "Reconciler", &GoFunctionProps{
		Name:        FnReconciler,
		Description: "mcpbatch reconciler: Anthropic batches, lost Bedrock events, quota queue",
		AssetDir:    s.AssetDir, Env: env, LogLevel: s.LogLevel,
		// Bounded work per run (1,000 jobs per provider); a run must end before the next one starts.
		Timeout:  awscdk.Duration_Minutes(jsii.Number(float64(min(p.Reconciler.EveryMinutes, 5)))),
		MemoryMB: 512,
		Async:    true,
	})
	p.Anthropic.Grant(r.Function)
	// mcp submits too, under the same quota.
	p.Functions.MCP.Function.AddEnvironment(jsii.String(config.EnvBedrockQuota), jsii.String(strconv.Itoa(p.Reconciler.BedrockQuota)), nil)

	r.Schedule = awsevents.NewRule(c, jsii.String("Schedule"), &awsevents.RuleProps{
		Description: jsii.String(fmt.Sprintf("every %d minutes -> reconciler", p.Reconciler.EveryMinutes)),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(float64(p.Reconciler.EveryMinutes)))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(r.Function.Function, &awseventstargets.LambdaFunctionProps{
			DeadLetterQueue: r.Function.DLQ,
			// A missed run is replaced by the next one: no long retry chain.
			RetryAttempts: jsii.Number(2),
			MaxEventAge:   awscdk.Duration_Minutes(jsii.Number(float64(p.Reconciler.EveryMinutes))),
		})},
	})

	// A run returns an error when any job could not be reconciled: alarm on the first.
	r.Alarm = awscloudwatch.NewAlarm(c, jsii.String("Errors"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String("mcpbatch reconciler runs failed: jobs may hang (see the reconciler's logs)"),
		Metric: r.Function.Function.MetricErrors(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(float64(p.Reconciler.EveryMinutes))), Statistic: jsii.String("Sum"),
		}),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	r.DLQAlarm = awscloudwatch.NewAlarm(c, jsii.String("DlqNotEmpty"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String("mcpbatch reconciler invocations gave up (dead-letter queue not empty)"),
		Metric: r.Function.DLQ.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum"),
		}),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	grantReconciler(r, p)
	return r
}

// grantReconciler: the reconciler polls and submits Bedrock jobs, reads request
// files to submit Anthropic batches, moves job items and announces output; mcp
// and ingest stores streamed Anthropic results under output/.
func grantReconciler(r *Reconciler, p *ReconcilerProps) {
	stack := awscdk.Stack_Of(r.Scope)
	d := p.Data
	jobs := []*string{JobArnPattern(stack)}
	g := r.Function
	d.GrantStore(g)
	g.Role.AddToPrincipalPolicy(allow("PutProjectEvents", []string{"events:PutEvents"}, []*string{p.Bus.EventBusArn()}, nil))
	g.Role.AddToPrincipalPolicy(allow("ReadInput", []string{"s3:GetObject"}, d.ObjectArns(PrefixInput), nil))
	// SageMaker async jobs whose notification was lost are settled from their output or failure object.
	g.Role.AddToPrincipalPolicy(allow("ProbeSageMakerResults", []string{"s3:GetObject"},
		d.ObjectArns(config.SageMakerOutputPrefix, config.SageMakerFailurePrefix), nil))
	// Without ListBucket S3 answers GetObject on a missing key with 403 AccessDenied instead of
	// 404 NoSuchKey, and a job whose output is not there yet would look like a permission error.
	g.Role.AddToPrincipalPolicy(allow("ListSageMakerResults", []string{"s3:ListBucket"}, []*string{d.Bucket.BucketArn()},
		map[string]interface{}{"StringLike": map[string]interface{}{"s3:prefix": jsii.Strings(
			config.SageMakerOutputPrefix+"*", config.SageMakerFailurePrefix+"*")}}))
	createOn := append(append([]*string{}, jobs...), p.Bedrock.ModelArns...)
	g.Role.AddToPrincipalPolicy(allow("CreateBatchJobs", []string{"bedrock:CreateModelInvocationJob"}, createOn, nil))
	g.Role.AddToPrincipalPolicy(allow("TagBatchJobs", []string{"bedrock:TagResource"}, jobs,
		map[string]interface{}{"ForAllValues:StringLike": map[string]interface{}{"aws:TagKeys": jsii.Strings("mcpbatch:*")}}))
	// Stop: a part whose deadline needs its records on demand, or a second job made for one part.
	g.Role.AddToPrincipalPolicy(allow("ManageBatchJobs", []string{"bedrock:GetModelInvocationJob", "bedrock:StopModelInvocationJob"}, jobs, nil))
	g.Role.AddToPrincipalPolicy(allow("PassBedrockRole", []string{"iam:PassRole"},
		[]*string{p.Bedrock.Role.RoleArn()},
		map[string]interface{}{"StringEquals": map[string]interface{}{"iam:PassedToService": bedrockPrincipal}}))

	p.Functions.Ingest.Role.AddToPrincipalPolicy(allow("StoreAnthropicResults", []string{"s3:PutObject", "s3:AbortMultipartUpload"},
		d.ObjectArns(PrefixOutput), nil))
}

// addReconcilerNagSuppressions records the reconciler's accepted findings.
func (r *Reconciler) addNagSuppressions() {
	suppressWildcards(r.Function.Role, wildObjects, wildJobs, wildModelRegions, wildSageMakerObjects)
	suppress(r.Function.DLQ, "AwsSolutions-SQS3",
		"This queue is itself the dead-letter queue of the reconciler function (schedule target DLQ and "+
			"Lambda onFailure destination); a DLQ of a DLQ adds nothing.")
}
