package local_test

import (
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// A process killed after SageMaker accepted an async invocation and before it
// wrote the answer leaves the job queued with no output location; when the
// notification is lost too, the reconciler sends the kept request again (the
// job id as InferenceId) and the job ends with exactly one result.
func TestSageMakerLostAnswerAndNotification(t *testing.T) {
	s := newSuite(t)
	sm := s.l.SageMaker
	sm.Sim.Emit = nil // every notification is lost
	cs := s.client("alice")
	h := call[asyncHandle](t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "content_type": "text/plain"})
	ctx := t.Context()
	if err := sm.Sim.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	// What the kill leaves: the job as stored before InvokeEndpointAsync.
	if _, err := s.l.Service.Core.Store.UpdateJob(ctx, h.JobID, func(j *job.Job) error {
		j.Status, j.ProviderStatus, j.OutputURI, j.FailureURI, j.SubmittedAt = job.StatusQueued, "", "", "", time.Time{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := s.l.Service.SageMaker.ReconcileSageMaker(ctx, time.Now().Add(time.Minute), 100); err != nil {
			t.Fatalf("reconcile %d: %v", i, err)
		}
		if err := sm.Sim.Settle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	v := call[jobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if v.Status != "completed" || v.Succeeded != 1 || v.Failed != 0 {
		t.Fatalf("job after a lost answer and a lost notification = %+v, want completed with 1", v)
	}
	p := call[resultsPage](t, cs, "get_job_results", map[string]any{"job_id": h.JobID})
	if len(p.Records) != 1 || p.Records[0].Status != "succeeded" {
		t.Fatalf("results %+v, want one succeeded", p.Records)
	}
}
