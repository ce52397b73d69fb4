package main

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// extraEnv counts the variables other constructs add to the functions NewFunctions made
// (mcp: the providers function's name and the Bedrock quota; validate: the Anthropic key and the Bedrock
// quota; +1: MCPBATCH_VECTOR_BUCKET from vectors.go; mcp +1: the notification topic from notify.go;
// mcp +1: the webhook secret, for get_webhook_secret; validate +1: the validation queue from fanout.go).
var extraEnv = map[string]int{FnMCP: 2 + 1 + 1 + 1, FnIngest: 1 + 1, FnValidate: 2 + 1}

func anthropicSecret(t *testing.T, tpl obj) string {
	id, _ := oneResource(t, tpl, "AWS::SecretsManager::Secret", "ReconcilerAnthropicApiKey")
	return "<" + id + ">"
}

func TestReconcilerSchedule(t *testing.T) {
	tpl := fx.main.json
	fnID, fn := oneResource(t, tpl, "AWS::Lambda::Function", "ReconcilerFunction")
	_, rule := oneResource(t, tpl, "AWS::Events::Rule", "ReconcilerSchedule")
	p := props(rule)
	if p["ScheduleExpression"] != "rate(5 minutes)" {
		t.Errorf("schedule = %v, want rate(5 minutes)", p["ScheduleExpression"])
	}
	if _, ok := p["EventBusName"]; ok {
		t.Errorf("schedules run on the default bus, got %v", p["EventBusName"])
	}
	targets := p["Targets"].([]interface{})
	if len(targets) != 1 || flatten(targets[0].(obj)["Arn"]) != "<"+fnID+".Arn>" {
		t.Fatalf("targets = %v", targets)
	}
	dlqID, _ := oneResource(t, tpl, "AWS::SQS::Queue", "ReconcilerDLQ")
	if got := flatten(targets[0].(obj)["DeadLetterConfig"].(obj)["Arn"]); got != "<"+dlqID+".Arn>" {
		t.Errorf("target DLQ = %s", got)
	}
	fp := props(fn)
	if fp["Timeout"] != float64(300) || fp["MemorySize"] != float64(512) {
		t.Errorf("timeout %v memory %v, want 300 s (under the 5 minute period) and 512 MB", fp["Timeout"], fp["MemorySize"])
	}
	env := fp["Environment"].(obj)["Variables"].(obj)
	if flatten(env[config.EnvAnthropicSecretARN]) != anthropicSecret(t, tpl) {
		t.Errorf("secret env = %v", env[config.EnvAnthropicSecretARN])
	}
	if env[config.EnvBedrockQuota] != "20" || env[config.EnvStaleMinutes] != "15" {
		t.Errorf("quota/stale env = %v/%v", env[config.EnvBedrockQuota], env[config.EnvStaleMinutes])
	}
	for _, name := range []string{"ProvidersFunction", "FunctionsIngestFunction"} {
		_, f := oneResource(t, tpl, "AWS::Lambda::Function", name)
		if flatten(props(f)["Environment"].(obj)["Variables"].(obj)[config.EnvAnthropicSecretARN]) != anthropicSecret(t, tpl) {
			t.Errorf("%s does not know the Anthropic secret", name)
		}
	}
	// mcp calls Anthropic through the providers function and never holds the key.
	_, mcpFn := oneResource(t, tpl, "AWS::Lambda::Function", "FunctionsMcpFunction")
	mcpEnv := props(mcpFn)["Environment"].(obj)["Variables"].(obj)
	provID, _ := oneResource(t, tpl, "AWS::Lambda::Function", "ProvidersFunction")
	if _, ok := mcpEnv[config.EnvAnthropicSecretARN]; ok {
		t.Error("mcp must not know the Anthropic secret")
	}
	if flatten(mcpEnv[config.EnvProvidersFunction]) != "<"+provID+">" {
		t.Errorf("mcp %s = %v, want the providers function", config.EnvProvidersFunction, mcpEnv[config.EnvProvidersFunction])
	}
	mcpRole, _ := oneResource(t, tpl, "AWS::IAM::Role", "FunctionsMcpRole")
	mcpGrants := actionResources(roleStatements(t, tpl, mcpRole))
	if _, ok := mcpGrants["secretsmanager:GetSecretValue"]; ok && slices.Contains(mcpGrants["secretsmanager:GetSecretValue"], anthropicSecret(t, tpl)) {
		t.Error("mcp may read the Anthropic key")
	}
	if !reflect.DeepEqual(mcpGrants["lambda:InvokeFunction"], []string{"<" + provID + ".Arn>"}) {
		t.Errorf("mcp lambda:InvokeFunction on %v, want the providers function only", mcpGrants["lambda:InvokeFunction"])
	}
	_, bef := oneResource(t, tpl, "AWS::Lambda::Function", "FunctionsBedrockEventsFunction")
	if _, ok := props(bef)["Environment"].(obj)["Variables"].(obj)[config.EnvAnthropicSecretARN]; ok {
		t.Error("bedrock-events never calls Anthropic and must not read its key")
	}
}

func TestReconcilerAlarms(t *testing.T) {
	tpl := fx.main.json
	fnID, _ := oneResource(t, tpl, "AWS::Lambda::Function", "ReconcilerFunction")
	_, a := oneResource(t, tpl, "AWS::CloudWatch::Alarm", "ReconcilerErrors")
	p := props(a)
	dims := flatten(p["Dimensions"])
	if p["MetricName"] != "Errors" || p["Namespace"] != "AWS/Lambda" || dims != flatten([]interface{}{obj{"Name": "FunctionName", "Value": obj{"Ref": fnID}}}) {
		t.Errorf("alarm watches %v %v %v", p["Namespace"], p["MetricName"], dims)
	}
	if p["Threshold"] != float64(1) || p["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" || p["TreatMissingData"] != "notBreaching" {
		t.Errorf("alarm = %v", p)
	}
	_, d := oneResource(t, tpl, "AWS::CloudWatch::Alarm", "ReconcilerDlqNotEmpty")
	if props(d)["MetricName"] != "ApproximateNumberOfMessagesVisible" {
		t.Errorf("DLQ alarm = %v", props(d))
	}
}

func TestReconcilerLeastPrivilege(t *testing.T) {
	tpl := fx.main.json
	tableID, _ := oneResource(t, tpl, "AWS::DynamoDB::Table", "DataTable")
	dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	busID, _ := oneResource(t, tpl, "AWS::Events::EventBus", "Bus")
	roleID, _ := oneResource(t, tpl, "AWS::IAM::Role", "ReconcilerRole")
	dlq, _ := oneResource(t, tpl, "AWS::SQS::Queue", "ReconcilerDLQ")
	logs, _ := oneResource(t, tpl, "AWS::Logs::LogGroup", "ReconcilerLogs")
	table := "<" + tableID + ".Arn>"
	create := append([]string{jobArns}, expectedModelArns(config.DefaultBedrockModels)...)
	sort.Strings(create)
	want := map[string][]string{
		"events:PutEvents": {"<" + busID + ".Arn>"},
		"s3:GetObject":     {"<" + dataID + ".Arn>/input/*", "<" + dataID + ".Arn>/sagemaker/failure/*", "<" + dataID + ".Arn>/sagemaker/output/*"},
		// Without ListBucket S3 answers a missing object with 403, not 404.
		"s3:ListBucket":                    {"<" + dataID + ".Arn>"},
		"bedrock:CreateModelInvocationJob": create,
		"bedrock:GetModelInvocationJob":    {jobArns},
		"bedrock:StopModelInvocationJob":   {jobArns},
		"bedrock:TagResource":              {jobArns},
		"iam:PassRole":                     {"<" + bedrockRoleID(t, tpl) + ".Arn>"},
		"secretsmanager:GetSecretValue":    {anthropicSecret(t, tpl)},
		"logs:CreateLogStream":             {"<" + logs + ".Arn>"},
		"logs:PutLogEvents":                {"<" + logs + ".Arn>"},
	}
	for _, group := range accountReadActions { // the daily refresh of the account's model facts
		for _, a := range group {
			want[a] = []string{"*"}
		}
	}
	storeGrants(want, table, "<"+dataID+".Arn>")
	for _, a := range []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"} {
		want[a] = []string{"<" + dlq + ".Arn>"}
	}
	got := actionResources(roleStatements(t, tpl, roleID))
	for _, st := range roleStatements(t, tpl, roleID) {
		if !slices.Contains(st.Actions, "s3:ListBucket") {
			continue
		}
		like, _ := st.Condition["StringLike"].(obj)
		prefixes := strs(like["s3:prefix"])
		sort.Strings(prefixes)
		if want := []string{config.SageMakerFailurePrefix + "*", config.SageMakerOutputPrefix + "*"}; !reflect.DeepEqual(prefixes, want) {
			t.Errorf("ListBucket limited to s3:prefix %v, want %v", prefixes, want)
		}
	}
	if !reflect.DeepEqual(got, want) {
		for a := range got {
			if _, ok := want[a]; !ok {
				t.Errorf("unexpected action %s on %v", a, got[a])
			}
		}
		for a, w := range want {
			if !reflect.DeepEqual(got[a], w) {
				t.Errorf("%s on %v, want %v", a, got[a], w)
			}
		}
	}
}

func TestReconcilerSettingsFromContext(t *testing.T) {
	cases := []struct {
		name    string
		ctx     map[string]interface{}
		want    ReconcilerSettings
		wantErr string
	}{
		{"defaults", nil, ReconcilerSettings{EveryMinutes: 5, BedrockQuota: 20, StaleMinutes: 15}, ""},
		{"strings from -c", map[string]interface{}{CtxReconcileMinutes: "10", CtxBedrockQuota: "2", CtxStaleMinutes: "30"},
			ReconcilerSettings{EveryMinutes: 10, BedrockQuota: 2, StaleMinutes: 30}, ""},
		{"numbers from cdk.json", map[string]interface{}{CtxReconcileMinutes: 1}, ReconcilerSettings{EveryMinutes: 1, BedrockQuota: 20, StaleMinutes: 15}, ""},
		{"schedule too slow", map[string]interface{}{CtxReconcileMinutes: "61"}, ReconcilerSettings{}, "reconcileMinutes: want a whole number 1..60"},
		{"quota zero", map[string]interface{}{CtxBedrockQuota: "0"}, ReconcilerSettings{}, "bedrockQuota: want a whole number 1..1000"},
		{"not a number", map[string]interface{}{CtxStaleMinutes: "soon"}, ReconcilerSettings{}, "staleMinutes: want a whole number 1..1440"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := map[string]interface{}{}
			for k, v := range tc.ctx {
				ctx[k] = v
			}
			app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
			got, err := ReconcilerSettingsFromContext(app.Node())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
