package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// altSageMakerEndpoints are the alt stack's allowed endpoints (mixed case on purpose:
// endpoint ARNs are lower case).
var altSageMakerEndpoints = []string{"Demo-Async", "demo-realtime"}

// sageMakerMCPGrants adds what the mcp function needs for the SageMaker tools
// in a stack without allowed endpoints (TestLeastPrivilege's main stack).
func sageMakerMCPGrants(m map[string][]string, objects func(string) string) {
	m["s3:GetObject"] = append(m["s3:GetObject"], objects(config.SageMakerOutputPrefix))
	m["s3:PutObject"] = append(m["s3:PutObject"], objects(config.SageMakerInputPrefix))
	m["s3:AbortMultipartUpload"] = append(m["s3:AbortMultipartUpload"], objects(config.SageMakerInputPrefix))
	for _, a := range []string{"s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"} {
		sort.Strings(m[a])
	}
}

// addSageMakerLifecycle adds the sagemaker/ prefixes' rules to TestBuckets' expectation.
func addSageMakerLifecycle(want map[string]string) {
	want["expire "+config.SageMakerInputPrefix] = fmt.Sprint(rawFileDays)
	want["expire "+config.SageMakerOutputPrefix] = fmt.Sprint(keptFileDays)
	want["expire "+config.SageMakerFailurePrefix] = fmt.Sprint(rawFileDays)
}

// sageMakerEnvCount is how many SageMaker variables the stack adds to a function
// (only mcp among TestFunctions' functions enforces the SageMaker settings).
func sageMakerEnvCount(s Settings, fn string) int {
	if fn != FnMCP {
		return 0
	}
	n := 0
	if len(s.SageMakerEndpoints) > 0 {
		n++
	}
	if s.SageMakerMaxResponseBytes > 0 {
		n++
	}
	return n
}

// named keeps the resources whose logical id starts with prefix (other features add topics too).
func named(rs map[string]obj, prefix string) map[string]obj {
	out := map[string]obj{}
	for id, r := range rs {
		if strings.HasPrefix(id, prefix) {
			out[id] = r
		}
	}
	return out
}

func TestSageMakerTopics(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		tpl := sx.json
		t.Run(sx.settings.StackName, func(t *testing.T) {
			keyID, key := oneResource(t, tpl, "AWS::KMS::Key", "SageMakerTopicKey")
			if props(key)["EnableKeyRotation"] != true {
				t.Error("topic key rotation off")
			}
			topics := named(resources(tpl, "AWS::SNS::Topic"), "SageMaker")
			if len(topics) != 2 {
				t.Fatalf("%d topics, want success and error", len(topics))
			}
			for id, tp := range topics {
				if got := flatten(props(tp)["KmsMasterKeyId"]); got != "<"+keyID+".Arn>" {
					t.Errorf("%s encrypted with %s, want the stack's key", id, got)
				}
			}
			// SSL only: each topic's policy denies aws:SecureTransport=false.
			pols := named(resources(tpl, "AWS::SNS::TopicPolicy"), "SageMaker")
			if len(pols) != 2 {
				t.Fatalf("%d topic policies", len(pols))
			}
			for id, p := range pols {
				raw, _ := json.Marshal(props(p)["PolicyDocument"])
				if !strings.Contains(string(raw), `"aws:SecureTransport":"false"`) || !strings.Contains(string(raw), `"Effect":"Deny"`) {
					t.Errorf("%s does not deny plain HTTP: %s", id, raw)
				}
			}
			fnID, _ := oneResource(t, tpl, "AWS::Lambda::Function", "SageMakerEventsFunction")
			dlqID, _ := oneResource(t, tpl, "AWS::SQS::Queue", "SageMakerEventsDLQ")
			subs := named(resources(tpl, "AWS::SNS::Subscription"), "SageMaker")
			if len(subs) != 2 {
				t.Fatalf("%d subscriptions, want one per topic", len(subs))
			}
			seen := map[string]bool{}
			for id, s := range subs {
				p := props(s)
				if p["Protocol"] != "lambda" || flatten(p["Endpoint"]) != "<"+fnID+".Arn>" {
					t.Errorf("%s: %v %v", id, p["Protocol"], flatten(p["Endpoint"]))
				}
				if got := flatten(p["RedrivePolicy"]); !strings.Contains(got, dlqID) {
					t.Errorf("%s: redrive policy %s, want the function's DLQ", id, got)
				}
				seen[flatten(p["TopicArn"])] = true
			}
			if len(seen) != 2 {
				t.Errorf("subscriptions cover topics %v", seen)
			}
		})
	}
}

func TestSageMakerLeastPrivilege(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		tpl := sx.json
		t.Run(sx.settings.StackName, func(t *testing.T) {
			dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
			objects := func(prefix string) string { return "<" + dataID + ".Arn>/" + prefix + "*" }
			roleID, _ := oneResource(t, tpl, "AWS::IAM::Role", "SageMakerEventsRole")
			got := actionResources(roleStatements(t, tpl, roleID))
			if !reflect.DeepEqual(got["s3:GetObject"], []string{objects(PrefixJobs), objects(config.SageMakerOutputPrefix)}) {
				t.Errorf("events function reads %v, want only sagemaker/output/ and the large-job objects", got["s3:GetObject"])
			}
			// It writes objects only as the job store does: a job too large for an item.
			if w := got["s3:PutObject"]; !reflect.DeepEqual(w, []string{objects(PrefixJobs)}) {
				t.Errorf("events function writes %v, want only the large-job objects", w)
			}
			for _, a := range []string{"s3:ListBucket", "sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointAsync"} {
				if _, ok := got[a]; ok {
					t.Errorf("events function may %s", a)
				}
			}
			if _, ok := got["dynamodb:UpdateItem"]; !ok {
				t.Error("events function cannot update jobs")
			}
			if _, ok := got["events:PutEvents"]; !ok {
				t.Error("events function cannot publish Job Completed")
			}
			mcpRole, _ := oneResource(t, tpl, "AWS::IAM::Role", "FunctionsMcpRole")
			mcp := actionResources(roleStatements(t, tpl, mcpRole))
			var want []string
			for _, e := range sx.settings.SageMakerEndpoints {
				want = append(want, "arn:aws:sagemaker:"+testRegion+":"+testAccount+":endpoint/"+strings.ToLower(e))
			}
			sort.Strings(want)
			for _, a := range []string{"sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointAsync"} {
				if !reflect.DeepEqual(mcp[a], want) {
					t.Errorf("mcp %s on %v, want %v", a, mcp[a], want)
				}
			}
			// The endpoint list reaches the functions that enforce it.
			for _, fn := range []string{"FunctionsMcpFunction", "SageMakerEventsFunction"} {
				_, f := oneResource(t, tpl, "AWS::Lambda::Function", fn)
				env := props(f)["Environment"].(obj)["Variables"].(obj)
				v, ok := env[config.EnvSageMakerEndpoints]
				if len(want) == 0 && ok {
					t.Errorf("%s: endpoints env %v with none allowed", fn, v)
				}
				if len(want) > 0 && v != strings.Join(sx.settings.SageMakerEndpoints, ",") {
					t.Errorf("%s: endpoints env %v", fn, v)
				}
			}
		})
	}
}

func TestSageMakerOutputs(t *testing.T) {
	outs := fx.main.json["Outputs"].(obj)
	for _, name := range []string{"SageMakerSuccessTopicArn", "SageMakerErrorTopicArn", "SageMakerS3OutputPath", "SageMakerS3FailurePath",
		"SageMakerTopicKeyArn", "SageMakerEventsDlqUrl", "SageMakerAsyncInferenceConfig", "SageMakerExecutionRolePolicy"} {
		if _, ok := outs[name]; !ok {
			t.Errorf("output %s missing", name)
		}
	}
	dataID, _ := oneResource(t, fx.main.json, "AWS::S3::Bucket", "DataBucket")
	var cfg struct {
		OutputConfig struct {
			S3OutputPath, S3FailurePath string
			NotificationConfig          struct{ SuccessTopic, ErrorTopic string }
		}
	}
	v := flatten(outs["SageMakerAsyncInferenceConfig"].(obj)["Value"])
	if err := json.Unmarshal([]byte(v), &cfg); err != nil {
		t.Fatalf("%v: %s", err, v)
	}
	if cfg.OutputConfig.S3OutputPath != "s3://<"+dataID+">/sagemaker/output/" || cfg.OutputConfig.S3FailurePath != "s3://<"+dataID+">/sagemaker/failure/" ||
		!strings.HasPrefix(cfg.OutputConfig.NotificationConfig.SuccessTopic, "<SageMakerSuccessTopic") ||
		!strings.HasPrefix(cfg.OutputConfig.NotificationConfig.ErrorTopic, "<SageMakerErrorTopic") {
		t.Errorf("async inference config %s", v)
	}
	var pol struct{ Statement []struct{ Sid string } }
	v = flatten(outs["SageMakerExecutionRolePolicy"].(obj)["Value"])
	if err := json.Unmarshal([]byte(v), &pol); err != nil || len(pol.Statement) != 4 {
		t.Fatalf("execution role policy %v: %s", err, v)
	}
}

func TestSageMakerLifecycle(t *testing.T) {
	_, b := oneResource(t, fx.main.json, "AWS::S3::Bucket", "DataBucket")
	rules := props(b)["LifecycleConfiguration"].(obj)["Rules"].([]interface{})
	got := map[string]float64{}
	for _, r := range rules {
		m := r.(obj)
		if p, ok := m["Prefix"].(string); ok && strings.HasPrefix(p, "sagemaker/") {
			got[p], _ = m["ExpirationInDays"].(float64)
		}
	}
	want := map[string]float64{config.SageMakerInputPrefix: rawFileDays, config.SageMakerOutputPrefix: keptFileDays, config.SageMakerFailurePrefix: rawFileDays}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sagemaker lifecycle %v, want %v", got, want)
	}
}

func TestSageMakerSettings(t *testing.T) {
	base := fx.main.settings
	tests := []struct {
		name    string
		mutate  func(s *Settings)
		wantErr string
	}{
		{"none allowed", func(s *Settings) {}, ""},
		{"good names", func(s *Settings) { s.SageMakerEndpoints = []string{"a", "My-Endpoint-1"} }, ""},
		{"bad name", func(s *Settings) { s.SageMakerEndpoints = []string{"bad_name"} }, `"bad_name" is not a SageMaker endpoint name`},
		{"too long", func(s *Settings) { s.SageMakerEndpoints = []string{strings.Repeat("a", 64)} }, "is not a SageMaker endpoint name"},
		{"duplicate ignoring case", func(s *Settings) { s.SageMakerEndpoints = []string{"ep", "EP"} }, "listed twice"},
		{"cap too big", func(s *Settings) { s.SageMakerMaxResponseBytes = 7 << 20 }, "sagemakerMaxResponseBytes 7340032: want 1..6291456"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.SageMakerEndpoints = slices.Clone(base.SageMakerEndpoints)
			tc.mutate(&s)
			err := s.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
