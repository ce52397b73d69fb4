package main

import (
	"strings"
	"testing"
	"time"
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
