package reconcile_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/ondemand"
	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// redrivingJob stores a Bedrock batch job whose deadline stopped its part,
// whose output (2 of 5 records) was read, and whose 3 other records run on
// demand now (1 done).
func redrivingJob(t *testing.T, h *harness) *job.Job {
	t.Helper()
	now := h.clock.Now()
	id := job.NewID(now)
	ref := "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abcdefghijkl"
	j := &job.Job{ID: id, Owner: "alice", Provider: job.ProviderBedrock, Model: bedrockModel, Mode: job.ModeBatch,
		Status: job.StatusIngesting, ProviderStatus: "OnDemandRedrive", RecordCount: 5, Shards: 1, TTLDays: 7,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(7 * 24 * time.Hour), InputURI: "s3://test/input/" + id, InputOrder: true,
		Deadline: now.Add(time.Hour), DeadlineTokens: 1100, OutputReadyPublished: true, Params: &job.Params{MaxTokens: 1024},
		Parts:    []job.Part{{Index: 0, Name: "mcpbatch-" + id, Ref: ref, Status: job.StatusIngesting, ProviderStatus: "Stopped", RecordCount: 5, CancelRequested: true}},
		Redrive:  &job.Redrive{StoppedAt: now.Add(-time.Minute), Parts: []int{0}, Started: true, Records: 3, BatchSucceeded: 2, BatchInputTokens: 20, BatchOutputTokens: 40},
		OnDemand: &job.OnDemand{Params: job.Params{MaxTokens: 1024}, Concurrency: 8, InputURI: "s3://test/input/" + id + "/redrive/records.jsonl", Line: 1, Succeeded: 1, InputTokens: 10, OutputTokens: 20},
	}
	j.SyncOnDemandCounts()
	if err := h.st.CreateJob(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	recs := []job.Record{
		{JobID: id, ID: "a", Status: job.RecordSucceeded, Output: "batch a", Path: job.PathBatch, ExpiresAt: j.ExpiresAt},
		{JobID: id, ID: "b", Ordinal: 1, Status: job.RecordSucceeded, Output: "batch b", Path: job.PathBatch, ExpiresAt: j.ExpiresAt},
		{JobID: id, ID: "c", Ordinal: 2, Status: job.RecordSucceeded, Output: "on demand c", Path: job.PathOnDemand, ExpiresAt: j.ExpiresAt},
	}
	if err := h.st.PutRecords(context.Background(), j.RecordSet(), recs); err != nil {
		t.Fatal(err)
	}
	got, err := h.job(id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// After a re-drive started, what comes twice, late or out of order changes
// nothing: the stopped part's Stopped again, its late Completed (the part
// finished as the stop went out), an InProgress or Stopping from before, and
// another "Job Output Ready". No record is rewritten and none is run twice.
func TestEventsAfterARedriveChangeNothing(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	j := redrivingJob(t, h)
	before := h.records(j)
	for _, ev := range []struct{ name, status string }{
		{"duplicate Stopped", "Stopped"},
		{"late Completed", "Completed"},
		{"late PartiallyCompleted", "PartiallyCompleted"},
		{"out-of-order Stopping", "Stopping"},
		{"out-of-order InProgress", "InProgress"},
	} {
		t.Run(ev.name, func(t *testing.T) {
			if err := h.svc.Batch.OnProviderEvent(ctx, batch.ProviderEvent{JobName: j.Parts[0].Name, Ref: j.Parts[0].Ref, Status: ev.status}); err != nil {
				t.Fatal(err)
			}
			cur, err := h.job(j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if cur.Version != j.Version || cur.Status != job.StatusIngesting || cur.Parts[0].ProviderStatus != "Stopped" {
				t.Fatalf("job after %s: version %d→%d, status %s, part %s", ev.status, j.Version, cur.Version, cur.Status, cur.Parts[0].ProviderStatus)
			}
		})
	}
	t.Run("another Job Output Ready", func(t *testing.T) {
		if err := h.svc.Batch.Ingest(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
		if cur, _ := h.job(j.ID); cur.Version != j.Version || cur.Succeeded != 3 || cur.Redrive.Records != 3 {
			t.Fatalf("job after a repeated ingest: %+v", cur)
		}
	})
	after := h.records(j)
	if len(after) != len(before) {
		t.Fatalf("%d records, had %d", len(after), len(before))
	}
	for i := range after {
		if after[i].ID != before[i].ID || after[i].Path != before[i].Path || after[i].Output != before[i].Output {
			t.Fatalf("record %s changed: %+v, was %+v", after[i].ID, after[i], before[i])
		}
	}
	if n := h.bus.count(config.DetailJobOutputReady); n != 0 {
		t.Fatalf("%d Job Output Ready published, want none", n)
	}
}

// A re-drive that stalls is nudged as an on-demand run (the run request
// again), never as an ingest: the batch output is read once.
func TestStalledRedriveIsResumedNotReingested(t *testing.T) {
	h := newHarness(t, nil)
	j := redrivingJob(t, h)
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if n := h.bus.count(config.DetailOnDemandRun); n != 0 {
		t.Fatalf("a fresh re-drive was nudged (%d run requests)", n)
	}
	h.clock.Add(reconcile.DefaultStaleAfter + time.Minute)
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if runs, readies := h.bus.count(config.DetailOnDemandRun), h.bus.count(config.DetailJobOutputReady); runs != 1 || readies != 0 {
		t.Fatalf("stalled re-drive: %d run requests and %d Job Output Ready, want 1 and 0", runs, readies)
	}
	cur, err := h.job(j.ID)
	if err != nil || cur.Status != job.StatusIngesting || cur.Retries != 1 {
		t.Fatalf("job %+v (%v), want still ingesting with one retry counted", cur, err)
	}
	// cancel_job during the re-drive asks the run to stop.
	if _, err := h.svc.Batch.Cancel(context.Background(), "alice", j.ID); err != nil {
		t.Fatal(err)
	}
	if cur, _ = h.job(j.ID); cur.Redrive == nil || !cur.Redrive.CancelRequested {
		t.Fatalf("cancel during the re-drive: %+v", cur.Redrive)
	}
	if _, err := h.svc.Batch.Cancel(context.Background(), "alice", j.ID); err != nil && !errors.Is(err, store.ErrNoChange) {
		t.Fatalf("second cancel: %v", err)
	}
	// The run sees it before any call: the job ends cancelled, every stored
	// result (2 from the batch part, 1 on demand) counted once.
	h.svc.OnDemandRuns.Model = noCalls{t}
	if err := h.svc.OnDemandRuns.RunOnDemand(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	if cur, _ = h.job(j.ID); cur.Status != job.StatusCancelled || cur.Succeeded != 3 || cur.Failed != 0 || cur.Parts[0].Status != job.StatusCancelled {
		t.Fatalf("cancelled re-drive = %s, %d succeeded, %d failed, part %s; want cancelled with the 3 stored results", cur.Status, cur.Succeeded, cur.Failed, cur.Parts[0].Status)
	}
}

// noCalls is a runtime API no call may reach.
type noCalls struct{ t *testing.T }

func (n noCalls) Invoke(context.Context, string, job.Input, job.Params) (ondemand.OnDemandResult, error) {
	n.t.Error("a model call after the cancel")
	return ondemand.OnDemandResult{}, errors.New("no calls")
}

// eventFirst is a Bedrock provider whose stop's own "Stopping" event is
// applied before the stop call returns: the event won the race with the
// reconciler's next write.
type eventFirst struct {
	service.BatchProvider
	apply func(ref string) error
}

func (e eventFirst) Stop(_ context.Context, ref string) error { return e.apply(ref) }

// A deadline stop whose "Stopping" event is applied before the reconciler
// writes again is still the deadline's: the job stays in progress with its
// re-drive recorded, never cancelling, so the records the part leaves run
// on demand once its output is read.
func TestDeadlineStopEventFirst(t *testing.T) {
	var h *harness
	h = newFaultyHarness(t, faults{bedrock: func(p service.BatchProvider) service.BatchProvider {
		return eventFirst{p, func(ref string) error {
			return h.svc.Batch.OnProviderEvent(context.Background(), batch.ProviderEvent{JobName: "mcpbatch-" + runningID, Ref: ref, Status: "Stopping"})
		}}
	}})
	ctx := context.Background()
	now := h.clock.Now()
	ref := "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abcdefghijkl"
	j := &job.Job{ID: runningID, Owner: "alice", Provider: job.ProviderBedrock, Model: bedrockModel, Mode: job.ModeBatch,
		Status: job.StatusInProgress, ProviderStatus: "InProgress", RecordCount: 5, Shards: 1, TTLDays: 7,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(7 * 24 * time.Hour), InputURI: "s3://test/input/" + runningID, InputOrder: true,
		Deadline: now.Add(time.Minute), DeadlineTokens: 1100, Params: &job.Params{MaxTokens: 1024},
		Parts: []job.Part{{Index: 0, Name: "mcpbatch-" + runningID, Ref: ref, Status: job.StatusInProgress, ProviderStatus: "InProgress", RecordCount: 5}},
	}
	if err := h.st.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	n, err := h.svc.Batch.StopForDeadline(ctx, j)
	if err != nil || n != 1 {
		t.Fatalf("StopForDeadline = %d, %v; want the part stopped", n, err)
	}
	got, err := h.job(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusInProgress || got.Redrive == nil || !slices.Equal(got.Redrive.Parts, []int{0}) || got.Parts[0].Status != job.StatusCancelling {
		t.Fatalf("job %s (redrive %+v, part %s): want in_progress with part 0's re-drive recorded and the part cancelling", got.Status, got.Redrive, got.Parts[0].Status)
	}
	if n, err := h.svc.Batch.StopForDeadline(ctx, got); err != nil || n != 0 {
		t.Fatalf("a second deadline step = %d, %v; want nothing more to stop", n, err)
	}
}

const runningID = "01jq0000000000000000000000"

// A part held at the job's budget when the deadline comes is no unfinished
// batch work: it ends stopped at the budget (its records fail as held, for
// retry_failed with a new budget) and stays out of the on-demand re-drive,
// which would run it at about twice the batch price, past the budget.
func TestDeadlineLeavesBudgetHeldPartsOut(t *testing.T) {
	h := newFaultyHarness(t, faults{bedrock: func(p service.BatchProvider) service.BatchProvider {
		return eventFirst{p, func(string) error { return nil }}
	}})
	ctx := context.Background()
	now := h.clock.Now()
	ref := "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abcdefghijkl"
	j := &job.Job{ID: runningID, Owner: "alice", Provider: job.ProviderBedrock, Model: bedrockModel, Mode: job.ModeBatch,
		Status: job.StatusInProgress, ProviderStatus: "InProgress", RecordCount: 10, Shards: 1, TTLDays: 7, BudgetUSD: 1,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(7 * 24 * time.Hour), InputURI: "s3://test/input/" + runningID, InputOrder: true,
		Deadline: now.Add(time.Minute), DeadlineTokens: 1100, Params: &job.Params{MaxTokens: 1024},
		Parts: []job.Part{
			{Index: 0, Name: "mcpbatch-" + runningID + "-1", Ref: ref, Status: job.StatusInProgress, ProviderStatus: "InProgress", RecordCount: 5, EstimateUSD: 0.8},
			{Index: 1, Name: "mcpbatch-" + runningID + "-2", Status: job.StatusQueued, ProviderStatus: batch.HeldForBudget, Held: true, RecordCount: 5, EstimateUSD: 0.8,
				Message: "not submitted: spent or in flight $0.8000 plus this provider job's estimate $0.8000 would pass budget_usd $1.0000"},
		},
	}
	if err := h.st.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.Batch.StopForDeadline(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, err := h.job(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Redrive == nil || slices.Contains(got.Redrive.Parts, 1) || got.Parts[1].ProviderStatus != batch.StoppedAtBudget || got.Parts[1].Status != job.StatusIngesting {
		t.Fatalf("held part %s/%s, re-drive %+v; want it stopped at the budget and out of the re-drive", got.Parts[1].Status, got.Parts[1].ProviderStatus, got.Redrive)
	}
}
