package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The official TypeScript SDK (@modelcontextprotocol/client, v2, the 2026-07-28
// line) against make dev, through testdata/sdkclient.mjs.

// sdkModules is the node_modules folder holding the official TypeScript SDK
// packages that .ci/tools.sh installs under .tools/mcpsdk.
func sdkModules(t *testing.T) (node, modules string) {
	t.Helper()
	node, _ = inspector(t)
	tools := os.Getenv("MCPBATCH_TOOLS")
	if tools == "" {
		tools = filepath.Join("..", "..", ".tools")
	}
	modules, _ = filepath.Abs(filepath.Join(tools, "mcpsdk", "node_modules"))
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "client", "package.json")); err != nil {
		if os.Getenv("MCPBATCH_E2E") == "1" {
			t.Fatalf("%s missing: run bash .ci/tools.sh", modules)
		}
		t.Skipf("%s missing (bash .ci/tools.sh installs it)", modules)
	}
	return node, modules
}

// sdkRun runs one scenario of sdkclient.mjs and returns its steps by name.
func sdkRun(t *testing.T, d dev, scenario string) map[string]map[string]any {
	t.Helper()
	node, modules := sdkModules(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, filepath.Join("testdata", "sdkclient.mjs"), modules, d.url, d.token, scenario).CombinedOutput()
	if err != nil {
		t.Fatalf("sdkclient %s: %v\n%s", scenario, err, out)
	}
	steps := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var step map[string]any
		if err := json.Unmarshal([]byte(line), &step); err != nil {
			t.Fatalf("sdkclient %s printed %q: %v", scenario, line, err)
		}
		steps[step["step"].(string)] = step
	}
	return steps
}

// TestTypeScriptSDK runs the official TypeScript SDK's scenarios against one
// make dev.
func TestTypeScriptSDK(t *testing.T) {
	sdkModules(t)
	d := startDev(t)
	t.Run("big request", func(t *testing.T) { testSDKBigRequest(t, d) })
	t.Run("protocol 2026-07-28", func(t *testing.T) { testSDKProtocol20260728(t, d) })
	t.Run("tasks", func(t *testing.T) { testSDKTasks(t, d) })
}

// A 7 MB tools/call from the official SDK, which writes "id" after "params",
// comes back as a tool error naming create_upload, and the session goes on.
// Both eras: 2026-07-28 (server/discover, stateless) and 2025-11-25 (initialize).
func testSDKBigRequest(t *testing.T, d dev) {
	for _, tc := range []struct{ scenario, version string }{
		{"bigrequest-modern", "2026-07-28"},
		{"bigrequest-legacy", "2025-11-25"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			steps := sdkRun(t, d, tc.scenario)
			if v := steps["connect"]["protocolVersion"]; v != tc.version {
				t.Errorf("negotiated %v, want %s", v, tc.version)
			}
			big := steps["big"]
			if big["error"] != nil || big["isError"] != true {
				t.Fatalf("7 MB call: want a tool error, got %v", big)
			}
			if text, _ := big["text"].(string); !strings.Contains(text, "create_upload") || !strings.Contains(text, "6 MB") {
				t.Errorf("tool error %q does not point at create_upload and the limit", text)
			}
			if after := steps["after"]; after == nil || after["isError"] != false {
				t.Errorf("the session did not go on after the big request: %v", after)
			}
		})
	}
}

// Protocol 2026-07-28 end to end with the official SDK: server/discover offers
// 2026-07-28 beside the 2025 revisions, subscriptions/listen is acknowledged
// with nothing honoured and ends at once (see capabilities in shared/mcpserver), a
// hand-made stateless tools/call with no initialize before it is served, a
// Mcp-Name header that disagrees with the body is refused, and a 2025-11-25
// client (initialize) is still served.
func testSDKProtocol20260728(t *testing.T, d dev) {
	steps := sdkRun(t, d, "discover")
	if v := steps["connect"]["protocolVersion"]; v != "2026-07-28" {
		t.Errorf("negotiated %v, want 2026-07-28", v)
	}
	versions, _ := steps["discover"]["supportedVersions"].([]any)
	if len(versions) == 0 || versions[0] != "2026-07-28" || !slices.Contains(versions, any("2025-11-25")) {
		t.Errorf("server/discover versions %v: want 2026-07-28 first and 2025-11-25 still offered", versions)
	}
	if l := steps["listen"]; l["closed"] != "graceful" || len(l["honored"].(map[string]any)) != 0 {
		t.Errorf("subscriptions/listen: %v, want nothing honoured and a graceful end", l)
	}
	if s := steps["stateless"]; s["status"] != float64(200) || !strings.Contains(s["body"].(string), `"resultType":"complete"`) {
		t.Errorf("stateless tools/call without initialize: %v", s)
	}
	if s := steps["wrongname"]; s["status"] != float64(400) || !strings.Contains(s["body"].(string), "Mcp-Name") {
		t.Errorf("a Mcp-Name header that disagrees with the body: %v, want 400 naming Mcp-Name", s)
	}
	legacy := sdkRun(t, d, "legacy")
	if v := legacy["connect"]["protocolVersion"]; v != "2025-11-25" {
		t.Errorf("a 2025-11-25 client negotiated %v", v)
	}
	if a := legacy["after"]; a["isError"] != false {
		t.Errorf("a 2025-11-25 client's tools/call: %v", a)
	}
}

// The tasks extension through its official client (@modelcontextprotocol/ext-tasks):
// submit_batch answers with a task, tasks/get follows it (status message with
// counts and cost) and yields get_job's result once terminal, a cancel ends the
// task cancelled, and an unknown task id is "not found". (Another owner's task
// id is checked in shared/app/local's TestTasks: make dev has one key.)
func testSDKTasks(t *testing.T, d dev) {
	steps := sdkRun(t, d, "tasks")
	if ext, _ := steps["connect"]["extensions"].([]any); !slices.Contains(ext, any("io.modelcontextprotocol/tasks")) {
		t.Errorf("server/discover does not advertise the tasks extension: %v", steps["connect"])
	}
	c := steps["created"]
	if c["status"] != "working" || !strings.Contains(fmt.Sprint(c["statusMessage"]), "/100 records done") {
		t.Errorf("created task: %v", c)
	}
	s := steps["settled"]
	if s["kind"] != "completed" || s["jobId"] != c["taskId"] || s["status"] != "partially_completed" {
		t.Errorf("settled task: %v, want completed with get_job's result for job %v", s, c["taskId"])
	}
	if x := steps["cancelled"]; x["outcome"] != "cancelled" {
		t.Errorf("cancelled task: %v", x)
	}
	if u, _ := steps["unknown"]["error"].(map[string]any); u == nil || u["code"] != float64(-32602) {
		t.Errorf("unknown task id: %v", steps["unknown"])
	}
}
