package local_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExpiryPromisedIsStored: the expiry submit_batch gives is not a date the
// job may be dropped before. While the job runs, expires_at is a hold kept ahead
// of the run and the answer says so (expires_at_final false, ttl_days); once
// the job ends, get_job shows the expiry it keeps (ttl_days after the end,
// final). It used to promise "results stay until" the hold (12-17) and keep
// them to completion + ttl_days (12-08).
func TestExpiryPromisedIsStored(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "submit_batch",
		Arguments: map[string]any{"model": haiku, "records": records(120), "ttl_days": 3}})
	if err != nil || res.IsError {
		t.Fatalf("submit_batch: %v %s", err, text(res))
	}
	sub := res.StructuredContent.(map[string]any)
	if sub["expires_at_final"] != false || sub["ttl_days"] != float64(3) {
		t.Errorf("submit answer expires_at_final=%v ttl_days=%v, want false and 3", sub["expires_at_final"], sub["ttl_days"])
	}
	if msg := text(res); strings.Contains(msg, "stay until") || !strings.Contains(msg, "3 days after") {
		t.Errorf("submit text promises a date it does not keep: %q", msg)
	}
	id := sub["job_id"].(string)
	for i := 0; i < 20; i++ {
		if j := call[map[string]any](t, cs, "get_job", map[string]any{"job_id": id}); j["terminal"] == true {
			break
		}
		s.l.Sim.Step(context.Background())
		s.l.Bus.Wait()
	}
	j := call[map[string]any](t, cs, "get_job", map[string]any{"job_id": id})
	if j["terminal"] != true || j["expires_at_final"] != true || j["ttl_days"] != float64(3) {
		t.Fatalf("final get_job terminal=%v expires_at_final=%v ttl_days=%v", j["terminal"], j["expires_at_final"], j["ttl_days"])
	}
	done, err1 := time.Parse(time.RFC3339, j["completed_at"].(string))
	exp, err2 := time.Parse(time.RFC3339, j["expires_at"].(string))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// The stored expiry counts from the start of the ingest, which ends the job
	// within moments: the same day as completion + ttl_days.
	if d := exp.Sub(done.Add(3 * 24 * time.Hour)); d < -time.Minute || d > time.Minute {
		t.Errorf("expires_at %s is %s off completed_at %s + 3 days", exp, d, done)
	}
}

// TestSageMakerAsyncExpiryFlag: invoke_endpoint_async's answer says what its
// expires_at is, as submit_batch's does (it lacked expires_at_final and
// ttl_days, so a caller could not tell the hold from the final expiry).
func TestSageMakerAsyncExpiryFlag(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	h := call[map[string]any](t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "ping",
		"content_type": "text/plain", "ttl_days": 2})
	// The simulator may end the inference before the answer is written: the
	// flag is then true, and false exactly while the inference runs.
	terminal := map[string]bool{"completed": true, "failed": true}[h["status"].(string)]
	if final, ok := h["expires_at_final"]; !ok || final != terminal || h["ttl_days"] != float64(2) || h["expires_at"] == "" {
		t.Errorf("invoke_endpoint_async answer (status %v) expires_at=%v expires_at_final=%v (present %v) ttl_days=%v, want %v and 2",
			h["status"], h["expires_at"], final, ok, h["ttl_days"], terminal)
	}
	id := h["job_id"].(string)
	waitTerminal(t, s, "alice", id)
	j := call[map[string]any](t, cs, "get_job", map[string]any{"job_id": id})
	if j["expires_at_final"] != true || j["ttl_days"] != float64(2) {
		t.Errorf("get_job after the end: expires_at_final=%v ttl_days=%v, want true and 2", j["expires_at_final"], j["ttl_days"])
	}
}
