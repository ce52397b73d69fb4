package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// One jsii session (one node process) for every test: the app and its stacks are built
// once in TestMain and the synthesized templates are shared.

const (
	testAccount = "123456789012"
	testRegion  = "us-east-1"
)

type synthesized struct {
	settings Settings
	stack    *Stack
	tmpl     assertions.Template
	json     map[string]interface{}
}

var fx struct {
	assetDir string
	outdir   string      // cdk.out of the shared app: assertions read it after synth
	main     synthesized // defaults from context, cdk-nag applied
	alt      synthesized // other models and job prefix, same app
}

var altModels = []string{
	"anthropic.claude-3-haiku-20240307-v1:0",
	"eu.anthropic.claude-3-7-sonnet-20250219-v1:0",
	"global.anthropic.claude-sonnet-4-5-20250929-v1:0",
}

func TestMain(m *testing.M) {
	code := func() int {
		if err := setup(); err != nil {
			fmt.Fprintln(os.Stderr, "infra test setup:", err)
			return 1
		}
		defer os.RemoveAll(fx.assetDir)
		defer os.RemoveAll(fx.outdir)
		return m.Run()
	}()
	jsii.Close()
	os.Exit(code)
}

func setup() (err error) {
	// jsii reports construct errors as panics; turn them into a setup error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	fx.assetDir, err = os.MkdirTemp("", "mcpbatch-infra-assets-")
	if err != nil {
		return err
	}
	for _, fn := range FunctionNames {
		if err := os.MkdirAll(filepath.Join(fx.assetDir, fn), 0o755); err != nil {
			return err
		}
		// Placeholder bootstrap: fixed content, so asset hashes (and the template) are stable.
		if err := os.WriteFile(filepath.Join(fx.assetDir, fn, "bootstrap"), []byte("#!/bin/sh\n# placeholder "+fn+"\n"), 0o755); err != nil {
			return err
		}
	}
	fx.outdir, err = os.MkdirTemp("", "mcpbatch-infra-cdkout-")
	if err != nil {
		return err
	}

	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(fx.outdir), Context: &map[string]interface{}{}})
	for k, v := range featureFlags {
		app.Node().SetContext(jsii.String(k), v)
	}
	app.Node().SetContext(jsii.String(CtxAssetDir), fx.assetDir)
	settings, err := SettingsFromContext(app.Node())
	if err != nil {
		return err
	}
	env := awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String(testAccount), Region: jsii.String(testRegion)}}

	st, err := NewStack(app, "Mcpbatch", &StackProps{StackProps: env, Settings: settings})
	if err != nil {
		return err
	}
	CheckWithNag(st.Stack, false)

	altSettings := settings
	altSettings.StackName = "mcpbatch-alt"
	altSettings.JobPrefix = "alt"
	altSettings.BedrockModels = altModels
	altSettings.LogLevel = "debug"
	altSettings.SageMakerEndpoints = altSageMakerEndpoints
	altSettings.ModelsOverride = altModelsOverride
	if altSettings.Catalog, err = model.Default().Merge([]byte(altModelsOverride)); err != nil {
		return err
	}
	alt, err := NewStack(app, "McpbatchAlt", &StackProps{StackProps: env, Settings: altSettings})
	if err != nil {
		return err
	}

	fx.main = synthesized{settings: settings, stack: st, tmpl: assertions.Template_FromStack(st.Stack, nil)}
	fx.alt = synthesized{settings: altSettings, stack: alt, tmpl: assertions.Template_FromStack(alt.Stack, nil)}
	fx.main.json = *fx.main.tmpl.ToJSON()
	fx.alt.json = *fx.alt.tmpl.ToJSON()
	return nil
}

// must runs an assertions call, turning its panic into a test error.
func must(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%v", r)
		}
	}()
	f()
}

// --- template helpers -------------------------------------------------------------

type obj = map[string]interface{}

func resources(tpl obj, typ string) map[string]obj {
	out := map[string]obj{}
	for id, r := range tpl["Resources"].(obj) {
		if r.(obj)["Type"] == typ {
			out[id] = r.(obj)
		}
	}
	return out
}

func props(r obj) obj {
	p, _ := r["Properties"].(obj)
	return p
}

// oneResource returns the single resource of typ whose logical id starts with prefix.
func oneResource(t *testing.T, tpl obj, typ, prefix string) (string, obj) {
	t.Helper()
	var ids []string
	for id := range resources(tpl, typ) {
		if strings.HasPrefix(id, prefix) {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("want one %s with logical id %s*, got %v", typ, prefix, ids)
	}
	return ids[0], resources(tpl, typ)[ids[0]]
}

// flatten renders a CloudFormation value as a string: pseudo parameters resolved for the
// test environment, references as <LogicalId> / <LogicalId.Attr>.
func flatten(v interface{}) string {
	switch x := v.(type) {
	case string:
		return x
	case obj:
		if ref, ok := x["Ref"].(string); ok {
			switch ref {
			case "AWS::Partition":
				return "aws"
			case "AWS::Region":
				return testRegion
			case "AWS::AccountId":
				return testAccount
			case "AWS::URLSuffix":
				return "amazonaws.com"
			}
			return "<" + ref + ">"
		}
		if ga, ok := x["Fn::GetAtt"].([]interface{}); ok {
			return fmt.Sprintf("<%v.%v>", ga[0], ga[1])
		}
		if j, ok := x["Fn::Join"].([]interface{}); ok {
			var parts []string
			for _, p := range j[1].([]interface{}) {
				parts = append(parts, flatten(p))
			}
			return strings.Join(parts, j[0].(string))
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func strs(v interface{}) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []interface{}:
		var out []string
		for _, e := range x {
			out = append(out, flatten(e))
		}
		return out
	default:
		return []string{flatten(x)}
	}
}

type statement struct {
	Sid       string
	Actions   []string
	Resources []string
	Condition obj
}

func toStatements(doc interface{}) []statement {
	var out []statement
	for _, s := range doc.(obj)["Statement"].([]interface{}) {
		m := s.(obj)
		if m["Effect"] != "Allow" {
			continue
		}
		st := statement{Actions: strs(m["Action"]), Resources: strs(m["Resource"])}
		st.Sid, _ = m["Sid"].(string)
		st.Condition, _ = m["Condition"].(obj)
		out = append(out, st)
	}
	return out
}

// roleStatements collects the Allow statements of a role: inline policies and every
// policy attached to it (rolePolicies).
func roleStatements(t *testing.T, tpl obj, roleID string) []statement {
	t.Helper()
	role := resources(tpl, "AWS::IAM::Role")[roleID]
	if role == nil {
		t.Fatalf("no role %s", roleID)
	}
	var out []statement
	if pols, ok := props(role)["Policies"].([]interface{}); ok {
		for _, p := range pols {
			out = append(out, toStatements(p.(obj)["PolicyDocument"])...)
		}
	}
	for _, pol := range rolePolicies(tpl, roleID) {
		out = append(out, toStatements(props(pol)["PolicyDocument"])...)
	}
	return out
}

// rolePolicies are the policies attached to a role: AWS::IAM::Policy, and the
// AWS::IAM::ManagedPolicy CDK adds when a role's statements overflow one policy.
func rolePolicies(tpl obj, roleID string) []obj {
	var out []obj
	for _, typ := range []string{"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"} {
		for _, pol := range resources(tpl, typ) {
			roles, _ := props(pol)["Roles"].([]interface{})
			for _, r := range roles {
				if flatten(r) == "<"+roleID+">" {
					out = append(out, pol)
				}
			}
		}
	}
	return out
}

// actionResources maps each action of a role to the sorted resources it is allowed on.
func actionResources(stmts []statement) map[string][]string {
	out := map[string][]string{}
	for _, s := range stmts {
		for _, a := range s.Actions {
			out[a] = append(out[a], s.Resources...)
		}
	}
	for a := range out {
		sort.Strings(out[a])
		out[a] = slices.Compact(out[a])
	}
	return out
}

func bedrockRoleID(t *testing.T, tpl obj) string {
	t.Helper()
	id, _ := oneResource(t, tpl, "AWS::IAM::Role", "BedrockServiceRole")
	return id
}

// altModelsOverride is the alt stack's catalog override (a negotiated price).
const altModelsOverride = `{"models":[{"id":"amazon.nova-pro-v1:0","prices":{"input":0.7}}]}`

// Every function of a stack with a catalog override reads it; without one, none carries it.
func TestModelsOverrideEnv(t *testing.T) {
	for _, sx := range []struct {
		name string
		tpl  obj
		want interface{}
	}{{"main", fx.main.json, nil}, {"alt", fx.alt.json, altModelsOverride}} {
		n := 0
		for id, r := range resources(sx.tpl, "AWS::Lambda::Function") {
			env, _ := props(r)["Environment"].(obj)
			vars, _ := env["Variables"].(obj)
			if vars[config.EnvTable] == nil {
				continue // not one of ours (a CDK custom resource)
			}
			if vars[model.EnvModelsJSON] != sx.want {
				t.Errorf("%s %s: %s = %v, want %v", sx.name, id, model.EnvModelsJSON, vars[model.EnvModelsJSON], sx.want)
			}
			n++
		}
		if n < len(FunctionNames)-1 { // providers makes calls only: no table, no catalog
			t.Errorf("%s: %d functions checked", sx.name, n)
		}
	}
}

const appProfileARN = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123"

// expectedModelArns is written independently of ModelArns, from the catalog's
// data: each model's base id as a foundation model (this region, or any
// region when the catalog lists a cross-region profile for it), and every
// inference profile it lists (this region and account).
func expectedModelArns(models []string) []string {
	set := map[string]bool{}
	for _, id := range models {
		m, ok := model.Default().Lookup(id)
		if !ok {
			panic("test model not in the catalog: " + id)
		}
		region := testRegion // called only here: this region
		if len(m.Profiles) > 0 {
			region = "*" // a cross-region profile routes to the base model in other regions
		}
		set["arn:aws:bedrock:"+region+"::foundation-model/"+m.ID] = true
		for _, p := range m.Profiles {
			set["arn:aws:bedrock:"+testRegion+":"+testAccount+":inference-profile/"+p] = true
		}
	}
	var out []string
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

const jobArns = "arn:aws:bedrock:" + testRegion + ":" + testAccount + ":model-invocation-job/*"

// --- tests -------------------------------------------------------------------------

func TestSettingsFromContext(t *testing.T) {
	defaults := Settings{
		StackName: DefaultStackName, JobPrefix: config.DefaultJobPrefix,
		BedrockModels: config.DefaultBedrockModels, AssetDir: DefaultAssetDir, LogLevel: DefaultLogLevel, Auth: config.AuthIAM,
		McpReservedConcurrency: DefaultMcpReservedConcurrency,
	}
	cases := []struct {
		name    string
		ctx     map[string]interface{}
		want    func(Settings) Settings
		wantErr string
	}{
		{name: "defaults", want: func(s Settings) Settings { return s }},
		{
			name: "cli overrides (-c key=value strings)",
			ctx: map[string]interface{}{
				CtxStackName: "team-a", CtxJobPrefix: "teama", CtxAssetDir: "/tmp/x", CtxLogLevel: "DEBUG",
				CtxBedrockModels: " anthropic.claude-3-haiku-20240307-v1:0 , eu.anthropic.claude-3-7-sonnet-20250219-v1:0,",
			},
			want: func(s Settings) Settings {
				s.StackName, s.JobPrefix, s.AssetDir, s.LogLevel = "team-a", "teama", "/tmp/x", "debug"
				s.BedrockModels = []string{"anthropic.claude-3-haiku-20240307-v1:0", "eu.anthropic.claude-3-7-sonnet-20250219-v1:0"}
				return s
			},
		},
		{
			name: "models as a JSON array",
			ctx:  map[string]interface{}{CtxBedrockModels: []interface{}{"amazon.nova-pro-v1:0", "us.amazon.nova-pro-v1:0"}},
			want: func(s Settings) Settings {
				s.BedrockModels = []string{"amazon.nova-pro-v1:0", "us.amazon.nova-pro-v1:0"}
				return s
			},
		},
		{name: "job prefix with underscore", ctx: map[string]interface{}{CtxJobPrefix: "my_jobs"}, wantErr: CtxJobPrefix},
		{name: "job prefix too long", ctx: map[string]interface{}{CtxJobPrefix: strings.Repeat("a", 31)}, wantErr: CtxJobPrefix},
		{name: "unknown log level", ctx: map[string]interface{}{CtxLogLevel: "verbose"}, wantErr: CtxLogLevel},
		{name: "not a model id", ctx: map[string]interface{}{CtxBedrockModels: "claude"}, wantErr: CtxBedrockModels},
		{name: "duplicate model", ctx: map[string]interface{}{CtxBedrockModels: "amazon.nova-pro-v1:0,amazon.nova-pro-v1:0"}, wantErr: "twice"},
		{name: "bad stack name", ctx: map[string]interface{}{CtxStackName: "1stack"}, wantErr: CtxStackName},
		{name: "model not in the catalog", ctx: map[string]interface{}{CtxBedrockModels: "acme.unknown-v1:0"}, wantErr: "not a Bedrock model of the model catalog"},
		{name: "anthropic API model in bedrockModels", ctx: map[string]interface{}{CtxBedrockModels: "claude.sonnet-4-5"}, wantErr: CtxBedrockModels},
		{name: "catalog override not JSON", ctx: map[string]interface{}{CtxModels: "{models"}, wantErr: CtxModels},
		{name: "catalog override of the wrong type", ctx: map[string]interface{}{CtxModels: 3.0}, wantErr: CtxModels},
		{
			name: "catalog override adds an application inference profile",
			ctx: map[string]interface{}{
				CtxModels:        `{"models":[{"id":"anthropic.claude-haiku-4-5-20251001-v1:0","aliases":["` + appProfileARN + `"]}]}`,
				CtxBedrockModels: appProfileARN,
			},
			want: func(s Settings) Settings {
				s.BedrockModels = []string{appProfileARN}
				s.ModelsOverride = `{"models":[{"id":"anthropic.claude-haiku-4-5-20251001-v1:0","aliases":["` + appProfileARN + `"]}]}`
				return s
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := awscdk.NewApp(&awscdk.AppProps{Context: &tc.ctx})
			got, err := SettingsFromContext(app.Node())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got.ModelsOverride != "") != (got.Catalog != nil) {
				t.Fatalf("override %q but catalog %v", got.ModelsOverride, got.Catalog)
			}
			got.Catalog = nil
			if want := tc.want(defaults); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestCheckAssets(t *testing.T) {
	s := fx.main.settings
	if err := s.CheckAssets(); err != nil {
		t.Fatalf("placeholder assets: %v", err)
	}
	s.AssetDir = t.TempDir()
	err := s.CheckAssets()
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("empty asset dir: err = %v, want a `make build` hint", err)
	}
}

func TestCdkJSON(t *testing.T) {
	b, err := os.ReadFile("../cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		App       string                 `json:"app"`
		Notices   *bool                  `json:"notices"`
		Telemetry *bool                  `json:"cli-telemetry"`
		Context   map[string]interface{} `json:"context"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want interface{}
	}{
		{"app", c.App, "go run ./infra"},
		{"notices off", c.Notices != nil && !*c.Notices, true},
		{"telemetry off", c.Telemetry != nil && !*c.Telemetry, true},
		{"jobPrefix default", c.Context[CtxJobPrefix], config.DefaultJobPrefix},
		{"bedrockModels default", c.Context[CtxBedrockModels], strings.Join(config.DefaultBedrockModels, ",")},
		{"assetDir default", c.Context[CtxAssetDir], DefaultAssetDir},
		{"logLevel default", c.Context[CtxLogLevel], DefaultLogLevel},
		{"stackName default", c.Context[CtxStackName], DefaultStackName},
		{"auth default", c.Context[CtxAuth], config.AuthIAM},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Fatalf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

func TestTable(t *testing.T) {
	tpl := fx.main.tmpl
	key := func(name, typ string) obj { return obj{"AttributeName": name, "KeyType": typ} }
	gsi := func(name string) obj {
		return obj{
			"IndexName":  name,
			"KeySchema":  []interface{}{key(name+"PK", "HASH"), key(name+"SK", "RANGE")},
			"Projection": obj{"ProjectionType": "ALL"},
		}
	}
	cases := []struct {
		name  string
		props obj
	}{
		{"keys", obj{"KeySchema": []interface{}{key("PK", "HASH"), key("SK", "RANGE")}}},
		{"attribute types", obj{"AttributeDefinitions": assertions.Match_ArrayWith(&[]interface{}{
			obj{"AttributeName": "PK", "AttributeType": "S"}, obj{"AttributeName": "SK", "AttributeType": "S"},
			obj{"AttributeName": "GSI1PK", "AttributeType": "S"}, obj{"AttributeName": "GSI1SK", "AttributeType": "S"},
			obj{"AttributeName": "GSI2PK", "AttributeType": "S"}, obj{"AttributeName": "GSI2SK", "AttributeType": "S"},
		})}},
		{"on demand", obj{"BillingMode": "PAY_PER_REQUEST"}},
		{"GSIs", obj{"GlobalSecondaryIndexes": assertions.Match_ArrayEquals(&[]interface{}{gsi("GSI1"), gsi("GSI2")})}},
		{"TTL", obj{"TimeToLiveSpecification": obj{"AttributeName": "expiresAt", "Enabled": true}}},
		{"PITR", obj{"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true}}},
		// SSEEnabled without a key = KMS with the AWS managed key (aws/dynamodb).
		{"AWS-managed encryption", obj{"SSESpecification": assertions.Match_ObjectEquals(&map[string]interface{}{"SSEEnabled": true})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must(t, func() { tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), tc.props) })
		})
	}
	t.Run("retained", func(t *testing.T) {
		must(t, func() {
			tpl.HasResource(jsii.String("AWS::DynamoDB::Table"), obj{"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"})
		})
	})
	t.Run("one table", func(t *testing.T) {
		must(t, func() { tpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(1)) })
	})
}

func TestBuckets(t *testing.T) {
	tpl := fx.main.json
	dataID, data := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	logsID, logs := oneResource(t, tpl, "AWS::S3::Bucket", "DataAccessLogs")
	blockAll := obj{"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true}
	sse := []interface{}{obj{"ServerSideEncryptionByDefault": obj{"SSEAlgorithm": "AES256"}}}

	for _, b := range []struct {
		name string
		id   string
		r    obj
	}{{"data", dataID, data}, {"access logs", logsID, logs}} {
		t.Run(b.name+" block public access", func(t *testing.T) {
			if got := props(b.r)["PublicAccessBlockConfiguration"]; !reflect.DeepEqual(got, blockAll) {
				t.Fatalf("PublicAccessBlockConfiguration = %v", got)
			}
		})
		t.Run(b.name+" S3-managed encryption", func(t *testing.T) {
			got := props(b.r)["BucketEncryption"].(obj)["ServerSideEncryptionConfiguration"]
			if !reflect.DeepEqual(got, sse) {
				t.Fatalf("encryption = %v", got)
			}
		})
		t.Run(b.name+" TLS only", func(t *testing.T) {
			found := false
			for _, p := range resources(tpl, "AWS::S3::BucketPolicy") {
				if flatten(props(p)["Bucket"]) != "<"+b.id+">" {
					continue
				}
				for _, s := range props(p)["PolicyDocument"].(obj)["Statement"].([]interface{}) {
					m := s.(obj)
					c, _ := m["Condition"].(obj)
					if m["Effect"] == "Deny" && c != nil && reflect.DeepEqual(c["Bool"], obj{"aws:SecureTransport": "false"}) {
						found = true
					}
				}
			}
			if !found {
				t.Fatal("no Deny aws:SecureTransport=false statement")
			}
		})
		t.Run(b.name+" retained", func(t *testing.T) {
			if b.r["DeletionPolicy"] != "Retain" {
				t.Fatalf("DeletionPolicy = %v", b.r["DeletionPolicy"])
			}
		})
	}

	t.Run("versioning off", func(t *testing.T) {
		if v, ok := props(data)["VersioningConfiguration"]; ok {
			t.Fatalf("VersioningConfiguration = %v", v)
		}
	})
	t.Run("access logs to the logs bucket", func(t *testing.T) {
		lc, _ := props(data)["LoggingConfiguration"].(obj)
		if lc == nil || flatten(lc["DestinationBucketName"]) != "<"+logsID+">" {
			t.Fatalf("LoggingConfiguration = %v", lc)
		}
	})
	t.Run("lifecycle", func(t *testing.T) {
		got := map[string]string{}
		for _, r := range props(data)["LifecycleConfiguration"].(obj)["Rules"].([]interface{}) {
			m := r.(obj)
			if m["Status"] != "Enabled" {
				t.Errorf("rule %v not enabled", m["Id"])
			}
			prefix, _ := m["Prefix"].(string)
			if a, ok := m["AbortIncompleteMultipartUpload"].(obj); ok {
				got["abort "+prefix] = fmt.Sprint(a["DaysAfterInitiation"])
			}
			if d, ok := m["ExpirationInDays"]; ok {
				got["expire "+prefix] = fmt.Sprint(d)
			}
		}
		want := map[string]string{
			"abort ":          "1",
			"expire input/":   fmt.Sprint(keptFileDays),
			"expire output/":  fmt.Sprint(rawFileDays),
			"expire results/": fmt.Sprint(keptFileDays),
			"expire exports/": fmt.Sprint(keptFileDays),
			"expire jobs/":    fmt.Sprint(keptFileDays),
			"expire uploads/": fmt.Sprint(rawFileDays),
			"expire cache/":   fmt.Sprint(keptFileDays),
		}
		addSageMakerLifecycle(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("lifecycle = %v, want %v", got, want)
		}
	})
}

func TestBedrockRole(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		tpl := sx.json
		roleID := bedrockRoleID(t, tpl)
		role := resources(tpl, "AWS::IAM::Role")[roleID]
		t.Run(sx.settings.StackName+" trust", func(t *testing.T) {
			stmts := props(role)["AssumeRolePolicyDocument"].(obj)["Statement"].([]interface{})
			if len(stmts) != 1 {
				t.Fatalf("trust statements = %v", stmts)
			}
			s := stmts[0].(obj)
			if !reflect.DeepEqual(s["Principal"], obj{"Service": "bedrock.amazonaws.com"}) || s["Action"] != "sts:AssumeRole" {
				t.Fatalf("trust = %v", s)
			}
			c := s["Condition"].(obj)
			if got := flatten(c["StringEquals"].(obj)["aws:SourceAccount"]); got != testAccount {
				t.Errorf("aws:SourceAccount = %s", got)
			}
			if got := flatten(c["ArnLike"].(obj)["aws:SourceArn"]); got != jobArns {
				t.Errorf("aws:SourceArn = %s, want %s", got, jobArns)
			}
		})
		t.Run(sx.settings.StackName+" InvokeModel exactly the allowed models", func(t *testing.T) {
			ar := actionResources(roleStatements(t, tpl, roleID))
			if want := expectedModelArns(sx.settings.BedrockModels); !reflect.DeepEqual(ar["bedrock:InvokeModel"], want) {
				t.Fatalf("InvokeModel on\n%v\nwant\n%v", strings.Join(ar["bedrock:InvokeModel"], "\n"), strings.Join(want, "\n"))
			}
		})
		t.Run(sx.settings.StackName+" S3 scope", func(t *testing.T) {
			dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
			stmts := roleStatements(t, tpl, roleID)
			ar := actionResources(stmts)
			want := map[string][]string{
				"bedrock:InvokeModel": ar["bedrock:InvokeModel"],
				"s3:GetObject":        {"<" + dataID + ".Arn>/input/*"},
				"s3:ListBucket":       {"<" + dataID + ".Arn>"},
				"s3:PutObject":        {"<" + dataID + ".Arn>/output/*"},
			}
			if !reflect.DeepEqual(ar, want) {
				t.Fatalf("actions = %v\nwant %v", ar, want)
			}
			for _, s := range stmts {
				if slices.Contains(s.Actions, "s3:ListBucket") {
					got := s.Condition["StringLike"].(obj)["s3:prefix"]
					if !reflect.DeepEqual(got, []interface{}{"input/*", "output/*"}) {
						t.Fatalf("ListBucket s3:prefix = %v", got)
					}
				}
			}
		})
	}
	t.Run("model list follows context", func(t *testing.T) {
		a := actionResources(roleStatements(t, fx.main.json, bedrockRoleID(t, fx.main.json)))["bedrock:InvokeModel"]
		b := actionResources(roleStatements(t, fx.alt.json, bedrockRoleID(t, fx.alt.json)))["bedrock:InvokeModel"]
		if reflect.DeepEqual(a, b) {
			t.Fatal("different bedrockModels produced the same InvokeModel resources")
		}
		if !slices.Contains(b, "arn:aws:bedrock:"+testRegion+":"+testAccount+":inference-profile/global.anthropic.claude-sonnet-4-5-20250929-v1:0") {
			t.Fatalf("alt stack misses the global profile: %v", b)
		}
	})
}

type fnSpec struct {
	name    string // logical id prefix under Functions
	asset   string
	timeout float64
	memory  float64
	async   bool
}

var fnSpecs = []fnSpec{
	{"FunctionsMcp", FnMCP, 90, 512, false},
	{"FunctionsBedrockEvents", FnBedrockEvents, 30, 256, true},
	{"FunctionsIngest", FnIngest, 900, 1024, true},
	{"Validate", FnValidate, 900, 2048, true},
}

func TestFunctions(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		tpl := sx.json
		s := sx.settings
		for _, f := range fnSpecs {
			_, fn := oneResource(t, tpl, "AWS::Lambda::Function", f.name+"Function")
			p := props(fn)
			t.Run(s.StackName+"/"+f.asset, func(t *testing.T) {
				checks := []struct {
					what      string
					got, want interface{}
				}{
					{"runtime", p["Runtime"], "provided.al2023"},
					{"architecture", p["Architectures"], []interface{}{"arm64"}},
					{"handler", p["Handler"], "bootstrap"},
					{"timeout", p["Timeout"], f.timeout},
					{"memory", p["MemorySize"], f.memory},
					{"JSON logs", p["LoggingConfig"].(obj)["LogFormat"], "JSON"},
				}
				for _, c := range checks {
					if !reflect.DeepEqual(c.got, c.want) {
						t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
					}
				}
				env := p["Environment"].(obj)["Variables"].(obj)
				literal := map[string]string{
					config.EnvJobPrefix:     s.JobPrefix,
					config.EnvBedrockModels: strings.Join(s.BedrockModels, ","),
					config.EnvLogLevel:      s.LogLevel,
					// Per stack, so two stacks' metrics never mix (monitoring.go).
					config.EnvMetricsNamespace: MetricsNamespace(s.StackName),
				}
				for _, name := range []string{config.EnvTable, config.EnvBucket, config.EnvBus, config.EnvBedrockRoleARN,
					config.EnvJobPrefix, config.EnvBedrockModels, config.EnvLogLevel, config.EnvMetricsNamespace} {
					v, ok := env[name]
					if !ok {
						t.Errorf("env %s missing", name)
						continue
					}
					if want, ok := literal[name]; ok && v != want {
						t.Errorf("env %s = %v, want %s", name, v, want)
					}
				}
				overrides := 0
				if s.ModelsOverride != "" {
					overrides = 1 // MCPBATCH_MODELS_JSON
				}
				if want := 8 + overrides + sageMakerEnvCount(s, f.asset) + extraEnv[f.asset]; len(env) != want {
					t.Errorf("env has %d variables, want %d: %v", len(env), want, env)
				}
				refs := map[string]string{
					config.EnvTable: "DataTable", config.EnvBucket: "DataBucket",
					config.EnvBus: "Bus", config.EnvBedrockRoleARN: "BedrockServiceRole",
				}
				for name, prefix := range refs {
					if got := flatten(env[name]); !strings.HasPrefix(got, "<"+prefix) {
						t.Errorf("env %s = %s, want a reference to %s*", name, got, prefix)
					}
				}
			})
		}
	}
	t.Run("log groups keep 30 days", func(t *testing.T) {
		lgs := resources(fx.main.json, "AWS::Logs::LogGroup")
		if len(lgs) != len(FunctionNames) {
			t.Fatalf("%d log groups", len(lgs))
		}
		for id, lg := range lgs {
			if props(lg)["RetentionInDays"] != float64(30) {
				t.Errorf("%s retention = %v", id, props(lg)["RetentionInDays"])
			}
		}
	})
}

func TestFunctionURL(t *testing.T) {
	mcpID, _ := oneResource(t, fx.main.json, "AWS::Lambda::Function", "FunctionsMcpFunction")
	must(t, func() {
		fx.main.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Url"), obj{
			"AuthType":          "AWS_IAM",
			"InvokeMode":        "RESPONSE_STREAM",
			"TargetFunctionArn": obj{"Fn::GetAtt": []interface{}{mcpID, "Arn"}},
		})
	})
	must(t, func() { fx.main.tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Url"), jsii.Number(1)) })
}

func TestBus(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		t.Run(sx.settings.StackName, func(t *testing.T) {
			must(t, func() {
				sx.tmpl.HasResourceProperties(jsii.String("AWS::Events::EventBus"), obj{"Name": "mcpbatch-" + sx.settings.StackName})
			})
		})
	}
}

func TestRules(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		tpl := sx.json
		busID, _ := oneResource(t, tpl, "AWS::Events::EventBus", "Bus")
		cases := []struct {
			name    string
			rule    string
			fn      string
			onBus   string // "" = default bus
			pattern obj
		}{
			{
				name: "bedrock job state change", rule: "RoutingBedrockJobStateChange", fn: "FunctionsBedrockEvents",
				pattern: obj{
					"source":      []interface{}{config.BedrockEventSource},
					"detail-type": []interface{}{config.BedrockDetailType},
					"account":     []interface{}{testAccount},
					"detail":      obj{"batchJobName": []interface{}{obj{"prefix": sx.settings.JobPrefix + "-"}}},
				},
			},
			{
				name: "job output ready", rule: "RoutingJobOutputReady", fn: "FunctionsIngest", onBus: busID,
				pattern: obj{
					"source":      []interface{}{config.EventSource},
					"detail-type": []interface{}{config.DetailJobOutputReady},
				},
			},
			{
				name: "input validation requested", rule: "ValidateInputValidationRequested", fn: "Validate", onBus: busID,
				pattern: obj{
					"source":      []interface{}{config.EventSource},
					"detail-type": []interface{}{config.DetailInputValidation},
				},
			},
		}
		for _, tc := range cases {
			t.Run(sx.settings.StackName+"/"+tc.name, func(t *testing.T) {
				_, rule := oneResource(t, tpl, "AWS::Events::Rule", tc.rule)
				p := props(rule)
				if !reflect.DeepEqual(p["EventPattern"], tc.pattern) {
					t.Errorf("EventPattern = %v\nwant %v", p["EventPattern"], tc.pattern)
				}
				if tc.onBus == "" {
					if b, ok := p["EventBusName"]; ok {
						t.Errorf("rule should be on the default bus, is on %v", b)
					}
				} else if got := flatten(p["EventBusName"]); got != "<"+tc.onBus+">" {
					t.Errorf("EventBusName = %s, want <%s>", got, tc.onBus)
				}
				fnID, _ := oneResource(t, tpl, "AWS::Lambda::Function", tc.fn+"Function")
				dlqID, _ := oneResource(t, tpl, "AWS::SQS::Queue", tc.fn+"DLQ")
				targets := p["Targets"].([]interface{})
				if len(targets) != 1 {
					t.Fatalf("targets = %v", targets)
				}
				tg := targets[0].(obj)
				if got := flatten(tg["Arn"]); got != "<"+fnID+".Arn>" {
					t.Errorf("target = %s", got)
				}
				if got := flatten(tg["DeadLetterConfig"].(obj)["Arn"]); got != "<"+dlqID+".Arn>" {
					t.Errorf("target DLQ = %s, want <%s.Arn>", got, dlqID)
				}
				rp := tg["RetryPolicy"].(obj)
				if rp["MaximumRetryAttempts"] != float64(targetRetryAttempts) || rp["MaximumEventAgeInSeconds"] != float64(targetMaxEventAgeHr*3600) {
					t.Errorf("RetryPolicy = %v", rp)
				}
				// Lambda's async on-failure destination points at the same queue.
				found := false
				for _, c := range resources(tpl, "AWS::Lambda::EventInvokeConfig") {
					cp := props(c)
					if flatten(cp["FunctionName"]) != "<"+fnID+">" {
						continue
					}
					found = true
					if got := flatten(cp["DestinationConfig"].(obj)["OnFailure"].(obj)["Destination"]); got != "<"+dlqID+".Arn>" {
						t.Errorf("onFailure = %s", got)
					}
					if cp["MaximumRetryAttempts"] != float64(asyncRetryAttempts) {
						t.Errorf("MaximumRetryAttempts = %v", cp["MaximumRetryAttempts"])
					}
				}
				if !found {
					t.Error("no EventInvokeConfig (onFailure) for the function")
				}
			})
		}
	}
	t.Run("DLQs encrypted and TLS only", func(t *testing.T) {
		qs := resources(fx.main.json, "AWS::SQS::Queue")
		// Every async function (all but mcp and providers) has its DLQ, and the
		// validation queue (fanout.go) has its own.
		if want := len(FunctionNames) - 2 + 2; len(qs) != want {
			t.Fatalf("%d queues, want %d", len(qs), want)
		}
		for id, q := range qs {
			if props(q)["SqsManagedSseEnabled"] != true {
				t.Errorf("%s not encrypted: %v", id, props(q))
			}
			tlsOnly := false
			for _, p := range resources(fx.main.json, "AWS::SQS::QueuePolicy") {
				if !slices.Contains(strs(props(p)["Queues"]), "<"+id+">") {
					continue
				}
				for _, s := range props(p)["PolicyDocument"].(obj)["Statement"].([]interface{}) {
					c, _ := s.(obj)["Condition"].(obj)
					if s.(obj)["Effect"] == "Deny" && c != nil && reflect.DeepEqual(c["Bool"], obj{"aws:SecureTransport": "false"}) {
						tlsOnly = true
					}
				}
			}
			if !tlsOnly {
				t.Errorf("%s has no TLS-only policy", id)
			}
		}
	})
}

// storeGrants adds to m what Data.GrantStore gives every function that
// reads or writes jobs: the table, its indexes and the large-job objects.
func storeGrants(m map[string][]string, table, bucket string) map[string][]string {
	for _, a := range tableActions {
		m[a] = []string{table}
	}
	m["dynamodb:Query"] = []string{table, table + "/index/GSI1", table + "/index/GSI2"}
	for _, a := range []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"} {
		m[a] = append(m[a], bucket+"/"+PrefixJobs+"*")
		sort.Strings(m[a])
	}
	return m
}

func TestLeastPrivilege(t *testing.T) {
	tpl := fx.main.json
	tableID, _ := oneResource(t, tpl, "AWS::DynamoDB::Table", "DataTable")
	dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	busID, _ := oneResource(t, tpl, "AWS::Events::EventBus", "Bus")
	bedrockRole := bedrockRoleID(t, tpl)
	table := "<" + tableID + ".Arn>"
	objects := func(prefix string) string { return "<" + dataID + ".Arn>/" + prefix + "*" }
	bucket := "<" + dataID + ".Arn>"
	bus := "<" + busID + ".Arn>"

	tableGrants := func(m map[string][]string) { storeGrants(m, table, bucket) }
	sorted := func(s ...string) []string { sort.Strings(s); return s }

	mcp := map[string][]string{
		// cache/: the result cache's index, read and written by submit_batch reuse.
		"s3:GetObject": sorted(objects("input/"), objects("output/"), objects("results/"), objects("exports/"), objects("uploads/"), objects("inputs/"), objects("reports/"), objects("cache/")),
		// mcp writes Bedrock's input, exports and (through its presigned PUTs) uploads; never
		// provider output or stored results, which only ingest and the runners write.
		"s3:PutObject":                     sorted(objects("input/"), objects("exports/"), objects("uploads/"), objects("cache/")),
		"s3:AbortMultipartUpload":          sorted(objects("input/"), objects("exports/"), objects("uploads/"), objects("cache/")),
		"s3:ListBucket":                    {bucket},
		"bedrock:CreateModelInvocationJob": sorted(append([]string{jobArns}, expectedModelArns(config.DefaultBedrockModels)...)...),
		"bedrock:GetModelInvocationJob":    {jobArns},
		"bedrock:StopModelInvocationJob":   {jobArns},
		"bedrock:TagResource":              {jobArns},
		"bedrock:ListModelInvocationJobs":  {"*"},
		"bedrock:CountTokens":              foundationModels(expectedModelArns(config.DefaultBedrockModels)),
		"iam:PassRole":                     {"<" + bedrockRole + ".Arn>"},
		"events:PutEvents":                 {bus},
		// get_webhook_secret derives each owner's secret from the master (notify.go).
		"secretsmanager:GetSecretValue": {"<" + webhookSecretID(t, tpl) + ">"},
		// Anthropic and the endpoint control plane are reached through the providers function.
		"lambda:InvokeFunction": {"<" + providersID(t, tpl) + ".Arn>"},
	}
	tableGrants(mcp)
	sageMakerMCPGrants(mcp, objects)
	be := map[string][]string{
		"events:PutEvents":              {bus},
		"bedrock:GetModelInvocationJob": {jobArns},
	}
	tableGrants(be)
	ingest := map[string][]string{
		"events:PutEvents":        {bus},
		"s3:GetObject":            sorted(bucket+"/input/*/ids.jsonl", bucket+"/input/*/ids.txt", bucket+"/input/*/inputs.jsonl", bucket+"/input/*/ordinals.jsonl", objects("output/")),
		"s3:ListBucket":           {bucket},
		"s3:PutObject":            sorted(bucket+"/input/*/redrive/records.jsonl", bucket+"/input/*/redrive/records.ordinals.jsonl", objects("output/"), objects("results/")),
		"s3:AbortMultipartUpload": sorted(bucket+"/input/*/redrive/records.jsonl", bucket+"/input/*/redrive/records.ordinals.jsonl", objects("output/"), objects("results/")),
		// Anthropic results are streamed into output/ before they are ingested.
		"secretsmanager:GetSecretValue": {anthropicSecret(t, tpl)},
	}
	tableGrants(ingest)
	vectorGrants(t, tpl, "FunctionsMcp", mcp, expectedModelArns([]string{"amazon.titan-embed-text-v2:0"})) // the default's embedding model
	vectorGrants(t, tpl, "FunctionsIngest", ingest, nil)

	logs := func(fn string) string {
		id, _ := oneResource(t, tpl, "AWS::Logs::LogGroup", fn+"Logs")
		return "<" + id + ".Arn>"
	}
	cases := []struct {
		fn   string
		want map[string][]string
	}{{"FunctionsMcp", mcp}, {"FunctionsBedrockEvents", be}, {"FunctionsIngest", ingest}}
	for _, tc := range cases {
		t.Run(tc.fn, func(t *testing.T) {
			roleID, role := oneResource(t, tpl, "AWS::IAM::Role", tc.fn+"Role")
			if m, ok := props(role)["ManagedPolicyArns"]; ok {
				t.Errorf("managed policies attached: %v", m)
			}
			got := actionResources(roleStatements(t, tpl, roleID))
			want := map[string][]string{
				"logs:CreateLogStream": {logs(tc.fn)},
				"logs:PutLogEvents":    {logs(tc.fn)},
			}
			for k, v := range tc.want {
				want[k] = v
			}
			if tc.fn != "FunctionsMcp" { // async functions send failures to their DLQ
				dlq, _ := oneResource(t, tpl, "AWS::SQS::Queue", tc.fn+"DLQ")
				for _, a := range []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"} {
					want[a] = []string{"<" + dlq + ".Arn>"}
				}
			}
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
			for _, s := range roleStatements(t, tpl, roleID) {
				if slices.Contains(s.Actions, "bedrock:TagResource") {
					c, _ := s.Condition["ForAllValues:StringLike"].(map[string]interface{})
					if !reflect.DeepEqual(c["aws:TagKeys"], "mcpbatch:*") && !reflect.DeepEqual(c["aws:TagKeys"], []interface{}{"mcpbatch:*"}) {
						t.Errorf("TagResource condition = %v", s.Condition)
					}
				}
				if slices.Contains(s.Actions, "iam:PassRole") {
					c := s.Condition["StringEquals"].(map[string]interface{})
					if c["iam:PassedToService"] != "bedrock.amazonaws.com" {
						t.Errorf("PassRole condition = %v", s.Condition)
					}
				}
			}
		})
	}
	t.Run("no action wildcards anywhere", func(t *testing.T) {
		for id := range resources(tpl, "AWS::IAM::Role") {
			for _, s := range roleStatements(t, tpl, id) {
				for _, a := range s.Actions {
					if strings.Contains(a, "*") {
						t.Errorf("%s: action %s", id, a)
					}
				}
			}
		}
	})
}

func TestOutputs(t *testing.T) {
	outs := fx.main.json["Outputs"].(obj)
	for _, name := range []string{"McpUrl", "TableName", "BucketName", "BusName", "BedrockRoleArn", "McpProxyCommand", "McpClientConfig", "McpCallerPolicy"} {
		t.Run(name, func(t *testing.T) {
			if _, ok := outs[name]; !ok {
				t.Fatalf("output %s missing (have %v)", name, slices.Sorted(func(yield func(string) bool) {
					for k := range outs {
						if !yield(k) {
							return
						}
					}
				}))
			}
		})
	}
	t.Run("caller policy is JSON on the mcp function", func(t *testing.T) {
		mcpID, _ := oneResource(t, fx.main.json, "AWS::Lambda::Function", "FunctionsMcpFunction")
		v := flatten(outs["McpCallerPolicy"].(obj)["Value"])
		var pol struct {
			Statement []struct {
				Action   []string
				Resource string
			}
		}
		if err := json.Unmarshal([]byte(v), &pol); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
		if len(pol.Statement) != 1 || pol.Statement[0].Resource != "<"+mcpID+".Arn>" ||
			!reflect.DeepEqual(pol.Statement[0].Action, []string{"lambda:InvokeFunctionUrl", "lambda:InvokeFunction"}) {
			t.Fatalf("caller policy = %s", v)
		}
	})
	t.Run("client config is JSON with the proxy", func(t *testing.T) {
		v := flatten(outs["McpClientConfig"].(obj)["Value"])
		var cfg struct {
			McpServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(v), &cfg); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
		srv := cfg.McpServers["mcpbatch"]
		if srv.Command != "uvx" || len(srv.Args) < 2 || srv.Args[0] != "mcp-proxy-for-aws@latest" ||
			!strings.HasSuffix(srv.Args[1], "mcp") || !slices.Contains(srv.Args, "lambda") || !slices.Contains(srv.Args, testRegion) {
			t.Fatalf("client config = %s", v)
		}
	})
}

func TestCdkNag(t *testing.T) {
	ann := assertions.Annotations_FromStack(fx.main.stack.Stack)
	t.Run("no unsuppressed AwsSolutions errors", func(t *testing.T) {
		errs := ann.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
		for _, e := range *errs {
			t.Errorf("%s: %v", *e.Id, e.Entry.Data)
		}
	})
	t.Run("no errors at all (incl. CdkNagValidationFailure)", func(t *testing.T) {
		errs := ann.FindError(jsii.String("*"), assertions.Match_AnyValue())
		for _, e := range *errs {
			t.Errorf("%s: %v", *e.Id, e.Entry.Data)
		}
	})
	t.Run("canary: the pack does report findings", func(t *testing.T) {
		// Guards the checks above against passing vacuously (aspect not applied, wrong pack).
		app := awscdk.NewApp(nil)
		st := awscdk.NewStack(app, jsii.String("NagCanary"), nil)
		awss3.NewBucket(st, jsii.String("Plain"), nil)
		CheckWithNag(st, false)
		errs := assertions.Annotations_FromStack(st).FindError(jsii.String("*"),
			assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-S10")))
		if len(*errs) == 0 {
			t.Fatal("cdk-nag did not flag a bucket without enforceSSL")
		}
	})
	t.Run("warnings (reported, not failed)", func(t *testing.T) {
		warns := ann.FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
		for _, w := range *warns {
			t.Logf("cdk-nag warning %s: %v", *w.Id, w.Entry.Data)
		}
		t.Logf("%d cdk-nag warnings", len(*warns))
	})
	t.Run("every suppression is specific", func(t *testing.T) {
		n := 0
		for id, r := range fx.main.json["Resources"].(obj) {
			md, _ := r.(obj)["Metadata"].(obj)
			nag, _ := md["cdk_nag"].(obj)
			if nag == nil {
				continue
			}
			for _, s := range nag["rules_to_suppress"].([]interface{}) {
				m := s.(obj)
				n++
				reason, _ := m["reason"].(string)
				if len(reason) < 60 {
					t.Errorf("%s %v: reason too thin: %q", id, m["id"], reason)
				}
				if m["id"] == "AwsSolutions-IAM5" && m["applies_to"] == nil {
					t.Errorf("%s: blanket IAM5 suppression (no applies_to)", id)
				}
				t.Logf("suppressed %s on %s: %s", m["id"], id, reason)
			}
		}
		if md, ok := fx.main.json["Metadata"].(obj); ok && md["cdk_nag"] != nil {
			t.Errorf("stack-wide suppressions: %v", md["cdk_nag"])
		}
		if n == 0 {
			t.Error("no suppressions found: expected the documented IAM5/S1/SQS3 ones")
		}
	})
}

func TestCfnLint(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Fatal("cfn-lint is not on PATH: install it (pip install cfn-lint) — the infra tests require it")
	}
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		t.Run(sx.settings.StackName, func(t *testing.T) {
			b, err := json.MarshalIndent(sx.json, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), sx.settings.StackName+".template.json")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "--regions", testRegion, "--", path).CombinedOutput()
			if err != nil {
				t.Fatalf("cfn-lint %s: %v\n%s", path, err, out)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	// The same settings and env in a fresh app give the same template: no timestamps,
	// no random names, asset hashes from content only.
	app := newApp(nil)
	st, err := NewStack(app, "Mcpbatch", &StackProps{
		StackProps: awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String(testAccount), Region: jsii.String(testRegion)}},
		Settings:   fx.main.settings,
	})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fx.main.json)
	b, _ := json.Marshal(*assertions.Template_FromStack(st.Stack, nil).ToJSON())
	if string(a) != string(b) {
		t.Fatal("template differs between two syntheses")
	}
}
