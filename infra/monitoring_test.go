package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
)

func webhookSecretID(t *testing.T, tpl obj) string {
	t.Helper()
	id, _ := oneResource(t, tpl, "AWS::SecretsManager::Secret", "NotificationsWebhookSecret")
	return id
}

// TestDashboardAndMetricAlarms: the dashboard is built from the EMF metrics
// of this stack's namespace, and the metric alarms (failed-job rate, stuck
// jobs per provider, throttles, Lambda errors per function) notify the one
// alarm topic.
func TestDashboardAndMetricAlarms(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		t.Run(sx.settings.StackName, func(t *testing.T) {
			tpl := sx.json
			ns := MetricsNamespace(sx.settings.StackName)
			topicID, _ := oneResource(t, tpl, "AWS::SNS::Topic", "AlarmsTopic")
			_, dash := oneResource(t, tpl, "AWS::CloudWatch::Dashboard", "MonitoringDashboard")
			body := flatten(props(dash)["DashboardBody"])
			for _, name := range []string{metrics.JobsFinished, metrics.RecordsSucceeded, metrics.RecordsFailed, metrics.InputTokens,
				metrics.OutputTokens, metrics.CostUSD, metrics.QueueWaitSeconds, metrics.EndToEndSeconds, metrics.PromptCacheHitRatio,
				metrics.EventLagSeconds, metrics.IngestRecordsPerSecond, metrics.ReconcilerRecoveries, metrics.Throttles,
				metrics.OldestInFlightSeconds, "Errors"} {
				if !strings.Contains(body, name) {
					t.Errorf("dashboard shows no %s", name)
				}
			}
			if !strings.Contains(body, ns) {
				t.Errorf("dashboard does not search namespace %s", ns)
			}

			alarms := resources(tpl, "AWS::CloudWatch::Alarm")
			byPrefix := func(prefix string) []obj {
				var out []obj
				for id, a := range alarms {
					if strings.HasPrefix(id, prefix) {
						out = append(out, a)
					}
				}
				return out
			}
			notifies := func(what string, a obj) {
				if acts := strs(props(a)["AlarmActions"]); len(acts) != 1 || acts[0] != "<"+topicID+">" {
					t.Errorf("%s alarm actions %v, want the alarm topic", what, acts)
				}
			}
			rate := byPrefix("MonitoringFailedJobRate")
			if len(rate) != 1 {
				t.Fatalf("%d failed-job rate alarms, want 1", len(rate))
			}
			notifies("failed-job rate", rate[0])
			rp := props(rate[0])
			if rp["Threshold"] != float64(FailedJobRatePercent) {
				t.Errorf("failed-job rate threshold %v", rp["Threshold"])
			}
			mq, _ := json.Marshal(rp["Metrics"])
			for _, st := range []string{"completed", "partially_completed", "failed", "cancelled", "expired"} {
				if !strings.Contains(string(mq), `"Value":"`+st+`"`) {
					t.Errorf("failed-job rate does not count status %s: %s", st, mq)
				}
			}
			if !strings.Contains(string(mq), `100*FILL(failed,0)/(`) || !strings.Contains(string(mq), ns) {
				t.Errorf("failed-job rate expression: %s", mq)
			}
			for prov, hours := range stuckAfterHours {
				st := byPrefix("MonitoringStuckJobs" + prov)
				if len(st) != 1 {
					t.Fatalf("%d stuck-job alarms for %s, want 1", len(st), prov)
				}
				notifies("stuck "+prov, st[0])
				p := props(st[0])
				if p["MetricName"] != metrics.OldestInFlightSeconds || p["Namespace"] != ns || p["Threshold"] != hours*3600 || p["Statistic"] != "Maximum" {
					t.Errorf("stuck %s alarm: %v %v %v %v", prov, p["MetricName"], p["Namespace"], p["Threshold"], p["Statistic"])
				}
			}
			th := byPrefix("MonitoringThrottles")
			if len(th) != 1 {
				t.Fatalf("%d throttle alarms, want 1", len(th))
			}
			notifies("throttles", th[0])
			if p := props(th[0]); p["MetricName"] != metrics.Throttles || fmt.Sprint(p["Dimensions"]) == "" || p["EvaluationPeriods"] != 3.0 {
				t.Errorf("throttles alarm %v", p)
			}
			// Every function has an errors alarm on the topic (the reconciler's is its own, older one).
			fns := 0
			for id, a := range alarms {
				p := props(a)
				if p["MetricName"] != "Errors" || p["Namespace"] != "AWS/Lambda" {
					continue
				}
				fns++
				if !strings.HasPrefix(id, "Reconciler") {
					notifies(id, a)
				}
			}
			if want := len(resources(tpl, "AWS::Lambda::Function")); fns < want-1 || fns > want {
				t.Errorf("%d Lambda errors alarms, want one per function (%d functions, some may be CDK helpers)", fns, want)
			}
		})
	}
}

// TestWebhookSecret: one generated master secret, read only by nightly-report
// (the Job Completed consumer) and mcp (get_webhook_secret derives each
// owner's secret), which are told where it is; the mcp function knows the
// notification topic for notify.sns.
func TestWebhookSecret(t *testing.T) {
	tpl := fx.main.json
	id := webhookSecretID(t, tpl)
	_, sec := oneResource(t, tpl, "AWS::SecretsManager::Secret", "NotificationsWebhookSecret")
	if g, ok := props(sec)["GenerateSecretString"].(obj); !ok || g["PasswordLength"] != 64.0 {
		t.Errorf("secret is not generated with 64 characters: %v", props(sec))
	}
	readers := []string{}
	for roleID := range resources(tpl, "AWS::IAM::Role") {
		for a, res := range actionResources(roleStatements(t, tpl, roleID)) {
			if a == "secretsmanager:GetSecretValue" && strings.Contains(strings.Join(res, ","), "<"+id+">") {
				readers = append(readers, roleID)
			}
		}
	}
	sort.Strings(readers)
	if len(readers) != 2 || !strings.HasPrefix(readers[0], "FunctionsMcp") || !strings.HasPrefix(readers[1], "ReportsNightlyReport") {
		t.Errorf("roles reading the webhook secret %v, want only mcp's and nightly-report's", readers)
	}
	env := func(prefix string) obj {
		_, fn := oneResource(t, tpl, "AWS::Lambda::Function", prefix)
		return props(fn)["Environment"].(obj)["Variables"].(obj)
	}
	if v := flatten(env("ReportsNightlyReportFunction")[config.EnvWebhookSecretARN]); v != "<"+id+">" {
		t.Errorf("nightly-report %s = %s, want the secret", config.EnvWebhookSecretARN, v)
	}
	if v := flatten(env("FunctionsMcpFunction")[config.EnvWebhookSecretARN]); v != "<"+id+">" {
		t.Errorf("mcp %s = %s, want the secret", config.EnvWebhookSecretARN, v)
	}
	topicID, _ := oneResource(t, tpl, "AWS::SNS::Topic", "ReportsTopic")
	if v := flatten(env("FunctionsMcpFunction")[config.EnvReportTopic]); v != "<"+topicID+">" {
		t.Errorf("mcp %s = %s, want the reports topic", config.EnvReportTopic, v)
	}
	if out, ok := tpl["Outputs"].(obj)["WebhookSecretArn"].(obj); !ok || flatten(out["Value"]) != "<"+id+">" {
		t.Errorf("output WebhookSecretArn = %v, want the secret", out)
	}
	if v := env("FunctionsIngestFunction")[config.EnvMetricsNamespace]; v != MetricsNamespace(fx.main.settings.StackName) {
		t.Errorf("ingest %s = %v", config.EnvMetricsNamespace, v)
	}
}
