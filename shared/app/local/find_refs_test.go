package local_test

import (
	"time"

	"context"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"sync/atomic"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// expireLease runs out the submitting lease a part waiting for an unproven
// batch holds, as the reconciler would find it 15 minutes later.
func expireLease(t *testing.T, s *suite, id string) {
	t.Helper()
	if _, err := s.l.Service.Core.Store.UpdateJob(context.Background(), id, func(j *job.Job) error {
		for i := range j.Parts {
			if j.Parts[i].SubmitLease != "" {
				j.Parts[i].SubmitLeaseUntil = time.Now().Add(-time.Minute)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Anthropic kept the batch of a create that answered 529 while another job's
// batch of the same size was made moments before: while both run neither can
// be proved the part's, so it takes neither and creates none; once they have
// ended the part's mark on its own results proves it. Each job ends with its
// own results, none failed, no batch left without a job.
func TestAnthropicFindSkipsAnotherJobsBatchOfTheSameSize(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	var n atomic.Int32
	cs := s.client("alice")
	other := call[mcpserver.JobHandle](t, s.client("bob"), "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	s.l.Anthropic.AcceptThenFail = func() int {
		if n.Add(1) == 1 {
			return 529
		}
		return 0
	}
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	ctx := context.Background()
	mine, err := s.l.Service.Core.Store.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.l.Service.Core.Store.GetJob(ctx, other.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if p := mine.Parts[0]; p.Ref != "" || p.SubmitLease == "" {
		t.Fatalf("part after an accepted-then-failed create: status %s ref %q (other job's %q) message %q; want it leased without a batch while both run",
			p.Status, p.Ref, theirs.Parts[0].Ref, p.Message)
	}
	if n := len(s.l.Anthropic.Statuses()); n != 2 {
		t.Fatalf("Anthropic holds %d batches for two jobs, want 2 (calls %v)", n, s.l.Anthropic.Calls())
	}
	s.l.Anthropic.Step()
	expireLease(t, s, h.JobID)
	s.reconcile()
	if mine, err = s.l.Service.Core.Store.GetJob(ctx, h.JobID); err != nil {
		t.Fatal(err)
	}
	if p := mine.Parts[0]; p.Ref == "" || p.Ref == theirs.Parts[0].Ref {
		t.Fatalf("part once both ended: ref %q (other job's %q) message %q; want its own batch", p.Ref, theirs.Parts[0].Ref, p.Message)
	}
	s.reconcile()
	for _, id := range []string{h.JobID, other.JobID} {
		owner := "alice"
		if id == other.JobID {
			owner = "bob"
		}
		if j := call[mcpserver.JobView](t, s.client(owner), "get_job", map[string]any{"job_id": id}); j.Status != "completed" || j.Succeeded != 9 {
			t.Fatalf("job %s = %+v, want completed with 9", id, j)
		}
	}
}

// cancel_job on a part whose submitting run died after Anthropic made its
// batch (lease held, Ref never written): the part waits as cancelling (the
// running batch cannot be proved its, so it is not stopped), the reconciler
// takes the batch once it has ended and ingests what it did; no batch is left
// without a job.
func TestCancelAfterALostCreateStopsItsBatch(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	ctx := context.Background()
	st := s.l.Service.Core.Store
	before, err := st.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	ref := before.Parts[0].Ref
	setLease := func(until time.Time) {
		t.Helper()
		if _, err := st.UpdateJob(ctx, h.JobID, func(j *job.Job) error {
			p := &j.Parts[0]
			if p.Status == job.StatusSubmitted {
				p.Ref, p.Status, p.ProviderStatus = "", job.StatusQueued, ""
				j.Status, j.SubmittedAt, j.LastEventAt = job.StatusQueued, time.Time{}, time.Time{}
			}
			p.SubmitLease, p.SubmitLeaseUntil, p.SubmitTriedAt = "dead-run", until, time.Now().Add(-20*time.Minute)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	setLease(time.Now().Add(time.Hour)) // the dead run's lease is still live
	call[mcpserver.CancelOut](t, cs, "cancel_job", map[string]any{"job_id": h.JobID})
	setLease(time.Now().Add(-time.Minute)) // ... and runs out
	s.reconcile()
	s.l.Anthropic.Step()
	expireLease(t, s, h.JobID)
	s.reconcile()
	s.reconcile()
	after, err := st.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != job.StatusCancelled || after.Parts[0].Ref != ref {
		t.Fatalf("job %s, part ref %q; want cancelled holding the batch %s", after.Status, after.Parts[0].Ref, ref)
	}
	if status := s.l.Anthropic.Statuses()[ref]; status != "ended" && status != "canceling" {
		t.Fatalf("batch %s is %s after the cancel", ref, status)
	}
	if n := len(s.l.Anthropic.Statuses()); n != 1 {
		t.Fatalf("Anthropic holds %d batches, want 1", n)
	}
}

// The same after the dead run's lease was given up and the part queued
// again behind the quota (soak seed 99 at the raised rates): a create was
// tried, so cancel_job must still look for its batch, not end the part
// as if nothing had reached Anthropic.
func TestCancelAfterALostCreateQueuedAgain(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	ctx := context.Background()
	st := s.l.Service.Core.Store
	before, err := st.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	ref := before.Parts[0].Ref
	loseCreateQueuedAgain(t, s, h.JobID)
	call[mcpserver.CancelOut](t, cs, "cancel_job", map[string]any{"job_id": h.JobID})
	s.reconcile()
	s.l.Anthropic.Step()
	expireLease(t, s, h.JobID)
	s.reconcile()
	s.reconcile()
	after, err := st.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != job.StatusCancelled || after.Parts[0].Ref != ref {
		t.Fatalf("job %s, part ref %q; want cancelled holding the batch %s", after.Status, after.Parts[0].Ref, ref)
	}
}

// The same on Bedrock (soak seed 99 at the raised rates, again): its run died
// after CreateModelInvocationJob made the job, the next create found the
// quota full (that very job holds it) and the part waited for the quota.
// cancel_job must look for the job by the part's name and stop it, not end
// the part as never sent and leave the job running to its end unseen.
func TestBedrockCancelAfterALostCreateStopsItsJob(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(120), "mode": "batch"})
	ctx := context.Background()
	st := s.l.Service.Core.Store
	before, err := st.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	ref := before.Parts[0].Ref
	if ref == "" {
		t.Fatalf("part not submitted: %+v", before.Parts[0])
	}
	loseCreateQueuedAgain(t, s, h.JobID)
	call[mcpserver.CancelOut](t, cs, "cancel_job", map[string]any{"job_id": h.JobID})
	s.reconcile()
	s.settle()
	s.reconcile()
	after, err := st.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != job.StatusCancelled || after.Parts[0].Ref != ref {
		t.Fatalf("job %s, part ref %q; want cancelled holding the job %s", after.Status, after.Parts[0].Ref, ref)
	}
	if status := s.l.Sim.Statuses()[before.Parts[0].Name]; status != "Stopped" {
		t.Fatalf("Bedrock job %s is %q after the cancel; want it stopped", ref, status)
	}
}

// loseCreateQueuedAgain makes the job's submitted part look as a lost
// create leaves it once queued again behind the quota: tried 20 minutes
// ago, no Ref, no lease, waiting for the quota.
func loseCreateQueuedAgain(t *testing.T, s *suite, id string) {
	t.Helper()
	if _, err := s.l.Service.Core.Store.UpdateJob(context.Background(), id, func(j *job.Job) error {
		p := &j.Parts[0]
		p.Ref, p.Status, p.ProviderStatus = "", job.StatusQueued, batch.WaitingForQuota
		j.Status, j.SubmittedAt, j.LastEventAt = job.StatusQueued, time.Time{}, time.Time{}
		p.SubmitLease, p.SubmitLeaseUntil, p.SubmitTriedAt = "", time.Time{}, time.Now().Add(-20*time.Minute)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Two creates of the same size with unknown outcomes at once would leave two
// batches nothing tells apart, so a create waits while another part's create
// of its size is unresolved: here job A's run died after Anthropic made its
// batch (A holds the create slot of 9 requests); job B of 9 records stays
// queued without a batch until A has found its own, then starts.
func TestSameSizeCreateWaitsForAnUnresolvedOne(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	ctx := context.Background()
	st := s.l.Service.Core.Store
	a := call[mcpserver.JobHandle](t, s.client("alice"), "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	aj, err := st.GetJob(ctx, a.JobID)
	if err != nil {
		t.Fatal(err)
	}
	ref := aj.Parts[0].Ref
	lease := func(until time.Time) {
		t.Helper()
		if _, err := st.UpdateJob(ctx, a.JobID, func(j *job.Job) error {
			p := &j.Parts[0]
			p.Ref, p.Status, p.ProviderStatus = "", job.StatusQueued, ""
			p.SubmitLease, p.SubmitLeaseUntil, p.SubmitTriedAt = "dead-run", until, time.Now().Add(-20*time.Minute)
			j.Status, j.SubmittedAt, j.LastEventAt = job.StatusQueued, time.Time{}, time.Time{}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	lease(time.Now().Add(time.Hour))
	if ok, err := st.SwapSlot(ctx, "create#anthropic#9", "", a.JobID+"#0"); !ok || err != nil {
		t.Fatalf("take A's slot: %v %v", ok, err)
	}
	b := call[mcpserver.JobHandle](t, s.client("bob"), "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	if n := len(s.l.Anthropic.Statuses()); n != 1 {
		t.Fatalf("Anthropic holds %d batches while A's create is unresolved, want A's only", n)
	}
	lease(time.Now().Add(-time.Minute))
	s.reconcile()
	s.l.Anthropic.Step() // A's batch ends: its mark proves it A's
	expireLease(t, s, a.JobID)
	s.reconcile()
	s.reconcile()
	s.l.Anthropic.Step()
	s.reconcile()
	aj, _ = st.GetJob(ctx, a.JobID)
	bj, _ := st.GetJob(ctx, b.JobID)
	if aj.Parts[0].Ref != ref || bj.Parts[0].Ref == "" || bj.Parts[0].Ref == ref {
		t.Fatalf("refs: A %q (its batch %s), B %q; want each its own", aj.Parts[0].Ref, ref, bj.Parts[0].Ref)
	}
	if aj.Status != job.StatusCompleted || bj.Status != job.StatusCompleted {
		t.Fatalf("A %s, B %s; want both completed", aj.Status, bj.Status)
	}
}
