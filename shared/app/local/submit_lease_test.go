package local_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// holdFirstCreate blocks the simulator's first create until release is
// called; entered is closed once that create has arrived.
func holdFirstCreate(s *suite) (entered <-chan struct{}, release func()) {
	in, gate := make(chan struct{}), make(chan struct{})
	var n atomic.Int32
	s.l.Anthropic.OnCreate = func() {
		if n.Add(1) == 1 {
			close(in)
			<-gate
		}
	}
	var once sync.Once
	return in, func() { once.Do(func() { close(gate) }) }
}

// jobIDWhileSubmitting finds the one job of owner while its submit is still running.
func jobIDWhileSubmitting(t *testing.T, s *suite, owner string) string {
	t.Helper()
	l := call[mcpserver.ListOut](t, s.client(owner), "list_jobs", map[string]any{})
	if len(l.Jobs) != 1 {
		t.Fatalf("list_jobs while submitting = %+v, want one job", l)
	}
	return l.Jobs[0].JobID
}

// A reconciler run while submit_batch waits on Anthropic's create must not
// create a second batch for the same part (it holds a submitting lease).
func TestReconcileDoesNotResubmitPartBeingSubmitted(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	entered, release := holdFirstCreate(s)
	defer release()
	done := make(chan mcpserver.JobHandle)
	go func() {
		done <- call[mcpserver.JobHandle](t, s.client("alice"), "submit_batch", map[string]any{"model": claudeHaiku, "records": records(12)})
	}()
	<-entered
	if _, err := s.l.Service.Reconciler.Reconcile(context.Background()); err != nil {
		t.Logf("reconcile during the submit: %v", err)
	}
	release()
	h := <-done
	s.l.Bus.Wait()
	if n := len(s.l.Anthropic.Statuses()); n != 1 {
		t.Fatalf("Anthropic holds %d batches for one single-part job, want 1 (calls %v)", n, s.l.Anthropic.Calls())
	}
	s.l.Anthropic.Step()
	s.reconcile()
	j := call[mcpserver.JobView](t, s.client("alice"), "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "completed" || j.Succeeded != 12 {
		t.Fatalf("job = %+v, want completed with 12", j)
	}
}

// Anthropic kept the batch but the create answered 529 (or 500): the suite
// creates no other; once the batch has ended and shows the part's mark, the
// part takes it.
func TestAnthropicAcceptedThenFailedCreateMakesOneBatch(t *testing.T) {
	for _, code := range []int{529, 500} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			s := newSuite(t)
			s.l.Anthropic.ErrorEvery = 0
			var n atomic.Int32
			s.l.Anthropic.AcceptThenFail = func() int {
				if n.Add(1) == 1 {
					return code
				}
				return 0
			}
			cs := s.client("alice")
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": records(15)})
			s.reconcile()
			s.reconcile()
			if n := len(s.l.Anthropic.Statuses()); n != 1 {
				t.Fatalf("Anthropic holds %d batches after an accepted-then-failed create, want 1 (calls %v)", n, s.l.Anthropic.Calls())
			}
			s.l.Anthropic.Step()
			expireLease(t, s, h.JobID)
			s.reconcile()
			s.reconcile()
			j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
			if j.Status != "completed" || j.Succeeded != 15 {
				t.Fatalf("job = %+v, want completed with 15", j)
			}
		})
	}
}

// cancel_job while the create is on the wire: the part is cancelling (the
// create may yet make a batch, and a process killed before writing its Ref
// leaves it to be found); the batch that then arrives is cancelled at once and
// the job ends cancelled.
func TestCancelDuringSubmitStopsTheBatch(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	entered, release := holdFirstCreate(s)
	defer release()
	done := make(chan struct{})
	go func() {
		defer close(done)
		cs := s.client("alice")
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "submit_batch", Arguments: map[string]any{"model": claudeHaiku, "records": records(10)}})
		if err != nil {
			t.Errorf("submit: %v", err)
		} else if res.IsError {
			t.Logf("submit answered: %s", text(res))
		}
	}()
	<-entered
	id := jobIDWhileSubmitting(t, s, "alice")
	c := call[mcpserver.CancelOut](t, s.client("alice"), "cancel_job", map[string]any{"job_id": id})
	if c.Status != string(job.StatusCancelling) {
		t.Fatalf("cancel during submit = %+v, want cancelling (the create may still make a batch)", c)
	}
	release()
	<-done
	s.l.Bus.Wait()
	st := s.l.Anthropic.Statuses()
	if len(st) != 1 {
		t.Fatalf("batches = %v, want the one the submit created", st)
	}
	for id, status := range st {
		if status != "canceling" && status != "ended" {
			t.Fatalf("batch %s is %s: the batch that arrived after the cancel was left running", id, status)
		}
	}
	s.l.Anthropic.Step()
	s.reconcile()
	j := call[mcpserver.JobView](t, s.client("alice"), "get_job", map[string]any{"job_id": id})
	if j.Status != "cancelled" {
		t.Fatalf("job = %+v, want it cancelled", j)
	}
}

// Bedrock's create is idempotent by clientRequestToken (the part name): a run
// that died between the create and the write (Ref lost, lease run out) makes
// the reconciler submit again, and Bedrock answers with the same job. This
// verifies the adapter passes the token; it held before the lease too.
func TestBedrockResubmitAfterLostRefIsTheSameJob(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
	ctx := context.Background()
	before, err := s.l.Service.Core.Store.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	arn := before.Parts[0].Ref
	_, err = s.l.Service.Core.Store.UpdateJob(ctx, h.JobID, func(j *job.Job) error {
		p := &j.Parts[0]
		p.Ref, p.Status, p.ProviderStatus = "", job.StatusQueued, ""
		p.SubmitLease, p.SubmitLeaseUntil, p.SubmitTriedAt = "dead-run", time.Now().Add(-time.Minute), time.Now().Add(-20*time.Minute)
		j.Status, j.SubmittedAt, j.LastEventAt = job.StatusQueued, time.Time{}, time.Time{}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep := s.reconcile(); rep.Submitted != 1 {
		t.Fatalf("reconcile = %+v, want the part submitted again", rep)
	}
	after, err := s.l.Service.Core.Store.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Parts[0].Ref != arn || len(s.l.Sim.Statuses()) != 1 {
		t.Fatalf("resubmit gave %q (first %q), Bedrock holds %d jobs; want the same single job", after.Parts[0].Ref, arn, len(s.l.Sim.Statuses()))
	}
	if p := after.Parts[0]; p.SubmitLease != "" || p.Status != job.StatusSubmitted {
		t.Fatalf("part after resubmit = %+v, want submitted with the lease dropped", p)
	}
}

// A run killed between Anthropic's create and the write of the Ref leaves a
// batch and a part with an expired lease: the reconciler creates no other
// while the batch runs, and takes it by its mark once it has ended.
func TestAnthropicLostRefIsFoundNotRecreated(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	ctx := context.Background()
	before, err := s.l.Service.Core.Store.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	ref := before.Parts[0].Ref
	_, err = s.l.Service.Core.Store.UpdateJob(ctx, h.JobID, func(j *job.Job) error {
		p := &j.Parts[0]
		p.Ref, p.Status, p.ProviderStatus = "", job.StatusQueued, ""
		p.SubmitLease, p.SubmitLeaseUntil, p.SubmitTriedAt = "dead-run", time.Now().Add(-time.Minute), time.Now().Add(-20*time.Minute)
		j.Status, j.SubmittedAt, j.LastEventAt = job.StatusQueued, time.Time{}, time.Time{}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.reconcile()
	if n := len(s.l.Anthropic.Statuses()); n != 1 {
		t.Fatalf("after the lost Ref: %d batches while the first runs, want 1", n)
	}
	s.l.Anthropic.Step()
	expireLease(t, s, h.JobID)
	s.reconcile()
	after, err := s.l.Service.Core.Store.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.l.Anthropic.Statuses()); n != 1 || after.Parts[0].Ref != ref {
		t.Fatalf("after the lost Ref: %d batches, part ref %q (first %q); want the first batch found", n, after.Parts[0].Ref, ref)
	}
	s.reconcile()
	if j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); j.Status != "completed" || j.Succeeded != 9 {
		t.Fatalf("job = %+v, want completed with 9", j)
	}
}

// A Bedrock event that brings the Ref of a part cancelled while its create was
// on the wire (the submitting run died before writing it) stops that job.
func TestLateRefByEventIsStopped(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
	ctx := context.Background()
	before, err := s.l.Service.Core.Store.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	p := before.Parts[0]
	_, err = s.l.Service.Core.Store.UpdateJob(ctx, h.JobID, func(j *job.Job) error {
		j.Parts[0].Ref, j.Parts[0].Status = "", job.StatusCancelled
		j.Status, j.CompletedAt = job.StatusCancelled, time.Now()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.l.Service.Batch.OnProviderEvent(ctx, batch.ProviderEvent{JobName: p.Name, Ref: p.Ref, Status: "InProgress"}); err != nil {
		t.Fatal(err)
	}
	if st := s.l.Sim.Statuses()[p.Name]; st != "Stopping" && st != "Stopped" {
		t.Fatalf("Bedrock job %s is %s after its Ref reached a cancelled part, want stopping", p.Ref, st)
	}
	if j, _ := s.l.Service.Core.Store.GetJob(ctx, h.JobID); j.Status != job.StatusCancelled {
		t.Fatalf("job = %s, want it to stay cancelled", j.Status)
	}
}
