package local_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/pipeline/corpus"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

// emojiRecords are n records whose prompts the dry run estimates at one token
// per 4 characters while the simulator counts one per 4 bytes (4 per emoji):
// they cost about four times their estimated input.
func emojiRecords(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"id": fmt.Sprintf("e%03d", i), "prompt": fmt.Sprintf("%d %s", i, strings.Repeat("🙂", 400))}
	}
	return out
}

// reconcileOverlapping runs n reconciler runs at once (duplicated schedules)
// and waits for what they published.
func (s *suite) reconcileOverlapping(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := s.l.Service.Reconciler.Reconcile(context.Background()); err != nil {
				s.t.Errorf("reconcile: %v", err)
			}
		})
	}
	wg.Wait()
	s.l.Bus.Wait()
}

// runToEnd steps the simulators (Bedrock, Anthropic) and the reconciler
// (which starts parts queued behind the quota and polls Anthropic) until the
// job ends, and returns it.
func (s *suite) runToEnd(cs *mcp.ClientSession, id string) mcpserver.JobView {
	s.t.Helper()
	for range 20 {
		s.l.Anthropic.Step()
		s.settle()
		s.reconcile()
		if j := call[mcpserver.JobView](s.t, cs, "get_job", map[string]any{"job_id": id}); j.Terminal {
			return j
		}
	}
	s.t.Fatalf("job %s did not end", id)
	return mcpserver.JobView{}
}

// TestBudgetHoldsUnsubmittedParts: a 300-record batch job split into three
// provider jobs (records per job lowered to 100 in the simulated account)
// that wait for one another behind a quota of one job. Its budget passes the
// submit check (the estimate), but the first provider job costs about four
// times its estimated input, so what it spent plus the next part's estimate
// is over the budget: the other two are held and never reach the simulator,
// even with reconciler runs overlapping. The job ends partially_completed
// saying what it spent of the budget and how many records were not run; the
// held records are failed records (BudgetHeld) that retry_failed, with a new
// budget, runs.
var _ = flow("BudgetHoldsUnsubmittedParts", func(t *testing.T, w wiring) {
	acct := simbedrock.NewAccount()
	acct.Update(haiku, func(m *simbedrock.AccountModel) { m.Batch.MaxRecords, m.Batch.Concurrent = 100, 1 })
	s := newSuiteOn(t, w, local.Options{Account: acct})
	s.l.Sim.MaxJobsPerModel = 1
	s.l.Service.Batch.DefaultQuota = 1
	cs := s.client("alice")

	args := map[string]any{"model": haiku, "records": emojiRecords(300), "max_tokens": 8, "mode": "batch"}
	dry := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": emojiRecords(300), "max_tokens": 8, "mode": "batch", "dry_run": true})
	if dry.DryRun == nil || len(dry.DryRun.Parts) != 3 || len(dry.DryRun.Problems) > 0 {
		t.Fatalf("dry run %+v, want 3 provider jobs and no problem", dry.DryRun)
	}
	// Just over the estimate: the submit passes; one part's real cost (about
	// four times its estimated input) leaves no room for another.
	budget := dry.DryRun.Cost.Total * 1.05
	args["budget_usd"] = budget
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
	if h.Parts != 3 {
		t.Fatalf("job in %d provider jobs, want 3", h.Parts)
	}
	created := func() []string {
		var names []string
		for name := range s.l.Sim.Statuses() {
			if strings.Contains(name, h.JobID) {
				names = append(names, name)
			}
		}
		return names
	}
	var j mcpserver.JobView
	for range 20 {
		s.settle()
		s.reconcileOverlapping(3)
		if j = call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); j.Terminal {
			break
		}
	}
	if !j.Terminal {
		t.Fatalf("job did not end: %+v", j)
	}
	if names := created(); len(names) != 1 || !strings.HasSuffix(names[0], "-p1") {
		t.Fatalf("the simulator created %v for the job, want only its first provider job", names)
	}
	if j.Status != string(job.StatusPartiallyCompleted) || j.Succeeded != 100 || j.Failed != 200 {
		t.Fatalf("job = %s with %d succeeded, %d failed; want partially_completed, 100 and the 200 held", j.Status, j.Succeeded, j.Failed)
	}
	msg := regexp.MustCompile(`spent \$([0-9.]+) of budget \$([0-9.]+); 200 records in 2 held provider jobs were not run`).FindStringSubmatch(j.Error)
	if msg == nil {
		t.Fatalf("job error %q does not say what was spent of the budget and what was not run", j.Error)
	}
	if want := fmt.Sprintf("%.4f", j.CostUSD); msg[1] != want || msg[2] != fmt.Sprintf("%.4f", budget) {
		t.Errorf("message names spent $%s of $%s, want cost_usd $%s of $%.4f", msg[1], msg[2], want, budget)
	}
	if j.SpentUSD == nil || j.RemainingUSD == nil || *j.SpentUSD != j.CostUSD || *j.RemainingUSD != max(0, budget-j.CostUSD) {
		t.Errorf("spent %v remaining %v, want cost_usd %v and budget − it", j.SpentUSD, j.RemainingUSD, j.CostUSD)
	}
	if j.CostUSD+dry.DryRun.Cost.Total/3 <= budget {
		t.Fatalf("spent $%.4f plus a part's estimate fits budget $%.4f: the test does not exercise the hold", j.CostUSD, budget)
	}

	// Nothing lost: every record not run is a failed record saying why.
	held := allResults(t, cs, h.JobID, "failed", 100)
	if len(held) != 200 {
		t.Fatalf("%d failed records, want the 200 held", len(held))
	}
	for _, r := range held {
		if r.ErrorCode != job.RecordBudgetHeld || !strings.Contains(r.ErrorMessage, "budget_usd") {
			t.Fatalf("held record %+v, want error_code %s and the budget named", r, job.RecordBudgetHeld)
		}
	}

	// retry_failed with a new budget runs them.
	child := call[mcpserver.RetryOut](t, cs, "retry_failed", map[string]any{"job_id": h.JobID, "budget_usd": 1})
	c := s.runToEnd(cs, child.JobID)
	if c.Status != string(job.StatusCompleted) || c.RecordCount != 200 || c.Succeeded != 200 {
		t.Fatalf("retry = %s with %d of %d succeeded, want the 200 held records completed", c.Status, c.Succeeded, c.RecordCount)
	}

	// A budget with room for one more part but not two, and a quota with
	// room for both once the first part ended: overlapping reconciler runs
	// submit exactly one of them (the claim's write judges the budget with
	// the other's lease in view); the last one is held, then stopped.
	perPart := dry.DryRun.Cost.Total / 3
	budget2 := j.CostUSD + 1.5*perPart
	args["budget_usd"] = budget2
	args["name"] = "second"
	h2 := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
	s.settle() // its first part ends; the others wait for the quota
	s.l.Service.Batch.Quota = map[string]int{haiku: 3}
	s.l.Sim.MaxJobsPerModel = 3
	s.reconcileOverlapping(3)
	// While the second part runs, the third is held, and get_job counts the
	// first part's cost (its manifest's totals) as spent.
	j2 := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h2.JobID})
	if j2.ProviderStatus != "HeldForBudget" || j2.SpentUSD == nil || j2.RemainingUSD == nil ||
		*j2.SpentUSD < j.CostUSD-1e-9 || *j2.SpentUSD > j.CostUSD+1e-9 || *j2.RemainingUSD != max(0, budget2-*j2.SpentUSD) {
		t.Fatalf("running job: provider_status %s, spent %v, remaining %v; want HeldForBudget, the first part's $%v and budget − it",
			j2.ProviderStatus, j2.SpentUSD, j2.RemainingUSD, j.CostUSD)
	}
	s.settle() // the second part ends
	// Another job takes the whole quota: the held part stops anyway (a stop
	// needs no room at the provider), while that job still runs.
	s.l.Service.Batch.Quota = map[string]int{haiku: 1}
	s.l.Sim.MaxJobsPerModel = 1
	other := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
	if other.Status != string(job.StatusSubmitted) {
		t.Fatalf("the other job is %s, want submitted (taking the quota)", other.Status)
	}
	s.reconcileOverlapping(3)
	j2 = call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h2.JobID})
	if o := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": other.JobID}); !j2.Terminal || o.Terminal {
		t.Fatalf("with the quota taken: job %s (terminal %v), the other %s; want the job stopped while the other runs", j2.Status, j2.Terminal, o.Status)
	}
	var names []string
	for name := range s.l.Sim.Statuses() {
		if strings.Contains(name, h2.JobID) {
			names = append(names, name)
		}
	}
	if len(names) != 2 || j2.Status != string(job.StatusPartiallyCompleted) || j2.Succeeded != 200 || j2.Failed != 100 ||
		!strings.Contains(j2.Error, "100 records in 1 held provider jobs were not run") {
		t.Fatalf("second job: the simulator created %v; job %s with %d succeeded, %d failed, error %q; want 2 created, 200 succeeded and 100 held",
			names, j2.Status, j2.Succeeded, j2.Failed, j2.Error)
	}
})

// TestPipelineBudgetRefused: a pipeline's budget_usd, or run_pipeline's for
// one run, refuses a run whose estimate is over it, naming both, and stores
// no job; get_report says why.
func TestPipelineBudgetRefused(t *testing.T) {
	s := newReportSuite(t, sqliteWiring, corpus.Spec{Text: 30}, 0)
	s.l.Reports.Runner.Config.Pipelines[0].BudgetUSD = 0.000001
	_, err := s.l.Reports.Runner.Tick(context.Background(), pipeline.TickRequest{Pipeline: "support-triage", Date: runDate})
	if err == nil || !regexp.MustCompile(`budget_usd: the estimated cost \$[0-9.]+ .* is over budget_usd \$0\.0000`).MatchString(err.Error()) {
		t.Fatalf("tick over budget: %v; want a refusal naming the estimate and the budget", err)
	}
	if _, err := s.l.Reports.Runner.Tick(context.Background(), pipeline.TickRequest{Pipeline: "support-triage", Date: runDate}); err == nil {
		t.Fatal("a second tick over budget started a run")
	}
	if runs, _, err := s.l.Reports.Runner.ListReports(context.Background(), "support-triage", "", 10); err != nil || len(runs) != 0 {
		t.Fatalf("runs after a refused tick: %v, %v; want none", runs, err)
	}
	// run_pipeline answers "requested" at once; get_report then says why no run started.
	if _, err := s.l.Reports.Runner.GetReport(context.Background(), "support-triage", runDate, time.Minute); err == nil ||
		!strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "estimated cost") || !strings.Contains(err.Error(), "over budget_usd") {
		t.Fatalf("get_report after a refused run: %v; want the refusal with both amounts", err)
	}

	// run_pipeline's budget_usd sets one for a run of a pipeline without one
	// (it may only lower a pipeline's: TestRunBudgetOnlyLowersThePipelines).
	s.l.Reports.Runner.Config.Pipelines[0].BudgetUSD = 0
	srv := httptest.NewServer(s.l.Handler())
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	day := time.Now().UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	if msg := toolErr(t, cs, "run_pipeline", map[string]any{"pipeline": "support-triage", "date": day, "budget_usd": -1}); !strings.Contains(msg, "budget_usd") {
		t.Errorf("negative budget: %q", msg)
	}
	run := call[pipeline.RunInfo](t, cs, "run_pipeline", map[string]any{"pipeline": "support-triage", "date": day, "budget_usd": 0.000001})
	if run.JobStatus != "requested" {
		t.Fatalf("run_pipeline: %+v, want requested", run)
	}
	s.settle()
	if msg := toolErr(t, cs, "get_report", map[string]any{"pipeline": "support-triage", "date": day}); !strings.Contains(msg, "refused") ||
		!regexp.MustCompile(`estimated cost \$[0-9.]+ .* is over budget_usd \$0\.0000`).MatchString(msg) {
		t.Fatalf("get_report after run_pipeline over its budget: %q; want the refusal with both amounts", msg)
	}
	if within := call[pipeline.RunInfo](t, cs, "run_pipeline", map[string]any{"pipeline": "support-triage", "date": day, "budget_usd": 5}); within.JobStatus != "requested" {
		t.Fatalf("run_pipeline within its budget: %+v", within)
	}
	s.settle()
	if rep := call[pipeline.ReportView](t, cs, "get_report", map[string]any{"pipeline": "support-triage", "date": day}); rep.Summary == nil {
		t.Fatalf("run within its budget: %+v, want a report", rep)
	}
}

// TestBudgetAtEstimateRunsEveryPart: a budget equal to the estimate holds
// nothing when every part starts at once (the parts' estimates, rounded to
// the micro-dollar each, may add up to a little more than the job's).
func TestBudgetAtEstimateRunsEveryPart(t *testing.T) {
	acct := simbedrock.NewAccount()
	acct.Update(haiku, func(m *simbedrock.AccountModel) { m.Batch.MaxRecords = 100 })
	s := newSuiteWith(t, local.Options{Account: acct})
	cs := s.client("alice")
	args := map[string]any{"model": haiku, "records": records(300), "max_tokens": 64, "mode": "batch", "dry_run": true}
	dry := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
	delete(args, "dry_run")
	args["budget_usd"] = dry.DryRun.Cost.Total
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
	j := s.runToEnd(cs, h.JobID)
	if h.Parts != 3 || j.Status != string(job.StatusCompleted) || j.Succeeded != 300 || j.CostUSD > dry.DryRun.Cost.Total {
		t.Fatalf("job in %d parts = %s, %d succeeded, cost $%v of budget $%v, error %q; want 3 parts, all 300 completed within the budget",
			h.Parts, j.Status, j.Succeeded, j.CostUSD, dry.DryRun.Cost.Total, j.Error)
	}
}
