package main

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

func TestOpsSettings(t *testing.T) {
	cases := []struct {
		name        string
		ctx         map[string]interface{}
		concurrency int
		email       string
		wantErr     string
	}{
		{name: "defaults", concurrency: DefaultMcpReservedConcurrency},
		{name: "cli string", ctx: map[string]interface{}{CtxMcpReservedConcurrency: "35"}, concurrency: 35},
		{name: "json number", ctx: map[string]interface{}{CtxMcpReservedConcurrency: float64(50)}, concurrency: 50},
		{name: "zero leaves it unset", ctx: map[string]interface{}{CtxMcpReservedConcurrency: "0"}, concurrency: 0},
		{name: "negative", ctx: map[string]interface{}{CtxMcpReservedConcurrency: "-1"}, wantErr: CtxMcpReservedConcurrency},
		{name: "too many", ctx: map[string]interface{}{CtxMcpReservedConcurrency: "1001"}, wantErr: "0..1000"},
		{name: "not a number", ctx: map[string]interface{}{CtxMcpReservedConcurrency: "lots"}, wantErr: CtxMcpReservedConcurrency},
		{name: "fraction", ctx: map[string]interface{}{CtxMcpReservedConcurrency: 2.5}, wantErr: CtxMcpReservedConcurrency},
		{name: "alarm email", ctx: map[string]interface{}{CtxAlarmEmail: " ops@example.com "}, concurrency: DefaultMcpReservedConcurrency, email: "ops@example.com"},
		{name: "empty alarm email is none", ctx: map[string]interface{}{CtxAlarmEmail: ""}, concurrency: DefaultMcpReservedConcurrency},
		{name: "bad alarm email", ctx: map[string]interface{}{CtxAlarmEmail: "ops"}, wantErr: CtxAlarmEmail},
		{name: "two alarm emails", ctx: map[string]interface{}{CtxAlarmEmail: "a@example.com,b@example.com"}, wantErr: CtxAlarmEmail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := awscdk.NewApp(&awscdk.AppProps{Context: &tc.ctx})
			s, err := SettingsFromContext(app.Node())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.McpReservedConcurrency != tc.concurrency || s.AlarmEmail != tc.email {
				t.Fatalf("concurrency %d email %q, want %d %q", s.McpReservedConcurrency, s.AlarmEmail, tc.concurrency, tc.email)
			}
		})
	}
}

// In token mode the Function URL is public: reserved concurrency bounds what a
// flood of (even unauthenticated) requests can cost and take from other functions.
func TestMcpReservedConcurrency(t *testing.T) {
	tok := tokenMode(t)
	_, mcp := oneResource(t, tok.json, "AWS::Lambda::Function", "FunctionsMcpFunction")
	if got := props(mcp)["ReservedConcurrentExecutions"]; got != float64(DefaultMcpReservedConcurrency) {
		t.Errorf("token mode: mcp ReservedConcurrentExecutions = %v, want %d", got, DefaultMcpReservedConcurrency)
	}
	_, iam := oneResource(t, fx.main.json, "AWS::Lambda::Function", "FunctionsMcpFunction")
	if got, ok := props(iam)["ReservedConcurrentExecutions"]; ok {
		t.Errorf("iam mode (SigV4 URL): mcp ReservedConcurrentExecutions = %v, want unset", got)
	}
	for _, tc := range []struct {
		auth string
		n    int
		want bool
	}{{"token", 20, true}, {"token", 0, false}, {"iam", 20, false}} {
		s := Settings{Auth: tc.auth, McpReservedConcurrency: tc.n}
		if got := mcpReservedConcurrency(s); (got != nil) != tc.want || (got != nil && *got != float64(tc.n)) {
			t.Errorf("auth %s n %d: reserved %v, want set=%v", tc.auth, tc.n, got, tc.want)
		}
	}
}

func TestAlarms(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		t.Run(sx.settings.StackName, func(t *testing.T) { checkAlarms(t, sx.json) })
	}
	t.Run("email subscription from context", func(t *testing.T) {
		tok := tokenMode(t)
		topicID, _ := oneResource(t, tok.json, "AWS::SNS::Topic", "AlarmsTopic")
		var emails []string
		for _, sub := range resources(tok.json, "AWS::SNS::Subscription") {
			p := props(sub)
			if p["Protocol"] == "email" {
				emails = append(emails, flatten(p["Endpoint"]))
				if flatten(p["TopicArn"]) != "<"+topicID+">" {
					t.Errorf("email subscribes to %s, want the alarm topic", flatten(p["TopicArn"]))
				}
			}
		}
		if len(emails) != 1 || emails[0] != tokenAlarmEmail {
			t.Errorf("email subscriptions %v, want [%s]", emails, tokenAlarmEmail)
		}
		for _, sub := range resources(fx.main.json, "AWS::SNS::Subscription") {
			if props(sub)["Protocol"] == "email" {
				t.Errorf("an email subscription without alarmEmail: %v", props(sub))
			}
		}
	})
}

func checkAlarms(t *testing.T, tpl obj) {
	topicID, topic := oneResource(t, tpl, "AWS::SNS::Topic", "AlarmsTopic")
	topicRef := "<" + topicID + ">"

	t.Run("one encrypted topic CloudWatch may publish to", func(t *testing.T) {
		key := flatten(props(topic)["KmsMasterKeyId"])
		keyID := strings.TrimSuffix(strings.TrimPrefix(key, "<"), ".Arn>")
		k, ok := resources(tpl, "AWS::KMS::Key")[keyID]
		if !ok {
			t.Fatalf("alarm topic key %s is not a customer managed key of the stack (CloudWatch cannot use alias/aws/sns)", key)
		}
		if props(k)["EnableKeyRotation"] != true {
			t.Error("alarm key rotation off")
		}
		cw := false
		for _, st := range props(k)["KeyPolicy"].(obj)["Statement"].([]interface{}) {
			m := st.(obj)
			if flatten(m["Principal"].(obj)["Service"]) == "cloudwatch.amazonaws.com" {
				acts := strs(m["Action"])
				sort.Strings(acts)
				cw = strings.Join(acts, ",") == "kms:Decrypt,kms:GenerateDataKey*" && m["Condition"] != nil
			}
		}
		if !cw {
			t.Error("alarm key policy does not let cloudwatch.amazonaws.com (this account) encrypt for the topic")
		}
		ssl, publish := false, false
		for _, pol := range resources(tpl, "AWS::SNS::TopicPolicy") {
			if !slices.Contains(strs(props(pol)["Topics"]), topicRef) {
				continue
			}
			for _, st := range props(pol)["PolicyDocument"].(obj)["Statement"].([]interface{}) {
				m := st.(obj)
				if m["Effect"] == "Deny" && strings.Contains(flatten(m["Condition"]), "aws:SecureTransport") {
					ssl = true
				}
				if m["Effect"] == "Allow" && flatten(m["Action"]) == "sns:Publish" {
					if p, ok := m["Principal"].(obj); ok && flatten(p["Service"]) == "cloudwatch.amazonaws.com" && m["Condition"] != nil {
						publish = true
					}
				}
			}
		}
		if !ssl || !publish {
			t.Errorf("alarm topic policy: enforce SSL %v, CloudWatch may publish %v", ssl, publish)
		}
		if n := len(named(resources(tpl, "AWS::SNS::Topic"), "Alarms")); n != 1 {
			t.Errorf("%d alarm topics, want 1", n)
		}
	})

	alarms := resources(tpl, "AWS::CloudWatch::Alarm")
	t.Run("every alarm notifies the topic", func(t *testing.T) {
		if len(alarms) == 0 {
			t.Fatal("no alarms")
		}
		for id, a := range alarms {
			if got := strs(props(a)["AlarmActions"]); len(got) != 1 || got[0] != topicRef {
				t.Errorf("%s: AlarmActions %v, want [%s]", id, got, topicRef)
			}
		}
	})
	t.Run("every dead-letter queue alarms when not empty", func(t *testing.T) {
		queues := resources(tpl, "AWS::SQS::Queue")
		if len(queues) < 6 {
			t.Fatalf("%d queues, want the six DLQs at least", len(queues))
		}
		for qid := range queues {
			if strings.HasPrefix(qid, "FanoutQueue") {
				continue // the validation queue holds work, not failures (its DLQ is watched)
			}
			n := 0
			for _, a := range alarms {
				p := props(a)
				if p["MetricName"] != "ApproximateNumberOfMessagesVisible" || p["Namespace"] != "AWS/SQS" ||
					flatten(p["Dimensions"]) != flatten([]interface{}{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []interface{}{qid, "QueueName"}}}}) {
					continue
				}
				n++
				// One visible message breaches: > 0, or >= 1.
				th, op := p["Threshold"], p["ComparisonOperator"]
				if !(th == float64(0) && op == "GreaterThanThreshold") && !(th == float64(1) && op == "GreaterThanOrEqualToThreshold") {
					t.Errorf("%s alarm: %v %v, want more than 0 messages", qid, op, th)
				}
				if p["TreatMissingData"] != "notBreaching" {
					t.Errorf("%s alarm TreatMissingData %v", qid, p["TreatMissingData"])
				}
			}
			if n != 1 {
				t.Errorf("queue %s has %d not-empty alarms, want 1", qid, n)
			}
		}
	})
	t.Run("failed jobs are counted from every function's logs and alarm", func(t *testing.T) {
		groups := map[string]bool{}
		var ns, name string
		for id, f := range resources(tpl, "AWS::Logs::MetricFilter") {
			p := props(f)
			if p["FilterPattern"] != FailedJobFilterPattern {
				t.Errorf("%s: pattern %v, want %s", id, p["FilterPattern"], FailedJobFilterPattern)
			}
			groups[flatten(p["LogGroupName"])] = true
			mt := p["MetricTransformations"].([]interface{})[0].(obj)
			if mt["MetricValue"] != "1" {
				t.Errorf("%s: MetricValue %v", id, mt["MetricValue"])
			}
			if ns != "" && (mt["MetricNamespace"] != ns || mt["MetricName"] != name) {
				t.Errorf("%s: metric %v/%v, others use %s/%s", id, mt["MetricNamespace"], mt["MetricName"], ns, name)
			}
			ns, name = mt["MetricNamespace"].(string), mt["MetricName"].(string)
		}
		for fid, fn := range resources(tpl, "AWS::Lambda::Function") {
			lc, _ := props(fn)["LoggingConfig"].(obj)
			if lc == nil {
				continue // CDK's own helper functions (custom resources), not the suite's
			}
			if g := flatten(lc["LogGroup"]); !groups[g] {
				t.Errorf("function %s: no failed-job filter on its log group %s", fid, g)
			}
		}
		var found int
		for id, a := range alarms {
			p := props(a)
			if p["Namespace"] != ns || p["MetricName"] != name {
				continue
			}
			found++
			if p["Statistic"] != "Sum" || p["Threshold"] != float64(1) || p["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" || p["TreatMissingData"] != "notBreaching" {
				t.Errorf("%s = %v", id, p)
			}
		}
		if ns == "" || found != 1 {
			t.Errorf("metric %s/%s has %d alarms, want 1", ns, name, found)
		}
	})
}
