package main

import (
	"reflect"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

func providersID(t *testing.T, tpl obj) string {
	id, _ := oneResource(t, tpl, "AWS::Lambda::Function", "ProvidersFunction")
	return id
}

// The providers function runs as long as the mcp function that waits on it,
// is invoked synchronously only (no DLQ, no retries), and holds only the
// settings its calls read.
func TestProvidersFunction(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		_, fn := oneResource(t, sx.json, "AWS::Lambda::Function", "ProvidersFunction")
		_, mcp := oneResource(t, sx.json, "AWS::Lambda::Function", "FunctionsMcpFunction")
		p := props(fn)
		if p["Timeout"] != props(mcp)["Timeout"] || p["MemorySize"] != float64(512) || p["Runtime"] != "provided.al2023" ||
			!reflect.DeepEqual(p["Architectures"], []interface{}{"arm64"}) || p["Handler"] != "bootstrap" {
			t.Errorf("%s: timeout %v (mcp %v) memory %v runtime %v arch %v", sx.settings.StackName, p["Timeout"], props(mcp)["Timeout"], p["MemorySize"], p["Runtime"], p["Architectures"])
		}
		env := p["Environment"].(obj)["Variables"].(obj)
		want := obj{config.EnvLogLevel: sx.settings.LogLevel, config.EnvAnthropicSecretARN: obj{"Ref": anthropicSecret(t, sx.json)[1 : len(anthropicSecret(t, sx.json))-1]}}
		if !reflect.DeepEqual(env, want) {
			t.Errorf("%s: env %v, want %v", sx.settings.StackName, env, want)
		}
		if _, ok := p["DeadLetterConfig"]; ok {
			t.Error("a synchronous function has no DLQ")
		}
	}
}

// The providers function may read the Anthropic key and the batch request
// lines an Anthropic create streams, and write its own logs: nothing else
// (no table, bus or output; the endpoint grants come with endpoints, tested
// in endpoints_test.go).
func TestProvidersLeastPrivilege(t *testing.T) {
	tpl := fx.main.json
	dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	roleID, _ := oneResource(t, tpl, "AWS::IAM::Role", "ProvidersRole")
	logs, _ := oneResource(t, tpl, "AWS::Logs::LogGroup", "ProvidersLogs")
	want := map[string][]string{
		"secretsmanager:GetSecretValue": {anthropicSecret(t, tpl)},
		"s3:GetObject":                  {"<" + dataID + ".Arn>/input/*"},
		"logs:CreateLogStream":          {"<" + logs + ".Arn>"},
		"logs:PutLogEvents":             {"<" + logs + ".Arn>"},
	}
	if got := actionResources(roleStatements(t, tpl, roleID)); !reflect.DeepEqual(got, want) {
		t.Errorf("providers role grants %v, want %v", got, want)
	}
}
