package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
)

// Alarm thresholds of the metrics the functions emit (shared/metrics).
const (
	// FailedJobRatePercent: over a quarter of the jobs that ended in an hour failed.
	FailedJobRatePercent = 25
	// ThrottlesPer5Min for 3 periods in a row: on-demand runs are throttled
	// steadily (retried with backoff, so jobs slow down rather than fail).
	ThrottlesPer5Min = 100
	// LambdaErrorsPer5Min: a function's invocations failing (events are
	// retried, and the DLQ alarms catch what finally fails).
	LambdaErrorsPer5Min = 5
)

// stuckAfterHours is when a job in flight counts as stuck, by provider: the
// provider's own end (Bedrock's default 72 h job timeout; Anthropic's 24 h
// batch expiry) plus 6 hours for output and ingest.
var stuckAfterHours = map[string]float64{job.ProviderBedrock: 72 + 6, job.ProviderAnthropic: 24 + 6}

// MonitoringProps name what the dashboard shows and the alarms watch.
type MonitoringProps struct {
	Settings Settings
	// Namespace is the metrics' CloudWatch namespace (the functions' MCPBATCH_METRICS_NAMESPACE).
	Namespace string
	Functions []*GoFunction
	// HasErrorAlarm lists functions that already have an errors alarm.
	HasErrorAlarm []*GoFunction
	Alarms        *Alarms
}

// Monitoring is the dashboard and the alarms on the suite's metrics.
type Monitoring struct {
	Scope         constructs.Construct
	Dashboard     awscloudwatch.Dashboard
	FailedJobRate awscloudwatch.Alarm
	StuckJobs     []awscloudwatch.Alarm
	Throttles     awscloudwatch.Alarm
	LambdaErrors  []awscloudwatch.Alarm
}

// MetricsNamespace is the namespace of a stack's EMF metrics: per stack, so
// two stacks in one account do not mix their figures.
func MetricsNamespace(stackName string) string { return metrics.DefaultNamespace + "/" + stackName }

// NewMonitoring builds the CloudWatch dashboard from the EMF metrics and the
// alarms (failed-job rate, stuck jobs by provider, throttles, Lambda errors per
// function), all notifying the stack's alarm topic.
func NewMonitoring(scope constructs.Construct, id string, p *MonitoringProps) *Monitoring {
	c := constructs.NewConstruct(scope, jsii.String(id))
	m := &Monitoring{Scope: c}
	ns := p.Namespace
	action := awscloudwatchactions.NewSnsAction(p.Alarms.Topic)
	metric := func(name, stat string, period awscdk.Duration, dims map[string]*string) awscloudwatch.Metric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(ns), MetricName: jsii.String(name),
			Statistic: jsii.String(stat), Period: period, DimensionsMap: &dims})
	}
	alarm := func(id, desc string, mt awscloudwatch.IMetric, threshold, periods float64) awscloudwatch.Alarm {
		a := awscloudwatch.NewAlarm(c, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(desc),
			Metric:             mt,
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(periods),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		a.AddAlarmAction(action)
		return a
	}

	// Failed-job rate: the by-Status roll-up of JobsFinished, every terminal status.
	hour := awscdk.Duration_Hours(jsii.Number(1))
	using := map[string]awscloudwatch.IMetric{}
	terms := ""
	for i, st := range []job.Status{job.StatusCompleted, job.StatusPartiallyCompleted, job.StatusFailed, job.StatusCancelled, job.StatusExpired} {
		key := fmt.Sprintf("s%d", i)
		if st == job.StatusFailed {
			key = "failed"
		}
		using[key] = metric(metrics.JobsFinished, "Sum", hour, map[string]*string{metrics.DimStatus: jsii.String(string(st))})
		if terms != "" {
			terms += "+"
		}
		terms += "FILL(" + key + ",0)"
	}
	rate := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("100*FILL(failed,0)/(" + terms + ")"), UsingMetrics: &using, Period: hour, Label: jsii.String("failed jobs %"),
	})
	m.FailedJobRate = alarm("FailedJobRate", fmt.Sprintf("mcpbatch: %d%% or more of the jobs that ended in the last hour failed (JobsFinished by Status)", FailedJobRatePercent),
		rate, FailedJobRatePercent, 1)

	// Stuck jobs: the reconciler's oldest-in-flight age, per provider.
	quarter := awscdk.Duration_Minutes(jsii.Number(15))
	for _, prov := range []string{job.ProviderBedrock, job.ProviderAnthropic} {
		h := stuckAfterHours[prov]
		m.StuckJobs = append(m.StuckJobs, alarm("StuckJobs-"+prov,
			fmt.Sprintf("mcpbatch: a %s job has been in flight over %.0f h (OldestInFlightSeconds from the reconciler): look it up with list_jobs", prov, h),
			metric(metrics.OldestInFlightSeconds, "Maximum", quarter, map[string]*string{metrics.DimProvider: jsii.String(prov)}), h*3600, 1))
	}

	// Throttles: the by-Provider roll-up, sustained.
	five := awscdk.Duration_Minutes(jsii.Number(5))
	m.Throttles = alarm("Throttles", fmt.Sprintf("mcpbatch: on-demand calls throttled %d+ times per 5 minutes for 15 minutes (raise the model's quota or lower concurrency)", ThrottlesPer5Min),
		metric(metrics.Throttles, "Sum", five, map[string]*string{metrics.DimProvider: jsii.String(job.ProviderBedrock)}), ThrottlesPer5Min, 3)

	// Lambda errors, per function (the reconciler has its own).
	covered := map[*GoFunction]bool{}
	for _, g := range p.HasErrorAlarm {
		covered[g] = true
	}
	var errMetrics []awscloudwatch.IMetric
	for _, g := range p.Functions {
		errs := g.Function.MetricErrors(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")})
		errMetrics = append(errMetrics, g.Function.MetricErrors(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum"), Label: jsii.String(g.Name)}))
		if covered[g] {
			continue
		}
		al := awscloudwatch.NewAlarm(g.Scope, jsii.String("Errors"), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(fmt.Sprintf("mcpbatch %s: %d+ failed invocations in 5 minutes (see its logs)", g.Name, LambdaErrorsPer5Min)),
			Metric:             errs,
			Threshold:          jsii.Number(LambdaErrorsPer5Min),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		al.AddAlarmAction(action)
		m.LambdaErrors = append(m.LambdaErrors, al)
	}

	m.Dashboard = awscloudwatch.NewDashboard(c, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName:   jsii.String(p.Settings.StackName),
		DefaultInterval: awscdk.Duration_Days(jsii.Number(7)),
	})
	search := func(label, dims, name, stat string, period float64) awscloudwatch.IMetric {
		return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf(`SEARCH('{%s,%s} MetricName="%s"', '%s', %.0f)`, ns, dims, name, stat, period)),
			Label:      jsii.String(label), Period: awscdk.Duration_Seconds(jsii.Number(period)),
		})
	}
	graph := func(title string, left []awscloudwatch.IMetric, stacked bool) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Left: &left, Width: jsii.Number(8), Height: jsii.Number(6), Stacked: jsii.Bool(stacked)})
	}
	pm := "Model,Provider"
	var alarms []awscloudwatch.Alarm
	alarms = append(alarms, m.FailedJobRate, m.Throttles, p.Alarms.FailedJobs)
	alarms = append(alarms, m.StuckJobs...)
	alarms = append(alarms, p.Alarms.DLQAlarms...)
	alarms = append(alarms, m.LambdaErrors...)
	m.Dashboard.AddWidgets(awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
		Markdown: jsii.String("# mcpbatch " + p.Settings.StackName + "\nJobs, records, tokens and cost from the functions' Embedded Metric Format lines " +
			"(namespace `" + ns + "`). Per-job detail: the web console (`/console` on the MCP URL) or `list_jobs`."),
		Width: jsii.Number(24), Height: jsii.Number(2),
	}))
	m.Dashboard.AddWidgets(
		graph("Jobs finished by status", []awscloudwatch.IMetric{search("", "Status", metrics.JobsFinished, "Sum", 3600)}, true),
		graph("Records succeeded / failed", []awscloudwatch.IMetric{
			search("succeeded", pm, metrics.RecordsSucceeded, "Sum", 3600), search("failed", pm, metrics.RecordsFailed, "Sum", 3600)}, false),
		graph("Cost (USD, list prices)", []awscloudwatch.IMetric{search("", pm, metrics.CostUSD, "Sum", 86400)}, true),
	)
	m.Dashboard.AddWidgets(
		graph("Tokens", []awscloudwatch.IMetric{search("input", pm, metrics.InputTokens, "Sum", 3600), search("output", pm, metrics.OutputTokens, "Sum", 3600)}, false),
		graph("Queue wait and end-to-end latency (p90, s)", []awscloudwatch.IMetric{
			search("queue wait", pm, metrics.QueueWaitSeconds, "p90", 3600), search("end to end", pm, metrics.EndToEndSeconds, "p90", 3600)}, false),
		graph("Prompt-cache hit ratio", []awscloudwatch.IMetric{search("", pm, metrics.PromptCacheHitRatio, "Average", 3600)}, false),
	)
	m.Dashboard.AddWidgets(
		graph("Ingest: event lag (s) and records/s", []awscloudwatch.IMetric{
			search("lag", "Provider", metrics.EventLagSeconds, "Maximum", 300), search("records/s", "Provider", metrics.IngestRecordsPerSecond, "Average", 300)}, false),
		graph("Reconciler: recoveries by kind, oldest job in flight (s)", []awscloudwatch.IMetric{
			search("", "Kind", metrics.ReconcilerRecoveries, "Sum", 3600), search("oldest", "Provider", metrics.OldestInFlightSeconds, "Maximum", 900)}, false),
		graph("Throttles", []awscloudwatch.IMetric{search("", "Provider", metrics.Throttles, "Sum", 300)}, true),
	)
	m.Dashboard.AddWidgets(
		awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String("Lambda errors by function"), Left: &errMetrics, Width: jsii.Number(12), Height: jsii.Number(6)}),
		awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{Title: jsii.String("Alarms"), Alarms: alarmRefs(alarms), Width: jsii.Number(12), Height: jsii.Number(6)}),
	)
	awscdk.NewCfnOutput(awscdk.Stack_Of(c), jsii.String("DashboardName"), &awscdk.CfnOutputProps{
		Description: jsii.String("CloudWatch dashboard of the suite's metrics"), Value: m.Dashboard.DashboardName(),
	})
	return m
}

func alarmRefs(as []awscloudwatch.Alarm) *[]interfacesawscloudwatch.IAlarmRef {
	refs := make([]interfacesawscloudwatch.IAlarmRef, 0, len(as))
	for _, a := range as {
		if a != nil {
			refs = append(refs, a)
		}
	}
	return &refs
}
