package local_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// testClock is the services' clock: real time moved by an offset the test
// sets to reach a deadline (the stores stamp items with real time, so the
// clock keeps running).
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().UTC().Add(c.offset)
}

// Set moves the clock to t.
func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	c.offset += time.Until(t.Add(-c.offset))
	c.mu.Unlock()
}

// TestDeadlineRedrive is a deadline met by a re-drive, end to end: a slow
// simulated batch job is stopped by the reconciler once the deadline leaves
// just the time its unfinished records need on demand; the records it
// produced before the stop are ingested, the others run on demand in the
// same job, none twice, and every result says its path. Events that come
// again or late afterwards (a duplicate Stopped, a late Completed, another
// "Job Output Ready", another run request) change nothing.
var _ = flow("DeadlineRedrive", func(t *testing.T, w wiring) {
	// On DynamoDB the job reads back with no deadline: the stop never comes.
	clk := &testClock{}
	s := newSuiteOn(t, w, local.Options{Now: clk.Now})
	s.l.Sim.SlowJob = func(string) int { return 40 } // 40 records per step
	cs := s.client("alice")
	ctx := context.Background()

	// A deadline that cannot be met even on demand is refused, naming the field, the estimate and the limit.
	soon := clk.Now().Add(10 * time.Second).Format(time.RFC3339)
	msg := toolErr(t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(150), "deadline": soon})
	if !strings.Contains(msg, "deadline") || !strings.Contains(msg, "takes about") || !strings.Contains(msg, "requests and") {
		t.Fatalf("infeasible deadline: %q, want the field, the estimate and the quota", msg)
	}
	later := clk.Now().Add(2 * time.Hour).Format(time.RFC3339)
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"not RFC 3339", map[string]any{"model": haiku, "records": records(150), "deadline": "tomorrow"}, "not an RFC 3339 time"},
		{"in the past", map[string]any{"model": haiku, "records": records(150), "deadline": clk.Now().Add(-time.Hour).Format(time.RFC3339)}, "not in the future"},
		// Message Batches: no on-demand path to re-drive on.
		{"anthropic", map[string]any{"model": claudeHaiku, "records": records(150), "deadline": later}, "no on-demand path"},
		{"file submit", map[string]any{"model": haiku, "input_uri": "s3://mcpbatch-local/inputs/alice/x.jsonl", "deadline": later}, "not held for file submits"},
	} {
		if msg := toolErr(t, cs, "submit_batch", c.args); !strings.Contains(msg, "deadline") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want deadline and %q", c.name, msg, c.want)
		}
	}

	deadline := clk.Now().Add(2 * time.Hour).Truncate(time.Second)
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(150), "deadline": deadline.Format(time.RFC3339)})
	if h.Mode != job.ModeBatch || h.Parts != 1 {
		t.Fatalf("handle %+v, want one batch part", h)
	}
	// Submitted → Validating → Scheduled → InProgress, then two slow steps: 80 of 150 processed.
	for range 5 {
		s.l.Sim.Step(ctx)
		s.l.Bus.Wait()
	}
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "in_progress" || j.Deadline != deadline.Format(time.RFC3339) || j.StopBatchBy == "" || j.Redrive != nil {
		t.Fatalf("job before the stop = %+v", j)
	}
	stopBy, err := time.Parse(time.RFC3339, j.StopBatchBy)
	if err != nil || !stopBy.After(clk.Now()) || !stopBy.Before(deadline) {
		t.Fatalf("stop_batch_by %q (%v), want between now and the deadline", j.StopBatchBy, err)
	}
	if rep := s.reconcile(); rep.DeadlineStops != 0 {
		t.Fatalf("stopped before stop_batch_by: %+v", rep)
	}

	clk.Set(stopBy.Add(time.Second))
	if rep := s.reconcile(); rep.DeadlineStops != 1 {
		t.Fatalf("reconcile after stop_batch_by = %+v, want one part stopped", rep)
	}
	if j = call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); j.Status != "in_progress" || j.Redrive == nil || j.Redrive.StoppedParts != 1 || j.StopBatchBy != "" {
		t.Fatalf("job after the stop = %+v, want in_progress with one stopped part (not cancelling)", j)
	}
	if rep := s.reconcile(); rep.DeadlineStops != 0 {
		t.Fatalf("a second reconcile stopped again: %+v", rep)
	}
	// Stopping → Stopped with the 80 records processed; ingest; the re-drive runs on demand.
	before := s.l.Reports.Runtime.Stats().Calls
	j = s.finish(cs, h.JobID)
	if j.Status != "completed" || j.Succeeded != 150 || j.Failed != 0 {
		t.Fatalf("job = %+v, want completed with 150 succeeded", j)
	}
	if r := j.Redrive; r == nil || r.Records != 70 || r.BatchSucceeded != 80 || r.Done != 70 {
		t.Fatalf("redrive = %+v, want 80 produced by the batch part, 70 on demand", j.Redrive)
	}
	if calls := s.l.Reports.Runtime.Stats().Calls - before; calls != 70 {
		t.Fatalf("%d on-demand calls, want 70 (only the records the batch part left)", calls)
	}
	c := j.Cost
	if c == nil || c.Redrive == nil || c.Basis != "batch" {
		t.Fatalf("cost = %+v, want the batch basis with the re-drive priced apart", c)
	}
	if r := c.Redrive; r.Records != 70 || r.AtBatchPriceUSD <= 0 || r.OnDemandUSD <= r.AtBatchPriceUSD ||
		fmt.Sprintf("%.6f", r.ExtraUSD) != fmt.Sprintf("%.6f", r.OnDemandUSD-r.AtBatchPriceUSD) {
		t.Fatalf("re-drive cost = %+v, want on demand above the batch price and the difference", r)
	}
	if !strings.Contains(strings.Join(j.Warnings, "\n"), "deadline") {
		t.Errorf("warnings %v do not say the deadline stopped the batch part", j.Warnings)
	}
	results := func() map[string]string {
		recs := allResults(t, cs, h.JobID, "", 100)
		paths := map[string]string{}
		for i, r := range recs {
			if _, dup := paths[r.ID]; dup {
				t.Fatalf("record %s listed twice", r.ID)
			}
			// Re-driven records keep their place: results stay in input order.
			if want := fmt.Sprintf("q%03d", i); r.ID != want {
				t.Fatalf("result %d is %s (path %s), want %s: not in input order", i, r.ID, r.Path, want)
			}
			paths[r.ID] = r.Path
		}
		return paths
	}
	paths := results()
	byPath := map[string]int{}
	for _, p := range paths {
		byPath[p]++
	}
	if len(paths) != 150 || byPath[job.PathBatch] != 80 || byPath[job.PathOnDemand] != 70 {
		t.Fatalf("%d results by path %v, want 80 batch and 70 on_demand", len(paths), byPath)
	}

	// Duplicate and late events after the re-drive change nothing.
	stored, err := s.l.Service.Batch.Store.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	part := stored.Parts[0]
	for _, status := range []string{"Stopped", "Stopped", "Completed", "InProgress"} {
		ev := fmt.Sprintf(`{"version":"0","id":"late-%s","detail-type":"Batch Inference Job State Change","source":"aws.bedrock","account":"123456789012","time":"2026-12-01T00:00:00Z","region":"us-east-1","resources":[%q],"detail":{"batchJobName":%q,"batchJobArn":%q,"status":%q}}`,
			status, part.Ref, part.Name, part.Ref, status)
		if err := s.l.Router.Route(ctx, []byte(ev)); err != nil {
			t.Fatalf("late %s event: %v", status, err)
		}
	}
	if err := s.l.Service.Batch.Ingest(ctx, h.JobID); err != nil {
		t.Fatalf("repeated ingest: %v", err)
	}
	if err := s.l.Service.OnDemandRuns.RunOnDemand(ctx, h.JobID); err != nil {
		t.Fatalf("repeated run: %v", err)
	}
	s.reconcile()
	s.l.Bus.Wait()
	again := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if again.Status != j.Status || again.Succeeded != 150 || again.Failed != 0 || again.CostUSD != j.CostUSD {
		t.Fatalf("after late events: %+v, was %+v", again, j)
	}
	if calls := s.l.Reports.Runtime.Stats().Calls - before; calls != 70 {
		t.Fatalf("%d on-demand calls after late events, want still 70", calls)
	}
	for id, p := range results() {
		if paths[id] != p {
			t.Fatalf("record %s path %q, was %q", id, p, paths[id])
		}
	}
})

// TestDeadlineFlex: an on-demand run with deadline pressure does not take
// Flex when the tier is left to auto (a warning says so); a run on Flex that
// is throttled backs off and, its deadline near, moves to standard for the
// records left (a warning says so), the records before priced at flex.
var _ = flow("DeadlineFlex", func(t *testing.T, w wiring) {
	// On DynamoDB the job reads back with no deadline: all 48 stay on flex.
	t.Setenv(model.EnvModelsJSON, tierOverride)
	// Half the Flex calls are throttled; one call at a time, so the run
	// checkpoints every 16 records.
	s := newSuiteOn(t, w, local.Options{Reports: local.ReportsOptions{FlexThrottleRate: 0.5, Concurrency: 1}})
	cs := s.client("alice")
	rt := s.l.Reports.Runtime
	// Four minutes fit 48 short records at any rate the suite assumes, and
	// are within the five-minute margin: the deadline presses from the start.
	deadline := time.Now().Add(4 * time.Minute).UTC().Format(time.RFC3339)

	t.Run("auto takes standard", func(t *testing.T) {
		before := rt.Stats().Tiers
		h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": tierModel, "mode": "on_demand", "records": records(20), "max_tokens": 200, "deadline": deadline})
		j := s.finish(cs, h.JobID)
		after := rt.Stats().Tiers
		if j.Status != "completed" || j.Cost == nil || j.Cost.Tier != "" || after["flex"] != before["flex"] || after["default"]-before["default"] != 20 {
			t.Fatalf("job %+v, calls by tier %v → %v: want 20 standard calls and a standard cost", j, before, after)
		}
		if !strings.Contains(strings.Join(j.Warnings, "\n"), "leaves no room for the flex tier") {
			t.Errorf("warnings %v do not say why standard", j.Warnings)
		}
	})

	t.Run("throttled flex moves to standard", func(t *testing.T) {
		before := rt.Stats()
		h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": tierModel, "mode": "on_demand", "tier": "flex", "records": records(48), "max_tokens": 200, "deadline": deadline})
		j := s.finish(cs, h.JobID)
		after := rt.Stats()
		flex, std := after.Tiers["flex"]-before.Tiers["flex"], after.Tiers["default"]-before.Tiers["default"]
		if j.Status != "completed" || j.Succeeded != 48 || flex != 16 || std != 32 || after.Throttled == before.Throttled {
			t.Fatalf("job %s %d succeeded; %d flex and %d standard calls (throttled %d); want the first 16 on flex, throttled, the other 32 standard",
				j.Status, j.Succeeded, flex, std, after.Throttled-before.Throttled)
		}
		if !strings.Contains(strings.Join(j.Warnings, "\n"), "the 32 records left run on the standard tier") {
			t.Errorf("warnings %v do not say the run left flex", j.Warnings)
		}
		// 16 records at flex prices, 32 at standard: between all-flex and all-standard.
		m := tierCatalogModel(t)
		u := model.Usage{Input: j.InputTokens, Output: j.OutputTokens}
		allFlex, allStd := m.CostTier(u, model.TierFlex).Total, m.CostTier(u, model.TierStandard).Total
		if !(j.CostUSD > allFlex && j.CostUSD < allStd) {
			t.Errorf("cost $%.6f, want between all-flex $%.6f and all-standard $%.6f", j.CostUSD, allFlex, allStd)
		}
	})
})

// TestDeadlineDropsQueuedPart: a part still waiting for the model's job quota
// when its deadline presses never reaches Bedrock; all its records run on
// demand in the same job.
func TestDeadlineDropsQueuedPart(t *testing.T) {
	clk := &testClock{}
	s := newSuiteWith(t, local.Options{Now: clk.Now})
	s.l.Service.Batch.Quota = map[string]int{haiku: 1}
	cs := s.client("alice")
	ctx := context.Background()
	first := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(120),
		"deadline": clk.Now().Add(3 * time.Hour).Format(time.RFC3339)})
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "queued" || j.StopBatchBy == "" {
		t.Fatalf("second job = %+v, want queued behind the quota with a stop time", j)
	}
	stopBy, err := time.Parse(time.RFC3339, j.StopBatchBy)
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(stopBy.Add(time.Second))
	before := s.l.Reports.Runtime.Stats().Calls
	s.reconcile()
	j = s.finish(cs, h.JobID)
	if j.Status != "completed" || j.Succeeded != 120 || j.Redrive == nil || j.Redrive.Records != 120 || j.Redrive.BatchSucceeded != 0 {
		t.Fatalf("job = %+v (redrive %+v), want all 120 records run on demand", j, j.Redrive)
	}
	if calls := s.l.Reports.Runtime.Stats().Calls - before; calls != 120 {
		t.Fatalf("%d on-demand calls, want 120", calls)
	}
	for name := range s.l.Sim.Statuses() {
		if strings.Contains(name, h.JobID) {
			t.Fatalf("the dropped part reached Bedrock as %s", name)
		}
	}
	for _, r := range allResults(t, cs, h.JobID, "", 100) {
		if r.Path != job.PathOnDemand {
			t.Fatalf("record %s path %q, want on_demand", r.ID, r.Path)
		}
	}
	if f := s.finish(cs, first.JobID); !f.Terminal {
		t.Fatalf("the first job did not end: %+v", f)
	}
	_ = ctx
}

// TestDeadlineNoTimeForBatch: a deadline so near that a batch job's parts
// would be stopped at once runs an auto job on demand from the start, at
// the standard tier; the dry run says so.
func TestDeadlineNoTimeForBatch(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	// 150 records need under a minute at the simulated account's quota; three
	// minutes are inside the five-minute margin.
	args := map[string]any{"model": haiku, "records": records(150), "deadline": time.Now().Add(3 * time.Minute).UTC().Format(time.RFC3339)}
	dry := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": args["model"], "records": args["records"], "deadline": args["deadline"], "dry_run": true})
	if d := dry.DryRun; d == nil || d.Mode != job.ModeOnDemand || d.Auto != "on_demand standard" || !strings.Contains(d.AutoWhy, "leaves no time for a batch job") || len(d.Problems) > 0 {
		t.Fatalf("dry run = %+v, want on demand at standard because of the deadline", dry.DryRun)
	}
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
	j := s.finish(cs, h.JobID)
	if h.Mode != job.ModeOnDemand || j.Status != "completed" || j.Succeeded != 150 || j.Cost == nil || j.Cost.Basis != "on_demand" || j.Cost.Tier != "" {
		t.Fatalf("handle %+v, job %+v: want an on-demand standard run", h, j)
	}
	if !strings.Contains(strings.Join(j.Warnings, "\n"), "leaves no time for a batch job") {
		t.Errorf("warnings %v", j.Warnings)
	}
	for _, r := range allResults(t, cs, h.JobID, "", 100) {
		if r.Path != job.PathOnDemand {
			t.Fatalf("record %s path %q", r.ID, r.Path)
		}
	}
	// An explicit batch mode stays batch: the reconciler stops it in time.
	args["mode"] = "batch"
	if b := call[mcpserver.JobHandle](t, cs, "submit_batch", args); b.Mode != job.ModeBatch {
		t.Fatalf("explicit batch with a near deadline ran %s", b.Mode)
	}
}
