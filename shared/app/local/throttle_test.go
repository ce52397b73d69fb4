package local_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// TestBedrockCreateThrottledStaysQueued: CreateModelInvocationJob throttled
// past the SDK's own retries leaves the part queued for the reconciler, and
// the job runs once Bedrock takes creates again. Before, the part failed
// ("refused the job") and the job failed with every record; the chaos soak
// (seed 7) found it on a retry_failed job.
func TestBedrockCreateThrottledStaysQueued(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	var throttling atomic.Bool
	throttling.Store(true)
	s.l.Sim.ThrottleAPI = func(op string) bool { return throttling.Load() && op == "CreateModelInvocationJob" }
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(120)})
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Terminal {
		t.Fatalf("job after a throttled create: %s (%q), want it waiting to be submitted", j.Status, j.Error)
	}
	throttling.Store(false)
	ctx := context.Background()
	for i := 0; i < 50 && !j.Terminal; i++ {
		if _, err := s.l.Service.Reconciler.Reconcile(ctx); err != nil {
			t.Logf("reconcile: %v", err)
		}
		s.l.Sim.Step(ctx)
		s.l.Bus.Wait()
		j = call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	}
	if j.Status == "failed" || j.Succeeded+j.Failed != 120 {
		t.Fatalf("job once creates pass again: %s, %d+%d of 120 records (%q)", j.Status, j.Succeeded, j.Failed, j.Error)
	}
}
