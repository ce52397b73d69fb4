package local_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// TestSubmitAnswerSaysWhatHappened: a dry run's answer carries no empty
// job_id or expires_at (nothing was created); an on-demand submit says its
// mode, as get_job does.
func TestSubmitAnswerSaysWhatHappened(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "submit_batch", Arguments: map[string]any{"model": haiku, "records": records(3), "dry_run": true}})
	if err != nil || res.IsError {
		t.Fatalf("dry run: %v %s", err, text(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"job_id", "expires_at", "submitted_at"} {
		if v, ok := m[k]; ok {
			t.Errorf("dry run answer has %s = %q: %s", k, v, raw)
		}
	}
	h := call[map[string]any](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(3)})
	if h["mode"] != "on_demand" {
		t.Errorf("on-demand submit answer %v: want mode on_demand", h)
	}
	got := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h["job_id"]})
	if got.Mode != "on_demand" {
		t.Errorf("get_job mode %q", got.Mode)
	}
}

// TestOnDemandAllFailedEndsFailed: an on-demand job whose every record
// failed ends failed (with the reason), not partially_completed.
func TestOnDemandAllFailedEndsFailed(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	// Native bodies pass through as given; the runtime (simulator) refuses each one.
	recs := make([]map[string]any, 3)
	for i := range recs {
		recs[i] = map[string]any{"model_input": map[string]any{"not": "a Nova body"}}
	}
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": "amazon.nova-lite-v1:0", "records": recs})
	s.settle()
	got := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if got.Status != "failed" || got.Failed != 3 || got.Error == "" {
		t.Fatalf("job with every record failed: %s (failed %d, error %q), want failed with a reason", got.Status, got.Failed, got.Error)
	}
}
