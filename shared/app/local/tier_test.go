package local_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// tierModel offers flex and priority in the catalog and in the runtime
// simulator's own table. The catalog has no prices for it, so the test plays
// an operator setting them (test figures, not list prices).
const tierModel = "amazon.nova-2-lite-v1:0"

const tierOverride = `{"prices_as_of": "2026-12-01", "prices_source": "test operator prices", "models": [
 {"id": "amazon.nova-2-lite-v1:0", "prices": {"input": 0.3, "output": 2.5},
  "service_tiers": {"flex": {"input": 0.15, "output": 1.25}, "priority": {"input": 0.525, "output": 4.375}}}]}`

// On-demand runs use Flex where the model offers it with prices: the calls
// reach the runtime with serviceTier flex and the job's cost is at the flex
// prices, below standard by the table's discount; tier overrides it, and a
// tier the model does not offer (or a batch job) is refused naming tier.
func TestServiceTiers(t *testing.T) {
	t.Setenv(model.EnvModelsJSON, tierOverride)
	// A quarter of the Flex calls are throttled: the runner backs off and
	// retries them, and every record still completes on Flex.
	s := newSuiteWith(t, local.Options{Reports: local.ReportsOptions{FlexThrottleRate: 0.25}})
	cs := s.client("alice")
	m := tierCatalogModel(t)
	rt := s.l.Reports.Runtime

	cases := []struct {
		name, tier, wantTier, wantSimTier string
	}{
		{name: "auto picks flex", tier: "", wantTier: "flex", wantSimTier: "flex"},
		{name: "standard overrides", tier: "standard", wantTier: "", wantSimTier: "default"},
		{name: "priority overrides", tier: "priority", wantTier: "priority", wantSimTier: "priority"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"model": tierModel, "mode": "on_demand", "records": records(12), "max_tokens": 200}
			if tc.tier != "" {
				args["tier"] = tc.tier
			}
			before := rt.Stats().Tiers[tc.wantSimTier]
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
			j := s.finish(cs, h.JobID)
			if j.Status != "completed" || j.Succeeded != 12 || j.Cost == nil {
				t.Fatalf("job %+v", j)
			}
			if got := rt.Stats().Tiers[tc.wantSimTier] - before; got != 12 {
				t.Errorf("simulator served %d calls on %s, want 12", got, tc.wantSimTier)
			}
			if tc.wantSimTier == "flex" && rt.Stats().Throttled == 0 {
				t.Errorf("no Flex call was throttled; the backoff went untested")
			}
			if j.Cost.Tier != tc.wantTier {
				t.Errorf("cost tier %q, want %q", j.Cost.Tier, tc.wantTier)
			}
			u := model.Usage{Input: j.InputTokens, Output: j.OutputTokens}
			std := m.Cost(u, model.BasisOnDemand).Total
			tp := m.ServiceTiers[tc.wantTier]
			want := std
			if tc.wantTier != "" {
				want = (float64(u.Input)**tp.Input + float64(u.Output)**tp.Output) / 1e6
			}
			if math.Abs(j.CostUSD-want) > 2e-6 {
				t.Errorf("cost $%.6f, want $%.6f at the %q prices (standard $%.6f)", j.CostUSD, want, tc.wantSimTier, std)
			}
			if tc.wantTier == "flex" && math.Abs(j.CostUSD-std/2) > 2e-6 {
				t.Errorf("flex cost $%.6f is not half the standard $%.6f (the table's 50%% discount)", j.CostUSD, std)
			}
		})
	}

	// The dry run lists the paths and says auto picks Flex, and why.
	d := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": tierModel, "records": records(12), "max_tokens": 200, "dry_run": true})
	paths := map[string]float64{}
	for _, p := range d.DryRun.Paths {
		paths[p.Path] = p.Cost.Total
	}
	if d.DryRun.Auto != "on_demand flex" || !strings.Contains(d.DryRun.AutoWhy, "flex") ||
		paths["on_demand flex"] <= 0 || math.Abs(paths["on_demand flex"]-paths["on_demand standard"]/2) > 2e-6 || paths["on_demand priority"] <= paths["on_demand standard"] {
		t.Errorf("dry run paths %v, auto %q (%s): want flex picked at half of standard, priority above", paths, d.DryRun.Auto, d.DryRun.AutoWhy)
	}

	// The dry run names the prices it is at: the tier too on demand, standard
	// where the model offers no other.
	// (12 records: under batch's minimum, where auto runs on demand; the
	// account lists batch quotas for Nova 2 Lite, so 120 would be a batch job.)
	priced := []struct {
		name, model, mode, basis, tier, text string
		n                                    int
	}{
		{"auto on flex", tierModel, "", "on_demand", "flex", "(on_demand flex prices)", 12},
		{"on demand without tiers", haiku, "on_demand", "on_demand", "standard", "(on_demand standard prices)", 120},
		{"batch", haiku, "batch", "batch", "", "(batch prices)", 120},
	}
	for _, tc := range priced {
		args := map[string]any{"model": tc.model, "records": records(tc.n), "max_tokens": 200, "dry_run": true}
		if tc.mode != "" {
			args["mode"] = tc.mode
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "submit_batch", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", tc.name, err, text(res))
		}
		var h mcpserver.JobHandle
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &h); err != nil || h.DryRun == nil {
			t.Fatalf("%s: %s: %v", tc.name, raw, err)
		}
		if string(h.DryRun.Basis) != tc.basis || h.DryRun.Tier != tc.tier || !strings.Contains(text(res), tc.text) {
			t.Errorf("%s: priced %q/%q, want %q/%q; text %q, want it to say %q", tc.name, h.DryRun.Basis, h.DryRun.Tier, tc.basis, tc.tier, text(res), tc.text)
		}
	}

	refusals := []struct{ name, model, mode, tier, want string }{
		{"model without flex", haiku, "on_demand", "flex", "does not offer the flex tier"},
		{"batch job", haiku, "batch", "flex", "applies to on-demand runs"},
		{"unknown tier", tierModel, "on_demand", "cheapest", "is not a service tier"},
	}
	for _, tc := range refusals {
		n := 12
		if tc.mode == "batch" {
			n = 120
		}
		msg := toolErr(t, cs, "submit_batch", map[string]any{"model": tc.model, "mode": tc.mode, "tier": tc.tier, "records": records(n)})
		if !strings.Contains(msg, "tier") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: refusal %q, want it to name tier and say %q", tc.name, msg, tc.want)
		}
	}
}

// tierCatalogModel is tierModel as the catalog with the test's operator prices has it.
func tierCatalogModel(t *testing.T) *model.Model {
	t.Helper()
	cat, err := model.FromEnv(func(k string) string {
		if k == model.EnvModelsJSON {
			return tierOverride
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := cat.Lookup(tierModel)
	if !ok {
		t.Fatalf("%s not in the catalog", tierModel)
	}
	return m
}
