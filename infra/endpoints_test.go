package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// deployContext is the sagemakerDeploy entry of the endpoints stack, as an
// operator writes it in cdk.json: an async endpoint scaling to zero, a
// real-time endpoint with a 90/10 canary and a latency policy, a multi-model
// endpoint, and an async endpoint kept warm.
const deployContext = `[
 {"name":"sentiment-async","kind":"async","image":"111122223333.dkr.ecr.us-east-1.amazonaws.com/sentiment:1.4",
  "model_data_url":"s3://my-models/sentiment/model.tar.gz","instance_type":"ml.g5.xlarge",
  "max_capacity":3,"max_concurrent_invocations_per_instance":2,"invocation_timeout_s":900},
 {"name":"ranker","kind":"realtime","image":"111122223333.dkr.ecr.us-east-1.amazonaws.com/ranker:7",
  "instance_type":"ml.m5.large","max_capacity":4,"latency_p99_ms":250,
  "variants":[{"name":"primary","weight":90,"model_data_url":"s3://my-models/ranker/v7.tar.gz"},
              {"name":"canary","weight":10,"model_data_url":"s3://my-models/ranker/v8.tar.gz",
               "image":"111122223333.dkr.ecr.us-east-1.amazonaws.com/ranker:8"}]},
 {"name":"tenants-mm","kind":"realtime","image":"111122223333.dkr.ecr.us-east-1.amazonaws.com/mme:2",
  "multi_model_prefix":"s3://my-models/tenants/","instance_type":"ml.c5.xlarge"},
 {"name":"warm-async","kind":"async","image":"111122223333.dkr.ecr.us-east-1.amazonaws.com/sentiment:1.4",
  "model_data_url":"s3://my-models/sentiment/model.tar.gz","instance_type":"ml.m5.large","keep_warm":true}
]`

var epx struct {
	once     sync.Once
	settings Settings
	stack    *Stack
	json     obj
	err      error
}

// endpointsStack synthesizes, once, a stack from context with deployContext,
// an existing endpoint in sagemakerEndpoints and two operators, with cdk-nag.
func endpointsStack(t *testing.T) (Settings, *Stack, obj) {
	t.Helper()
	epx.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				epx.err = jsiiPanic{r}
			}
		}()
		app := newApp(map[string]interface{}{
			CtxAssetDir: fx.assetDir, CtxStackName: "mcpbatch-ep", CtxSageMakerDeploy: deployContext,
			CtxSageMakerEndpoints: "existing-ep", CtxSageMakerOperators: "arn:aws:iam::123456789012:role/Ops,oncall",
		})
		epx.settings, epx.err = SettingsFromContext(app.Node())
		if epx.err != nil {
			return
		}
		epx.stack, epx.err = NewStack(app, "McpbatchEndpoints", &StackProps{Settings: epx.settings,
			StackProps: awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String(testAccount), Region: jsii.String(testRegion)}}})
		if epx.err != nil {
			return
		}
		CheckWithNag(epx.stack.Stack, false)
		epx.json = *assertions.Template_FromStack(epx.stack.Stack, nil).ToJSON()
	})
	if epx.err != nil {
		t.Fatal(epx.err)
	}
	return epx.settings, epx.stack, epx.json
}

// byProp returns the one resource of typ whose property key flattens to want.
func byProp(t *testing.T, tpl obj, typ, key, want string) (string, obj) {
	t.Helper()
	var ids []string
	for id, r := range resources(tpl, typ) {
		if flatten(props(r)[key]) == want {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("want one %s with %s %s, got %v", typ, key, want, ids)
	}
	return ids[0], resources(tpl, typ)[ids[0]]
}

func TestEndpointSettings(t *testing.T) {
	s, _, _ := endpointsStack(t)
	if want := []string{"existing-ep", "sentiment-async", "ranker", "tenants-mm", "warm-async"}; !reflect.DeepEqual(s.SageMakerEndpoints, want) {
		t.Errorf("allow-list %v, want %v", s.SageMakerEndpoints, want)
	}
	good := `{"name":"e","kind":"realtime","image":"111122223333.dkr.ecr.us-east-1.amazonaws.com/r:1","model_data_url":"s3://b-1/m.tar.gz","instance_type":"ml.m5.large"}`
	tests := []struct {
		name, entry, want string
	}{
		{"good", good, ""},
		{"kind", strings.Replace(good, `"realtime"`, `"batch"`, 1), `sagemakerDeploy[0].kind: "batch": want async or realtime`},
		{"image not ECR", strings.Replace(good, "111122223333.dkr.ecr.us-east-1.amazonaws.com/r:1", "docker.io/r:1", 1), "sagemakerDeploy[0].variants[0].image"},
		{"no model", strings.Replace(good, `"model_data_url":"s3://b-1/m.tar.gz",`, "", 1), "variants[0].model_data_url: required"},
		{"instance type", strings.Replace(good, "ml.m5.large", "m5.large", 1), `instance_type: "m5.large"`},
		{"multi-model async", `{"name":"e","kind":"async","image":"111122223333.dkr.ecr.us-east-1.amazonaws.com/r:1","multi_model_prefix":"s3://b-1/p/","instance_type":"ml.m5.large"}`, "multi-model endpoints are real-time only"},
		{"prefix without slash", strings.Replace(good, `"model_data_url":"s3://b-1/m.tar.gz"`, `"multi_model_prefix":"s3://b-1/p"`, 1), "ending in /"},
		{"no traffic", strings.Replace(good, `"instance_type"`, `"variants":[{"name":"a","weight":0},{"name":"b","weight":0}],"instance_type"`, 1), "the weights leave no variant any traffic"},
		{"two async variants", strings.Replace(strings.Replace(good, "realtime", "async", 1), `"instance_type"`, `"variants":[{"name":"a","weight":1},{"name":"b","weight":1}],"instance_type"`, 1), "an async endpoint takes one production variant (got 2)"},
		{"concurrency", strings.Replace(strings.Replace(good, "realtime", "async", 1), `"instance_type"`, `"max_concurrent_invocations_per_instance":1001,"instance_type"`, 1), "want 1..1000 (got 1001)"},
		{"async knob on real-time", strings.Replace(good, `"instance_type"`, `"keep_warm":true,"instance_type"`, 1), "apply to async endpoints"},
		{"unknown field", strings.Replace(good, `"kind"`, `"kinds":"x","kind"`, 1), `unknown field "kinds"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := newApp(map[string]interface{}{CtxSageMakerDeploy: "[" + tc.entry + "]"})
			_, err := SettingsFromContext(app.Node())
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestEndpointModelsAndConfigs(t *testing.T) {
	_, _, tpl := endpointsStack(t)
	dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	keyID, _ := oneResource(t, tpl, "AWS::KMS::Key", "SageMakerTopicKey")
	models := resources(tpl, "AWS::SageMaker::Model")
	if len(models) != 5 {
		t.Fatalf("%d models, want 5 (one per variant)", len(models))
	}
	modes := map[string]string{}
	for _, m := range models {
		c := props(m)["PrimaryContainer"].(obj)
		modes[c["ModelDataUrl"].(string)+" "+c["Image"].(string)] = c["Mode"].(string)
	}
	for k, want := range map[string]string{
		"s3://my-models/tenants/ 111122223333.dkr.ecr.us-east-1.amazonaws.com/mme:2":            "MultiModel",
		"s3://my-models/ranker/v8.tar.gz 111122223333.dkr.ecr.us-east-1.amazonaws.com/ranker:8": "SingleModel",
	} {
		if modes[k] != want {
			t.Errorf("model %s: mode %q, want %s (all: %v)", k, modes[k], want, modes)
		}
	}
	_, ep := byProp(t, tpl, "AWS::SageMaker::Endpoint", "EndpointName", "sentiment-async")
	cfgID := strings.TrimSuffix(strings.TrimPrefix(flatten(props(ep)["EndpointConfigName"]), "<"), ".EndpointConfigName>")
	cfg := props(resources(tpl, "AWS::SageMaker::EndpointConfig")[cfgID])
	async, _ := cfg["AsyncInferenceConfig"].(obj)
	if async == nil {
		t.Fatalf("sentiment-async config %v", cfg)
	}
	out := async["OutputConfig"].(obj)
	n := out["NotificationConfig"].(obj)
	success, _ := oneResource(t, tpl, "AWS::SNS::Topic", "SageMakerSuccessTopic")
	failure, _ := oneResource(t, tpl, "AWS::SNS::Topic", "SageMakerErrorTopic")
	if flatten(out["S3OutputPath"]) != "s3://<"+dataID+">/"+config.SageMakerOutputPrefix || flatten(out["S3FailurePath"]) != "s3://<"+dataID+">/"+config.SageMakerFailurePrefix ||
		flatten(out["KmsKeyId"]) != "<"+keyID+".Arn>" || flatten(n["SuccessTopic"]) != "<"+success+">" || flatten(n["ErrorTopic"]) != "<"+failure+">" {
		t.Errorf("async output config %s", flatten(out))
	}
	if got := async["ClientConfig"].(obj)["MaxConcurrentInvocationsPerInstance"]; got != float64(2) {
		t.Errorf("MaxConcurrentInvocationsPerInstance %v", got)
	}
	// The topics the endpoint notifies are the ones sagemaker-events is subscribed to.
	fnID, _ := oneResource(t, tpl, "AWS::Lambda::Function", "SageMakerEventsFunction")
	subscribed := map[string]bool{}
	for _, s := range resources(tpl, "AWS::SNS::Subscription") {
		if flatten(props(s)["Endpoint"]) == "<"+fnID+".Arn>" {
			subscribed[flatten(props(s)["TopicArn"])] = true
		}
	}
	if !subscribed["<"+success+">"] || !subscribed["<"+failure+">"] {
		t.Errorf("sagemaker-events subscribed to %v", subscribed)
	}
	_, rk := byProp(t, tpl, "AWS::SageMaker::Endpoint", "EndpointName", "ranker")
	rkCfg := props(resources(tpl, "AWS::SageMaker::EndpointConfig")[strings.TrimSuffix(strings.TrimPrefix(flatten(props(rk)["EndpointConfigName"]), "<"), ".EndpointConfigName>")])
	weights := map[string]float64{}
	for _, v := range rkCfg["ProductionVariants"].([]interface{}) {
		weights[v.(obj)["VariantName"].(string)] = v.(obj)["InitialVariantWeight"].(float64)
	}
	if !reflect.DeepEqual(weights, map[string]float64{"primary": 90, "canary": 10}) || rkCfg["AsyncInferenceConfig"] != nil {
		t.Errorf("ranker variants %v", weights)
	}
}

func TestEndpointScaling(t *testing.T) {
	_, _, tpl := endpointsStack(t)
	type limits struct{ Min, Max float64 }
	targets := map[string]limits{}
	targetIDs := map[string]string{}
	for id, r := range resources(tpl, "AWS::ApplicationAutoScaling::ScalableTarget") {
		p := props(r)
		if p["ServiceNamespace"] != "sagemaker" || p["ScalableDimension"] != "sagemaker:variant:DesiredInstanceCount" || p["RoleARN"] != nil {
			t.Errorf("%s: %v", id, p)
		}
		targets[p["ResourceId"].(string)] = limits{p["MinCapacity"].(float64), p["MaxCapacity"].(float64)}
		targetIDs[id] = p["ResourceId"].(string)
	}
	want := map[string]limits{
		"endpoint/sentiment-async/variant/AllTraffic": {0, 3}, "endpoint/warm-async/variant/AllTraffic": {1, 2},
		"endpoint/ranker/variant/primary": {1, 4}, "endpoint/ranker/variant/canary": {1, 4}, "endpoint/tenants-mm/variant/AllTraffic": {1, 2},
	}
	if !reflect.DeepEqual(targets, want) {
		t.Errorf("scalable targets %v, want %v", targets, want)
	}
	// policy kind per resource: metric → (target, cooldowns) or step.
	got := map[string][]string{}
	wakeArns := map[string]string{}
	for id, r := range resources(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy") {
		p := props(r)
		res := targetIDs[strings.Trim(flatten(p["ScalingTargetId"]), "<>")]
		switch p["PolicyType"] {
		case "TargetTrackingScaling":
			c := p["TargetTrackingScalingPolicyConfiguration"].(obj)
			metric := ""
			if pm, ok := c["PredefinedMetricSpecification"].(obj); ok {
				metric = pm["PredefinedMetricType"].(string)
			} else if cm := c["CustomizedMetricSpecification"].(obj); cm["MetricName"] != nil {
				metric = cm["MetricName"].(string) + "/" + cm["Statistic"].(string)
			} else {
				q := cm["Metrics"].([]interface{})[0].(obj)["MetricStat"].(obj)
				metric = q["Metric"].(obj)["MetricName"].(string) + "/" + q["Stat"].(string)
			}
			got[res] = append(got[res], metric+" "+flatten(c["TargetValue"])+" out "+flatten(c["ScaleOutCooldown"])+" in "+flatten(c["ScaleInCooldown"]))
		case "StepScaling":
			c := p["StepScalingPolicyConfiguration"].(obj)
			step := c["StepAdjustments"].([]interface{})[0].(obj)
			got[res] = append(got[res], c["AdjustmentType"].(string)+" +"+flatten(step["ScalingAdjustment"])+" from "+flatten(step["MetricIntervalLowerBound"]))
			wakeArns[res] = "<" + id + ">"
		}
	}
	for k := range got {
		sort.Strings(got[k])
	}
	wantPolicies := map[string][]string{
		"endpoint/sentiment-async/variant/AllTraffic": {"ApproximateBacklogSizePerInstance/Average 5 out 60 in 300", "ChangeInCapacity +1 from 0"},
		"endpoint/warm-async/variant/AllTraffic":      {"ApproximateBacklogSizePerInstance/Average 5 out 60 in 300", "ChangeInCapacity +1 from 0"},
		"endpoint/ranker/variant/primary":             {"ModelLatency/p99 250000 out 60 in 300", "SageMakerVariantInvocationsPerInstance 70 out 60 in 300"},
		"endpoint/ranker/variant/canary":              {"ModelLatency/p99 250000 out 60 in 300", "SageMakerVariantInvocationsPerInstance 70 out 60 in 300"},
		"endpoint/tenants-mm/variant/AllTraffic":      {"SageMakerVariantInvocationsPerInstance 70 out 60 in 300"},
	}
	if !reflect.DeepEqual(got, wantPolicies) {
		t.Errorf("policies\n%v\nwant\n%v", got, wantPolicies)
	}
	// One alarm per async endpoint on HasBacklogWithoutCapacity, wired to its step policy.
	alarms := 0
	for id, r := range resources(tpl, "AWS::CloudWatch::Alarm") {
		p := props(r)
		if p["MetricName"] != "HasBacklogWithoutCapacity" {
			continue
		}
		alarms++
		ep := p["Dimensions"].([]interface{})[0].(obj)["Value"].(string)
		if p["Namespace"] != "AWS/SageMaker" || p["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" || p["Threshold"] != float64(1) ||
			!reflect.DeepEqual(strs(p["AlarmActions"]), []string{wakeArns["endpoint/"+ep+"/variant/AllTraffic"]}) {
			t.Errorf("%s: %v", id, p)
		}
	}
	if alarms != 2 {
		t.Errorf("%d HasBacklogWithoutCapacity alarms, want 2", alarms)
	}
}

func TestEndpointIAM(t *testing.T) {
	s, _, tpl := endpointsStack(t)
	dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	keyID, _ := oneResource(t, tpl, "AWS::KMS::Key", "SageMakerTopicKey")
	objects := func(prefix string) string { return "<" + dataID + ".Arn>/" + prefix + "*" }
	roleOf := func(endpoint string) map[string][]string {
		_, ep := byProp(t, tpl, "AWS::SageMaker::Endpoint", "EndpointName", endpoint)
		cfg := props(resources(tpl, "AWS::SageMaker::EndpointConfig")[strings.TrimSuffix(strings.TrimPrefix(flatten(props(ep)["EndpointConfigName"]), "<"), ".EndpointConfigName>")])
		model := strings.TrimSuffix(strings.TrimPrefix(flatten(cfg["ProductionVariants"].([]interface{})[0].(obj)["ModelName"]), "<"), ".ModelName>")
		role := strings.TrimSuffix(strings.TrimPrefix(flatten(props(resources(tpl, "AWS::SageMaker::Model")[model])["ExecutionRoleArn"]), "<"), ".Arn>")
		return actionResources(roleStatements(t, tpl, role))
	}
	async := roleOf("sentiment-async")
	want := map[string][]string{
		"s3:GetObject":                    {"arn:aws:s3:::my-models/sentiment/model.tar.gz", objects(config.SageMakerInputPrefix)},
		"s3:PutObject":                    {objects(config.SageMakerFailurePrefix), objects(config.SageMakerOutputPrefix)},
		"ecr:BatchGetImage":               {"arn:aws:ecr:us-east-1:111122223333:repository/sentiment"},
		"ecr:GetDownloadUrlForLayer":      {"arn:aws:ecr:us-east-1:111122223333:repository/sentiment"},
		"ecr:BatchCheckLayerAvailability": {"arn:aws:ecr:us-east-1:111122223333:repository/sentiment"},
		"ecr:GetAuthorizationToken":       {"*"},
		"kms:GenerateDataKey":             {"<" + keyID + ".Arn>"},
		"kms:Decrypt":                     {"<" + keyID + ".Arn>"},
		"cloudwatch:PutMetricData":        {"*"},
		"logs:CreateLogGroup":             nil, // checked below
	}
	sort.Strings(want["s3:GetObject"])
	sort.Strings(want["s3:PutObject"])
	for a, w := range want {
		if w != nil && !reflect.DeepEqual(async[a], w) {
			t.Errorf("async role %s on %v, want %v", a, async[a], w)
		}
	}
	if len(async["sns:Publish"]) != 2 || !strings.Contains(async["logs:CreateLogStream"][0], "/aws/sagemaker/Endpoints/sentiment-async") {
		t.Errorf("async role sns %v logs %v", async["sns:Publish"], async["logs:CreateLogStream"])
	}
	for _, a := range []string{"s3:ListBucket", "s3:DeleteObject", "sagemaker:InvokeEndpoint"} {
		if _, ok := async[a]; ok {
			t.Errorf("async role may %s", a)
		}
	}
	rt := roleOf("ranker")
	if !reflect.DeepEqual(rt["s3:GetObject"], []string{"arn:aws:s3:::my-models/ranker/v7.tar.gz", "arn:aws:s3:::my-models/ranker/v8.tar.gz"}) ||
		!reflect.DeepEqual(rt["ecr:BatchGetImage"], []string{"arn:aws:ecr:us-east-1:111122223333:repository/ranker"}) {
		t.Errorf("real-time role %v", rt)
	}
	for _, a := range []string{"sns:Publish", "kms:Decrypt", "s3:PutObject"} {
		if _, ok := rt[a]; ok {
			t.Errorf("real-time role may %s", a)
		}
	}
	mm := roleOf("tenants-mm")
	if !reflect.DeepEqual(mm["s3:GetObject"], []string{"arn:aws:s3:::my-models/tenants/*"}) || !reflect.DeepEqual(mm["s3:ListBucket"], []string{"arn:aws:s3:::my-models"}) {
		t.Errorf("multi-model role %v", mm)
	}

	var arns []string
	for _, e := range s.SageMakerEndpoints {
		arns = append(arns, "arn:aws:sagemaker:"+testRegion+":"+testAccount+":endpoint/"+e)
	}
	sort.Strings(arns)
	mcpRole, _ := oneResource(t, tpl, "AWS::IAM::Role", "FunctionsMcpRole")
	mcp := actionResources(roleStatements(t, tpl, mcpRole)) // managed policies included
	for _, a := range []string{"sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointAsync"} {
		if !reflect.DeepEqual(mcp[a], arns) {
			t.Errorf("mcp %s on %v, want %v", a, mcp[a], arns)
		}
	}
	// mcp's describe_endpoint and shift_traffic run in the providers function.
	provRole, _ := oneResource(t, tpl, "AWS::IAM::Role", "ProvidersRole")
	prov := actionResources(roleStatements(t, tpl, provRole))
	for _, a := range []string{"sagemaker:DescribeEndpoint", "sagemaker:UpdateEndpointWeightsAndCapacities"} {
		if !reflect.DeepEqual(prov[a], arns) {
			t.Errorf("providers %s on %v, want %v", a, prov[a], arns)
		}
		if _, ok := mcp[a]; ok {
			t.Errorf("mcp may %s itself", a)
		}
	}
	if !reflect.DeepEqual(prov["cloudwatch:GetMetricData"], []string{"*"}) {
		t.Errorf("providers cloudwatch:GetMetricData on %v", prov["cloudwatch:GetMetricData"])
	}
	recRole, _ := oneResource(t, tpl, "AWS::IAM::Role", "ReconcilerRole")
	rec := actionResources(roleStatements(t, tpl, recRole))
	if !reflect.DeepEqual(rec["sagemaker:InvokeEndpointAsync"], arns) || !slices.Contains(rec["s3:GetObject"], objects(config.SageMakerInputPrefix)) {
		t.Errorf("reconciler invoke %v read %v", rec["sagemaker:InvokeEndpointAsync"], rec["s3:GetObject"])
	}
	if _, ok := rec["sagemaker:InvokeEndpoint"]; ok {
		t.Error("reconciler may call real-time endpoints")
	}
	_, fn := oneResource(t, tpl, "AWS::Lambda::Function", "FunctionsMcpFunction")
	env := props(fn)["Environment"].(obj)["Variables"].(obj)
	if env[config.EnvSageMakerEndpoints] != strings.Join(s.SageMakerEndpoints, ",") || env[config.EnvSageMakerOperators] != "arn:aws:iam::123456789012:role/Ops,oncall" ||
		env[config.EnvSageMakerInvocationTimeouts] != "sentiment-async=900" {
		t.Errorf("mcp env %v %v %v", env[config.EnvSageMakerEndpoints], env[config.EnvSageMakerOperators], env[config.EnvSageMakerInvocationTimeouts])
	}
}

func TestEndpointNagAndLint(t *testing.T) {
	_, st, tpl := endpointsStack(t)
	ann := assertions.Annotations_FromStack(st.Stack)
	for _, e := range *ann.FindError(jsii.String("*"), assertions.Match_AnyValue()) {
		t.Errorf("cdk-nag %s: %v", *e.Id, e.Entry.Data)
	}
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Fatal("cfn-lint is not on PATH: install it (pip install cfn-lint) — the infra tests require it")
	}
	b, _ := json.MarshalIndent(tpl, "", " ")
	path := filepath.Join(t.TempDir(), "endpoints.template.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "--regions", testRegion, "--", path).CombinedOutput(); err != nil {
		t.Fatalf("cfn-lint: %v\n%s", err, out)
	}
}
