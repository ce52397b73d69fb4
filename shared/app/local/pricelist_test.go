package local_test

import (
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

const sonnet46 = "anthropic.claude-sonnet-4-6"

// PriceListBudget: make dev prices Claude Sonnet 4.6 (which the catalog
// leaves unpriced) from the simulated Price List, list_models shows the
// source and date, and a budget_usd on it is held and enforced.
var _ = flow("PriceListBudget", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{})
	cs := s.client("alice")
	if s.l.PriceList.Calls() == 0 {
		t.Fatal("the refresh made no GetProducts call")
	}
	out := call[mcpserver.ListModelsOut](t, cs, "list_models", map[string]any{})
	var row *model.Listing
	for i := range out.Models {
		if out.Models[i].ID == sonnet46 {
			row = &out.Models[i]
		}
	}
	if row == nil {
		t.Fatalf("%s not in list_models", sonnet46)
	}
	p := row.PricesPerMillion
	if p.Input == nil || *p.Input != 3 || p.BatchOutput == nil || *p.BatchOutput != 7.5 || row.PricesSource != model.SourcePriceList || row.AsOf != "2026-11-01" {
		t.Fatalf("Sonnet 4.6 listed %+v as of %q; want input 3, batch output 7.5 from aws-price-list, 2026-11-01", p, row.AsOf)
	}

	args := map[string]any{"model": sonnet46, "records": records(120), "mode": "batch", "max_tokens": 100}
	over := map[string]any{"budget_usd": 0.001}
	for k, v := range args {
		over[k] = v
	}
	msg := toolErr(t, cs, "submit_batch", over)
	if !strings.Contains(msg, "estimated cost") || !strings.Contains(msg, "over budget_usd") || strings.Contains(msg, "no price") {
		t.Fatalf("over budget: %q; want the estimate named against the budget", msg)
	}
	args["budget_usd"] = 5.0
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
	j := s.finish(cs, h.JobID)
	if j.Status != "completed" || j.BudgetUSD != 5 || j.CostUSD <= 0 || j.RemainingUSD == nil || j.Cost == nil || len(j.Cost.Unpriced) != 0 {
		t.Fatalf("job %+v cost %+v; want completed, priced, within its budget", j, j.Cost)
	}

	r := s.l.Service.Core.Catalog.PriceReport()
	if !strings.Contains(strings.Join(r.FromList, " "), sonnet46) {
		t.Errorf("report: from the price list %q lacks %s", r.FromList, sonnet46)
	}
	t.Logf("make dev: priced from the Price List: %s", strings.Join(r.FromList, ", "))
	t.Logf("make dev: unpriced: %s", strings.Join(r.Unpriced, ", "))
	t.Logf("make dev: Price List models no account model matched: %s", strings.Join(r.Unmatched, ", "))
	for _, d := range r.Differ {
		t.Logf("make dev: differs: %s", d)
	}
	if len(r.Unclassified) != 0 {
		t.Errorf("the simulated Price List has dimensions the classifier cannot place: %q", r.Unclassified)
	}
})
