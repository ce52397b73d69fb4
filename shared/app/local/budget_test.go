package local_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// budget_usd: a submit (inline, retry_failed) whose estimate is over it is
// refused, naming both amounts, and nothing is stored; dry_run lists it as a
// problem; a job within budget shows budget, spent (cost_usd) and remaining.
var _ = flow("Budget", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{FailEvery: 10})
	cs := s.client("alice")
	// 120 records × max_tokens 1024 of output at batch prices: tenths of a dollar.
	args := map[string]any{"model": haiku, "records": records(120), "budget_usd": 0.10}
	before := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{})

	msg := toolErr(t, cs, "submit_batch", args)
	amounts := regexp.MustCompile(`estimated cost \$([0-9.]+).* over budget_usd \$([0-9.]+)`).FindStringSubmatch(msg)
	if !strings.Contains(msg, "budget_usd") || amounts == nil {
		t.Fatalf("refusal %q does not name budget_usd and both amounts", msg)
	}
	dry := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(120), "budget_usd": 0.10, "dry_run": true})
	if dry.DryRun == nil || !strings.Contains(strings.Join(dry.DryRun.Problems, "\n"), "budget_usd") {
		t.Fatalf("dry run %+v does not list the budget as a problem", dry.DryRun)
	}
	if est, _ := strconv.ParseFloat(amounts[1], 64); est <= 0.10 || est-dry.DryRun.Cost.Total > 0.0001 || dry.DryRun.Cost.Total-est > 0.0001 || amounts[2] != "0.1000" {
		t.Errorf("refusal names estimate $%s and budget $%s, want the dry run's $%.4f and $0.1000", amounts[1], amounts[2], dry.DryRun.Cost.Total)
	}
	if after := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{}); len(after.Jobs) != len(before.Jobs) {
		t.Fatalf("a refused submit stored a job: %d jobs, had %d", len(after.Jobs), len(before.Jobs))
	}

	if msg := toolErr(t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(120), "budget_usd": -1}); !strings.Contains(msg, "budget_usd") {
		t.Errorf("negative budget: %q", msg)
	}

	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(120), "budget_usd": 5})
	var j mcpserver.JobView
	for range 40 {
		s.settle()
		if j = call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); j.Terminal {
			break
		}
	}
	if !j.Terminal || j.BudgetUSD != 5 || j.RemainingUSD == nil || j.CostUSD <= 0 {
		t.Fatalf("job within budget = %+v, want terminal with budget 5, cost and remaining", j)
	}
	if got, want := *j.RemainingUSD, 5-j.CostUSD; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("remaining_usd %v, want budget − cost_usd = %v", got, want)
	}
	if j.Failed == 0 {
		t.Fatalf("the simulator failed no records; the retry check needs some")
	}
	if msg := toolErr(t, cs, "retry_failed", map[string]any{"job_id": h.JobID, "budget_usd": 0.000001}); !strings.Contains(msg, "budget_usd") || !strings.Contains(msg, "estimated cost") {
		t.Errorf("retry over budget: %q", msg)
	}
	if msg := toolErr(t, cs, "submit_batch", map[string]any{"model": haiku, "input_uri": "s3://mcpbatch-local/inputs/alice/x.jsonl", "budget_usd": 1}); !strings.Contains(msg, "budget_usd") {
		t.Errorf("file submit with a budget: %q", msg)
	}
})
