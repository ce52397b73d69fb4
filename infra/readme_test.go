package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// readmeText is every README of the repo that describes the stack.
func readmeText(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	// Keyed by the path from the repository root (this package is infra/).
	for _, p := range []string{"infra/README.md", "README.md", "infra/local/README.md", "shared/metrics/README.md", "shared/notify/README.md",
		"shared/mcpserver/README.md", "shared/model/README.md", "shared/index/README.md"} {
		b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

// figure finds re in text (one number group) and returns the number.
func figure(t *testing.T, path, text, re string) float64 {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(strings.Join(strings.Fields(text), " "))
	if m == nil {
		t.Fatalf("%s: no text matching %s", path, re)
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReadmeStack checks what the READMEs say about the stack against the
// synthesized templates: the outputs they name, the alarms' figures, the
// defaults they state and the log line FailedJobs counts.
func TestReadmeStack(t *testing.T) {
	docs := readmeText(t)
	tok := tokenMode(t)

	t.Run("outputs", func(t *testing.T) {
		have := map[string]bool{}
		for _, tpl := range []obj{fx.main.json, fx.alt.json, tok.json} {
			for name := range tpl["Outputs"].(obj) {
				have[name] = true
			}
		}
		named := regexp.MustCompile("outputs? `([A-Z][A-Za-z]+)`|\\$\\(OUT ([A-Z][A-Za-z]+)\\)|<([A-Z][a-z]+[A-Z][A-Za-z]+)>|`([A-Z][A-Za-z]+)` \\([^)]*\\) and `([A-Z][A-Za-z]+)` \\(")
		n := 0
		for path, text := range docs {
			for _, m := range named.FindAllStringSubmatch(strings.Join(strings.Fields(text), " "), -1) {
				for _, name := range m[1:] {
					if name == "" {
						continue
					}
					n++
					if !have[name] {
						t.Errorf("%s: output %s: no stack has it", path, name)
					}
				}
			}
		}
		if n < 10 {
			t.Errorf("found %d outputs named in the READMEs", n)
		}
	})

	t.Run("alarm figures", func(t *testing.T) {
		const path = "shared/metrics/README.md"
		text := docs[path]
		alarms := resources(fx.main.json, "AWS::CloudWatch::Alarm")
		one := func(prefix string) obj {
			t.Helper()
			for id, a := range alarms {
				if strings.HasPrefix(id, prefix) {
					return props(a)
				}
			}
			t.Fatalf("no alarm %s*", prefix)
			return nil
		}
		rate := one("MonitoringFailedJobRate")
		if want := figure(t, path, text, `failed-job rate \(([0-9]+)% or more of the jobs that ended in an hour\)`); rate["Threshold"] != want {
			t.Errorf("failed-job rate threshold %v, README %v", rate["Threshold"], want)
		}
		if !strings.Contains(flatten(rate["Metrics"]), `"Period":3600`) {
			t.Errorf("failed-job rate is not over an hour: %s", flatten(rate["Metrics"]))
		}
		for prov, re := range map[string]string{"bedrock": `([0-9]+) h for Bedrock`, "anthropic": `([0-9]+) h for Anthropic`} {
			if got, want := one("MonitoringStuckJobs" + prov)["Threshold"], figure(t, path, text, re)*3600; got != want {
				t.Errorf("stuck %s jobs after %v s, README %v s", prov, got, want)
			}
		}
		th := one("MonitoringThrottles")
		per := figure(t, path, text, `throttles \([0-9]+\+ per ([0-9]+) minutes`) * 60
		if want := figure(t, path, text, `throttles \(([0-9]+)\+ per`); th["Threshold"] != want || th["Period"] != per ||
			th["EvaluationPeriods"].(float64)*per != figure(t, path, text, `per [0-9]+ minutes for ([0-9]+) minutes\)`)*60 {
			t.Errorf("throttles alarm %v/%v s x %v, README %v+ per %v s for the README's span", th["Threshold"], th["Period"], th["EvaluationPeriods"], want, per)
		}
		errN := figure(t, path, text, `Lambda errors per function \(([0-9]+)\+ in [0-9]+ minutes\)`)
		errPer := figure(t, path, text, `Lambda errors per function \([0-9]+\+ in ([0-9]+) minutes\)`) * 60
		fns := 0
		for id, a := range alarms {
			p := props(a)
			if p["MetricName"] != "Errors" || p["Namespace"] != "AWS/Lambda" || strings.HasPrefix(id, "Reconciler") {
				continue
			}
			fns++
			if p["Threshold"] != errN || p["Period"] != errPer {
				t.Errorf("%s: %v errors per %v s, README %v per %v s", id, p["Threshold"], p["Period"], errN, errPer)
			}
		}
		if fns == 0 {
			t.Error("no Lambda errors alarms")
		}
		// "Failed runs raise the `ReconcilerErrors` alarm".
		for _, name := range regexp.MustCompile("the `([A-Za-z]+)` alarm").FindAllStringSubmatch(docs["shared/mcpserver/README.md"], -1) {
			one(name[1])
		}
	})

	t.Run("namespace and FailedJobs", func(t *testing.T) {
		if !strings.Contains(docs["shared/metrics/README.md"], "namespace `mcpbatch/<stack>`") || MetricsNamespace("x") != "mcpbatch/x" {
			t.Errorf("namespace of stack x is %s; the metrics README says mcpbatch/<stack>", MetricsNamespace("x"))
		}
		// "the JSON log line `"msg":"job finished"` with `"status":"failed"`"
		m := regexp.MustCompile("`\"msg\":\"([^\"]+)\"` with `\"status\":\"([^\"]+)\"`").FindStringSubmatch(docs["infra/README.md"])
		if m == nil {
			t.Fatal("infra/README.md: no FailedJobs log line")
		}
		var pattern string
		for _, f := range resources(fx.main.json, "AWS::Logs::MetricFilter") {
			p := props(f)
			if strings.Contains(flatten(p["MetricTransformations"]), "FailedJobs") {
				pattern = flatten(p["FilterPattern"])
			}
		}
		if !strings.Contains(pattern, `$.msg = "`+m[1]+`"`) || !strings.Contains(pattern, `$.status = "`+m[2]+`"`) {
			t.Errorf("FailedJobs filter %q does not count the README's log line msg=%s status=%s", pattern, m[1], m[2])
		}
	})

	t.Run("defaults", func(t *testing.T) {
		md, infra := docs["shared/mcpserver/README.md"], docs["infra/README.md"]
		_, rec := oneResource(t, fx.main.json, "AWS::Events::Rule", "ReconcilerSchedule")
		if want := "rate(" + strconv.Itoa(int(figure(t, "mcpserver", md, `runs every ([0-9]+) minutes \(`+"`-c reconcileMinutes=N`"))) + " minutes)"; props(rec)["ScheduleExpression"] != want {
			t.Errorf("reconciler schedule %v, README %s", props(rec)["ScheduleExpression"], want)
		}
		_, fn := oneResource(t, fx.main.json, "AWS::Lambda::Function", "ReconcilerFunction")
		env := props(fn)["Environment"].(obj)["Variables"].(obj)
		if want := figure(t, "mcpserver", md, "`-c bedrockQuota=([0-9]+)`"); env[config.EnvBedrockQuota] != strconv.Itoa(int(want)) {
			t.Errorf("bedrock quota %v, README %v", env[config.EnvBedrockQuota], want)
		}
		if want := figure(t, "mcpserver", md, "for ([0-9]+) minutes \\(`-c staleMinutes=N`\\)"); env[config.EnvStaleMinutes] != strconv.Itoa(int(want)) {
			t.Errorf("stale minutes %v, README %v", env[config.EnvStaleMinutes], want)
		}
		_, mcp := oneResource(t, tok.json, "AWS::Lambda::Function", "FunctionsMcpFunction")
		if want := figure(t, "infra", infra, "`mcpReservedConcurrency` \\(default ([0-9]+)"); props(mcp)["ReservedConcurrentExecutions"] != want {
			t.Errorf("token mode mcp reserved concurrency %v, README %v", props(mcp)["ReservedConcurrentExecutions"], want)
		}
		_, v := oneResource(t, fx.main.json, "AWS::Lambda::Function", "Validate")
		mem := figure(t, "mcpserver", md, "the `validate` function \\(([0-9]+) MB, [0-9]+ min\\)")
		mins := figure(t, "mcpserver", md, "the `validate` function \\([0-9]+ MB, ([0-9]+) min\\)")
		if props(v)["MemorySize"] != mem || props(v)["Timeout"] != mins*60 {
			t.Errorf("validate %v MB %v s, README %v MB %v min", props(v)["MemorySize"], props(v)["Timeout"], mem, mins)
		}
	})
	t.Run("endpoint examples", func(t *testing.T) {
		var entries []string
		for _, m := range regexp.MustCompile("(?s)```json\n(\\{\"name\": .*?)\n```").FindAllStringSubmatch(docs["infra/README.md"], -1) {
			entries = append(entries, m[1])
		}
		if len(entries) != 3 {
			t.Fatalf("found %d sagemakerDeploy examples in infra/README.md, want the async, real-time and multi-model ones", len(entries))
		}
		app := newApp(map[string]interface{}{CtxAssetDir: fx.assetDir, CtxSageMakerDeploy: "[" + strings.Join(entries, ",") + "]"})
		s, err := SettingsFromContext(app.Node())
		if err != nil {
			t.Fatalf("infra/README.md's sagemakerDeploy examples are refused: %v", err)
		}
		if len(s.SageMakerDeploy) != 3 {
			t.Errorf("%d endpoints read from the examples", len(s.SageMakerDeploy))
		}
	})

	t.Run("client configs", func(t *testing.T) {
		// The README's JSON configs have the shape of the McpClientConfig
		// output of their auth mode, <McpUrl> standing for the URL.
		for _, c := range []struct {
			mode string
			tpl  obj
			re   string
		}{
			{"token", tok.json, "```json\n(\\{\"mcpServers\": \\{\"mcpbatch\": \\{\"type\": \"http\".*?)\n```"},
			{"iam", fx.main.json, "```json\n(\\{\"mcpServers\": \\{\"mcpbatch\": \\{\"command\".*?)\n```"},
		} {
			m := regexp.MustCompile("(?s)" + c.re).FindStringSubmatch(docs["infra/README.md"])
			if m == nil {
				t.Errorf("%s: no client config in infra/README.md", c.mode)
				continue
			}
			out := flatten(c.tpl["Outputs"].(obj)["McpClientConfig"].(obj)["Value"])
			url := regexp.MustCompile(`<[A-Za-z0-9]+\.FunctionUrl>`).FindString(out)
			if url == "" {
				t.Fatalf("%s: McpClientConfig names no function URL: %s", c.mode, out)
			}
			want := strings.ReplaceAll(strings.ReplaceAll(m[1], "<McpUrl>", url), "<region>", testRegion)
			var a, b any
			if err := json.Unmarshal([]byte(want), &a); err != nil {
				t.Fatalf("%s: README config: %v", c.mode, err)
			}
			if err := json.Unmarshal([]byte(out), &b); err != nil {
				t.Fatalf("%s: McpClientConfig: %v: %s", c.mode, err, out)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s: infra/README.md shows\n  %s\nthe stack outputs\n  %s", c.mode, want, out)
			}
		}
	})
	t.Run("vector actions", func(t *testing.T) {
		// shared/index/README.md: what the S3 Vectors adapter needs; the
		// stack's roles together hold exactly that (the bucket is the stack's,
		// so no CreateVectorBucket).
		m := regexp.MustCompile("`(s3vectors:[A-Za-z, ]+)`").FindStringSubmatch(strings.Join(strings.Fields(docs["shared/index/README.md"]), " "))
		if m == nil {
			t.Fatal("shared/index/README.md lists no s3vectors actions")
		}
		want := map[string]bool{}
		for i, a := range strings.Split(m[1], ", ") {
			if i > 0 {
				a = "s3vectors:" + a
			}
			want[a] = true
		}
		got := map[string]bool{}
		for roleID := range resources(fx.main.json, "AWS::IAM::Role") {
			for _, st := range roleStatements(t, fx.main.json, roleID) {
				for _, a := range st.Actions {
					if strings.HasPrefix(a, "s3vectors:") {
						got[a] = true
					}
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the stack grants %v; shared/index/README.md lists %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	})
}
