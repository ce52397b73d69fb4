package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
)

func TestReportSchedules(t *testing.T) {
	tpl := fx.main.json
	cfg, err := pipeline.Parse(strings.NewReader(string(shippedPipelines)))
	if err != nil {
		t.Fatal(err)
	}
	nightlyID, _ := oneResource(t, tpl, "AWS::Lambda::Function", "ReportsNightlyReportFunction")
	roleID, _ := oneResource(t, tpl, "AWS::IAM::Role", "ReportsSchedulerRole")
	dlqID, _ := oneResource(t, tpl, "AWS::SQS::Queue", "ReportsNightlyReportDLQ")
	schedules := resources(tpl, "AWS::Scheduler::Schedule")
	if len(schedules) != len(cfg.Pipelines) || len(cfg.Pipelines) == 0 {
		t.Fatalf("%d schedules for %d pipelines", len(schedules), len(cfg.Pipelines))
	}
	byName := map[string]obj{}
	for _, s := range schedules {
		var in pipeline.TickRequest
		target := props(s)["Target"].(obj)
		if err := json.Unmarshal([]byte(target["Input"].(string)), &in); err != nil {
			t.Fatalf("schedule input: %v", err)
		}
		byName[in.Pipeline] = props(s)
	}
	for _, p := range cfg.Pipelines {
		t.Run(p.Name, func(t *testing.T) {
			s, ok := byName[p.Name]
			if !ok {
				t.Fatalf("no schedule for %s", p.Name)
			}
			target := s["Target"].(obj)
			checks := []struct {
				what      string
				got, want any
			}{
				{"expression", s["ScheduleExpression"], p.Schedule},
				{"time zone", s["ScheduleExpressionTimezone"], p.TimeZone},
				{"flexible window", s["FlexibleTimeWindow"], obj{"Mode": "OFF"}},
				{"target", flatten(target["Arn"]), "<" + nightlyID + ".Arn>"},
				{"role", flatten(target["RoleArn"]), "<" + roleID + ".Arn>"},
				{"dead letter", flatten(target["DeadLetterConfig"].(obj)["Arn"]), "<" + dlqID + ".Arn>"},
			}
			for _, c := range checks {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
	t.Run("scheduler role", func(t *testing.T) {
		role := resources(tpl, "AWS::IAM::Role")[roleID]
		trust := toStatements(props(role)["AssumeRolePolicyDocument"])
		doc := props(role)["AssumeRolePolicyDocument"].(obj)["Statement"].([]interface{})[0].(obj)
		if len(trust) != 1 || flatten(doc["Principal"].(obj)["Service"]) != "scheduler.amazonaws.com" ||
			flatten(trust[0].Condition["StringEquals"].(obj)["aws:SourceAccount"]) != testAccount {
			t.Fatalf("trust policy %v", doc)
		}
		got := actionResources(roleStatements(t, tpl, roleID))
		want := map[string][]string{
			"lambda:InvokeFunction": {"<" + nightlyID + ".Arn>"},
			"sqs:SendMessage":       {"<" + dlqID + ".Arn>"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scheduler role may %v, want %v", got, want)
		}
	})
}

func TestReportTopicAndRoutes(t *testing.T) {
	tpl := fx.main.json
	topicID, topic := oneResource(t, tpl, "AWS::SNS::Topic", "ReportsTopic")
	if flatten(props(topic)["KmsMasterKeyId"]) == "" {
		t.Error("report topic is not encrypted")
	}
	foundSSL := false
	for _, pol := range resources(tpl, "AWS::SNS::TopicPolicy") {
		b, _ := json.Marshal(props(pol))
		if strings.Contains(string(b), "aws:SecureTransport") && strings.Contains(string(b), topicID) {
			foundSSL = true
		}
	}
	if !foundSSL {
		t.Error("report topic does not deny non-TLS publishing")
	}
	busID, _ := oneResource(t, tpl, "AWS::Events::EventBus", "Bus")
	want := map[string]string{
		config.DetailOnDemandRun:  "ReportsOnDemandFunction",
		config.DetailJobCompleted: "ReportsNightlyReportFunction",
		config.DetailPipelineTick: "ReportsNightlyReportFunction",
	}
	got := map[string]string{}
	for _, r := range resources(tpl, "AWS::Events::Rule") {
		p := props(r)
		if flatten(p["EventBusName"]) != "<"+busID+">" {
			continue
		}
		pat := p["EventPattern"].(obj)
		for _, dt := range strs(pat["detail-type"]) {
			for _, tg := range p["Targets"].([]interface{}) {
				got[dt] = strings.Trim(strings.Split(flatten(tg.(obj)["Arn"]), ".")[0], "<")
			}
		}
	}
	for dt, fn := range want {
		if !strings.HasPrefix(got[dt], fn) {
			t.Errorf("%s routes to %q, want %s*", dt, got[dt], fn)
		}
	}
	if _, ok := fx.main.json["Outputs"].(obj)["ReportTopicArn"]; !ok {
		t.Error("no ReportTopicArn output")
	}
}

func TestReportFunctionsLeastPrivilege(t *testing.T) {
	tpl := fx.main.json
	tableID, _ := oneResource(t, tpl, "AWS::DynamoDB::Table", "DataTable")
	dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	busID, _ := oneResource(t, tpl, "AWS::Events::EventBus", "Bus")
	topicID, _ := oneResource(t, tpl, "AWS::SNS::Topic", "ReportsTopic")
	bedrockRole := bedrockRoleID(t, tpl)
	table := "<" + tableID + ".Arn>"
	objects := func(prefix string) string { return "<" + dataID + ".Arn>/" + prefix + "*" }
	sorted := func(s ...string) []string { sort.Strings(s); return s }
	tableGrants := func(m map[string][]string) map[string][]string { return storeGrants(m, table, "<"+dataID+".Arn>") }
	models := expectedModelArns(config.DefaultBedrockModels)
	cases := []struct {
		fn   string
		want map[string][]string
	}{
		{"ReportsNightlyReport", tableGrants(map[string][]string{
			"events:PutEvents":                 {"<" + busID + ".Arn>"},
			"s3:GetObject":                     sorted(objects("sources/"), objects("reports/")),
			"s3:PutObject":                     sorted(objects("input/"), objects("reports/")),
			"s3:AbortMultipartUpload":          sorted(objects("input/"), objects("reports/")),
			"s3:ListBucket":                    {"<" + dataID + ".Arn>"},
			"bedrock:CreateModelInvocationJob": sorted(append([]string{jobArns}, models...)...),
			"bedrock:TagResource":              {jobArns},
			"iam:PassRole":                     {"<" + bedrockRole + ".Arn>"},
			"sns:Publish":                      {"<" + topicID + ">"},
			// Completion webhooks are signed with the stack's webhook secret (notify.go).
			// Report links are signed with the link signer's key (links.go).
			"secretsmanager:GetSecretValue": sorted("<"+webhookSecretID(t, tpl)+">", "<"+linkSignerSecretID(t, tpl)+">"),
		})},
		{"ReportsOnDemand", tableGrants(map[string][]string{
			"events:PutEvents":        {"<" + busID + ".Arn>"},
			"s3:GetObject":            {objects("input/")},
			"s3:PutObject":            {objects("results/")},
			"s3:AbortMultipartUpload": {objects("results/")},
			"bedrock:InvokeModel":     sorted(models...),
		})},
	}
	vectorGrants(t, tpl, "ReportsNightlyReport", cases[0].want, nil)
	vectorGrants(t, tpl, "ReportsOnDemand", cases[1].want, nil)
	for _, c := range cases {
		t.Run(c.fn, func(t *testing.T) {
			roleID, _ := oneResource(t, tpl, "AWS::IAM::Role", c.fn+"Role")
			// The onFailure destination: the function's own dead-letter queue.
			dlqID, _ := oneResource(t, tpl, "AWS::SQS::Queue", c.fn+"DLQ")
			for _, a := range []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"} {
				c.want[a] = []string{"<" + dlqID + ".Arn>"}
			}
			got := actionResources(roleStatements(t, tpl, roleID))
			for a := range got {
				if strings.HasPrefix(a, "logs:") {
					delete(got, a)
				}
			}
			for a, res := range c.want {
				if !reflect.DeepEqual(got[a], res) {
					t.Errorf("%s on %v, want %v", a, got[a], res)
				}
			}
			for a := range got {
				if _, ok := c.want[a]; !ok {
					t.Errorf("unexpected grant %s on %v", a, got[a])
				}
			}
		})
	}
}

func TestLoadPipelinesRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	bad := strings.Replace(string(shippedPipelines), `"Europe/Berlin"`, `"Mars/Olympus"`, 1)
	f := filepath.Join(dir, "pipelines.json")
	if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{CtxPipelinesFile: f}})
	_, err := LoadPipelines(app.Node())
	if err == nil || !strings.Contains(err.Error(), "pipelines[0].time_zone") {
		t.Fatalf("got %v, want an error naming pipelines[0].time_zone", err)
	}
	ok := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{CtxPipelinesFile: jsii.String("")}})
	if _, err := LoadPipelines(ok.Node()); err != nil {
		t.Fatalf("shipped pipelines: %v", err)
	}
}
