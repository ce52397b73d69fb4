package local_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
)

const claudeHaiku = "claude-haiku-4-5"

// reconcile runs one reconciler pass and waits for what it published.
func (s *suite) reconcile() reconcile.ReconcileReport {
	s.t.Helper()
	rep, err := s.l.Service.Reconciler.Reconcile(context.Background())
	if err != nil {
		s.t.Fatalf("reconcile: %v", err)
	}
	s.l.Bus.Wait()
	return rep
}

// The whole Anthropic path through the real SDK against the simulator:
// submit → poll (in_progress, counts stay at processing) → ended → reconcile →
// ingest → get_job_results, with errored requests keeping their type and message.
var _ = flow("AnthropicSubmitToResults", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{FailEvery: 10})
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{
		"model": claudeHaiku, "records": records(30), "system": "You are terse.",
	})
	if h.Provider != "anthropic" || h.Status != "submitted" || h.Parts != 1 {
		t.Fatalf("handle = %+v, want anthropic submitted in 1 batch (provider picked by model)", h)
	}
	if rep := s.reconcile(); rep.Polled != 1 || rep.OutputReady != 0 {
		t.Fatalf("reconcile before the batch ended = %+v", rep)
	}
	if j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); j.Status != "in_progress" || j.ProviderStatus != "in_progress" {
		t.Fatalf("job while the batch runs = %+v", j)
	}
	s.l.Anthropic.Step()
	if rep := s.reconcile(); rep.OutputReady != 1 {
		t.Fatalf("reconcile after the batch ended = %+v, want one Job Output Ready", rep)
	}
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "partially_completed" || j.Succeeded != 27 || j.Failed != 3 || j.BadLines != 0 || j.InputTokens == 0 || j.OutputTokens == 0 {
		t.Fatalf("job = %+v, want partially_completed 27 succeeded 3 failed (every 10th errors)", j)
	}
	recs := allResults(t, cs, h.JobID, "", 7)
	if len(recs) != 30 {
		t.Fatalf("%d results, want 30", len(recs))
	}
	failed := allResults(t, cs, h.JobID, "failed", 100)
	if len(failed) != 3 {
		t.Fatalf("failed = %+v", failed)
	}
	for _, r := range failed {
		if r.ErrorCode != "invalid_request_error" || !strings.Contains(r.ErrorMessage, "SIMULATED: request") {
			t.Errorf("errored result lost its type or message: %+v", r)
		}
	}
	for _, r := range allResults(t, cs, h.JobID, "succeeded", 100) {
		// Anthropic saw the suite's id for the record (its position, with the
		// part's mark), and the answer came back under the caller's id.
		var i int
		fmt.Sscanf(r.ID, "q%d", &i)
		if !strings.Contains(r.Output, "SIMULATED") || !strings.Contains(r.Output, "request "+job.ProviderRecordID(i)+"_") || r.StopReason != "end_turn" {
			t.Errorf("succeeded result = %+v", r)
		}
	}
	// Later runs find nothing in flight and change nothing.
	if rep := s.reconcile(); rep.InFlight != 0 || rep.Calls != 0 {
		t.Errorf("reconcile after the end = %+v", rep)
	}
})

// Two reconciler runs at once (overlapping schedules) announce and ingest an ended batch once.
func TestOverlappingReconcilesIngestOnce(t *testing.T) {
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			s := newSuite(t)
			cs := s.client("alice")
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "provider": "anthropic", "records": records(40)})
			s.l.Anthropic.Step()
			var wg sync.WaitGroup
			reps := make([]reconcile.ReconcileReport, 2)
			errs := make([]error, 2)
			for i := range 2 {
				wg.Go(func() { reps[i], errs[i] = s.l.Service.Reconciler.Reconcile(context.Background()) })
			}
			wg.Wait()
			s.l.Bus.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if n := reps[0].OutputReady + reps[1].OutputReady; n != 1 {
				t.Fatalf("Job Output Ready published %d times by two runs (%+v), want once", n, reps)
			}
			j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
			if j.Succeeded != 36 || j.Failed != 4 || j.Status != "partially_completed" {
				t.Fatalf("job = %+v, want 36+4 counted once", j)
			}
			if n := len(allResults(t, cs, h.JobID, "", 500)); n != 40 {
				t.Fatalf("%d results, want 40", n)
			}
			if calls := s.l.Anthropic.Calls()["results"]; calls != 1 {
				t.Errorf("results streamed %d times, want once", calls)
			}
		})
	}
}

// cancel_job on an Anthropic job cancels the batch; the half already done is
// kept and the rest is reported as canceled.
func TestAnthropicCancel(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": records(20)})
	c := call[mcpserver.CancelOut](t, cs, "cancel_job", map[string]any{"job_id": h.JobID})
	if c.Status != "cancelling" {
		t.Fatalf("cancel = %+v", c)
	}
	s.reconcile() // still canceling at Anthropic: nothing moves
	s.l.Anthropic.Step()
	s.reconcile()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "cancelled" || j.Succeeded != 10 || j.Failed != 10 {
		t.Fatalf("job = %+v, want cancelled with 10 done and 10 canceled", j)
	}
	for _, r := range allResults(t, cs, h.JobID, "failed", 100) {
		if r.ErrorCode != "canceled" {
			t.Errorf("failed record %+v, want error_code canceled", r)
		}
	}
}

// Bad input is refused before anything is stored, naming the field and the limit.
func TestAnthropicBadInput(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	long := strings.Repeat("x", 257)
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"record id over 256 characters", map[string]any{"model": claudeHaiku, "records": []map[string]any{{"id": long, "prompt": "hi"}}},
			[]string{"records[0].id", "at most 256 characters"}},
		{"duplicate custom_id", map[string]any{"model": claudeHaiku, "records": []map[string]any{{"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"}}},
			[]string{"records[1].id", "duplicate", "unique"}},
		{"model of the other provider", map[string]any{"model": haiku, "provider": "anthropic", "records": records(1)},
			[]string{"model", claudeHaiku}},
		{"unknown provider", map[string]any{"model": claudeHaiku, "provider": "openai", "records": records(1)},
			[]string{"provider", "bedrock or anthropic"}},
		{"messages start with assistant", map[string]any{"model": claudeHaiku, "records": []map[string]any{{"messages": []map[string]any{{"role": "assistant", "content": "x"}}}}},
			[]string{"records[0].messages[0].role", "user"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := toolErr(t, cs, "submit_batch", tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not name %q", msg, w)
				}
			}
		})
	}
	if list := call[mcpserver.ListOut](t, cs, "list_jobs", nil); len(list.Jobs) != 0 {
		t.Errorf("bad input stored jobs: %+v", list.Jobs)
	}
	if n := s.l.Anthropic.Calls()["create"]; n != 0 {
		t.Errorf("bad input reached Anthropic %d times", n)
	}
}

// 100,001 requests become two Message Batches under one job, balanced
// (50,001 + 50,000), and both are ingested into that job.
func TestAnthropicSplitsOver100k(t *testing.T) {
	if testing.Short() {
		t.Skip("100,001 records")
	}
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	s.l.Anthropic.AnswerBytes = 20
	recs := make([]job.Input, wire.MaxRequests+1)
	for i := range recs {
		recs[i] = job.Input{ID: fmt.Sprintf("r%06d", i), Prompt: "p"}
	}
	j, err := s.l.Service.Batch.Submit(context.Background(), batch.SubmitRequest{Owner: "alice", Model: claudeHaiku, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Parts) != 2 || j.Parts[0].RecordCount != 50_001 || j.Parts[1].RecordCount != 50_000 || j.Status != job.StatusSubmitted {
		t.Fatalf("parts = %+v status %s", j.Parts, j.Status)
	}
	s.l.Anthropic.Step()
	s.reconcile()
	got, err := s.l.Service.Queries.Get(context.Background(), "alice", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusCompleted || got.Succeeded != 100_001 {
		t.Fatalf("job = %s %d succeeded, want completed 100001", got.Status, got.Succeeded)
	}
}

// The reconciler recovers a Bedrock job whose Completed event was lost, and the
// event arriving after all (or a stale one) never moves the job backwards.
var _ = flow("ReconcilerRecoversDroppedBedrockEvent", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{FailEvery: 10})
	s.l.Sim.DropEvent = func(st string) bool { return st == "Completed" }
	var mu sync.Mutex
	var inProgress []byte
	emit := s.l.Sim.Emit
	s.l.Sim.Emit = func(ctx context.Context, ev []byte) {
		if bytes.Contains(ev, []byte(`"status":"InProgress"`)) {
			mu.Lock()
			inProgress = bytes.Clone(ev)
			mu.Unlock()
		}
		emit(ctx, ev)
	}
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
	s.settle()
	if j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); j.Status != "in_progress" {
		t.Fatalf("job before reconcile = %+v, want stuck in_progress (Completed dropped)", j)
	}
	// Not stale yet: the reconciler leaves a job with a recent event alone.
	if rep := s.reconcile(); rep.Polled != 0 {
		t.Fatalf("reconcile polled a fresh job: %+v", rep)
	}
	s.l.Service.Reconciler.StaleAfter = time.Nanosecond
	if rep := s.reconcile(); rep.Polled != 1 || rep.Changed != 1 || rep.OutputReady != 1 {
		t.Fatalf("reconcile = %+v, want one poll moving the job to ingesting", rep)
	}
	want := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if want.Status != "partially_completed" || want.Succeeded != 90 || want.Failed != 10 {
		t.Fatalf("recovered job = %+v", want)
	}
	late := [][]byte{bytes.Replace(inProgress, []byte(`"status":"InProgress"`), []byte(`"status":"Completed"`), 1), inProgress}
	for _, ev := range late {
		if err := s.l.Router.Route(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		s.l.Bus.Wait()
	}
	s.reconcile()
	got := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if got.Status != want.Status || got.Succeeded != want.Succeeded || got.Failed != want.Failed || got.CompletedAt != want.CompletedAt {
		t.Errorf("after late events job = %+v, want unchanged %+v", got, want)
	}
})

// One run reaches every job in flight even past the store's 500-job page: each
// job it polls is stamped and moves behind the others.
func TestReconcilePagesPastOneStorePage(t *testing.T) {
	s := newSuite(t)
	const n = job.MaxPageSize + 10
	for i := range n {
		if _, err := s.l.Service.Batch.Submit(context.Background(), batch.SubmitRequest{Owner: "alice", Model: claudeHaiku,
			Records: []job.Input{{ID: fmt.Sprint("r", i), Prompt: "p"}}}); err != nil {
			t.Fatal(err)
		}
	}
	for run := range 2 {
		rep := s.reconcile()
		if rep.InFlight != n || rep.Polled != n {
			t.Fatalf("run %d: %+v, want all %d jobs polled", run, rep, n)
		}
	}
}
