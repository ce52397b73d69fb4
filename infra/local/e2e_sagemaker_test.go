package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// TestInspectorSageMaker drives both SageMaker tools of `make dev` with the real
// MCP Inspector CLI: an async inference (simulated endpoint, SNS-shaped
// notification over the local bus) read back with get_job / get_job_results,
// a real-time call, and an endpoint outside the allowed list.
func TestInspectorSageMaker(t *testing.T) {
	inspector(t)
	url := startDev(t)

	h := structured(t, callTool(t, url, "invoke_endpoint_async", map[string]any{
		"endpoint_name": "demo-async", "body": map[string]any{"inputs": "hello"}, "content_type": "application/json",
	}))
	id, _ := h["job_id"].(string)
	if id == "" || h["provider"] != "sagemaker" {
		t.Fatalf("handle %v", h)
	}
	var status string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		v := structured(t, callTool(t, url, "get_job", map[string]any{"job_id": id}))
		status, _ = v["status"].(string)
		if term, _ := v["terminal"].(bool); term {
			break
		}
	}
	if status != "completed" {
		t.Fatalf("async job ended %q", status)
	}
	res := structured(t, callTool(t, url, "get_job_results", map[string]any{"job_id": id}))
	recs, _ := res["records"].([]any)
	if len(recs) != 1 || !strings.Contains(recs[0].(map[string]any)["output"].(string), `"simulated":true`) {
		t.Fatalf("results %v", res)
	}

	rt := structured(t, callTool(t, url, "invoke_endpoint", map[string]any{
		"endpoint_name": "demo-realtime", "body": "ping", "content_type": "text/plain",
	}))
	if rt["attempts"] != float64(1) || rt["content_type"] != "application/json" {
		t.Fatalf("invoke_endpoint %v", rt)
	}

	bad := callTool(t, url, "invoke_endpoint", map[string]any{"endpoint_name": "prod", "body": "x", "content_type": "text/plain"})
	if isErr, _ := bad["isError"].(bool); !isErr || !strings.Contains(strings.ToLower(toText(bad)), "endpoint_name") {
		t.Fatalf("unknown endpoint: %v", bad)
	}
}

func toText(res map[string]any) string {
	var b strings.Builder
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// TestInspectorEndpointOperations drives describe_endpoint and shift_traffic
// of `make dev` with the real Inspector CLI as two callers: the dev key (an
// operator here) and a second key, "bob", from a -keys file. Bob may describe
// but not shift; the operator shifts the 90/10 canary to 50/50, and a weight
// set that leaves no traffic is refused.
func TestInspectorEndpointOperations(t *testing.T) {
	inspector(t)
	bobKey := mcpserver.NewToken()
	keys := filepath.Join(t.TempDir(), "keys.json")
	raw, _ := json.Marshal(mcpserver.TokenFile{Keys: []mcpserver.TokenKey{{Name: "bob", SHA256: mcpserver.HashToken(bobKey)}}})
	if err := os.WriteFile(keys, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPBATCH_SAGEMAKER_OPERATORS", "dev")
	ops := startDev(t, "-keys", keys)
	bob := dev{url: ops.url, token: bobKey, stateDir: ops.stateDir}

	v := structured(t, callTool(t, bob, "describe_endpoint", map[string]any{"endpoint_name": "demo-canary"}))
	variants, _ := v["variants"].([]any)
	if v["status"] != "InService" || len(variants) != 2 || variants[0].(map[string]any)["current_weight"] != float64(90) {
		t.Fatalf("describe_endpoint %v", v)
	}
	shift := map[string]any{"endpoint_name": "demo-canary", "weights": []map[string]any{{"variant": "primary", "weight": 50}, {"variant": "canary", "weight": 50}}}
	refused := callTool(t, bob, "shift_traffic", shift)
	if isErr, _ := refused["isError"].(bool); !isErr || !strings.Contains(toText(refused), "refused") {
		t.Fatalf("bob's shift_traffic: %v", refused)
	}
	none := callTool(t, ops, "shift_traffic", map[string]any{"endpoint_name": "demo-canary",
		"weights": []map[string]any{{"variant": "primary", "weight": 0}, {"variant": "canary", "weight": 0}}})
	if isErr, _ := none["isError"].(bool); !isErr || !strings.Contains(toText(none), "leave no variant") {
		t.Fatalf("no-traffic weights: %v", none)
	}
	after := structured(t, callTool(t, ops, "shift_traffic", shift))
	for _, x := range after["variants"].([]any) {
		if w := x.(map[string]any)["current_weight"]; w != float64(50) {
			t.Fatalf("after the operator's shift: %v", after)
		}
	}
	rt := structured(t, callTool(t, bob, "invoke_endpoint", map[string]any{"endpoint_name": "demo-canary", "body": "ping", "content_type": "text/plain"}))
	if iv := rt["invoked_variant"]; iv != "primary" && iv != "canary" {
		t.Fatalf("invoked_variant %v", iv)
	}
}
