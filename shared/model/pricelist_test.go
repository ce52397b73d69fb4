package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func f(v float64) *float64 { return &v }

func TestWithAccountLaysThePriceListOverTheCatalog(t *testing.T) {
	c := Default().Filter(ProviderBedrock, []string{"anthropic.claude-sonnet-4-6", "amazon.nova-lite-v1:0", "meta.llama3-3-70b-instruct-v1:0"})
	a := &Account{Region: "us-east-1", UpdatedAt: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC),
		Bedrock: []AccountModel{{ID: "anthropic.claude-sonnet-4-6", Name: "Claude Sonnet 4.6"}, {ID: "amazon.nova-lite-v1:0", Name: "Nova Lite"}},
		PriceList: &PriceList{Endpoint: "us-east-1", Models: map[string]ListedPrices{
			"anthropic.claude-sonnet-4-6": {Name: "Claude Sonnet 4.6", Prices: Prices{Input: f(3), Output: f(15), BatchInput: f(1.5), CacheWrite1h: f(6)},
				LongContext:     &LongContextPrices{Input: f(6), Output: f(22.5)},
				RegionalPremium: f(0.1), AsOf: map[string]string{"input": "2026-08-01", "output": "2026-08-01", "batch_input": "2026-08-01", "cache_write_1h": "2026-08-01"}},
			// The Price List lists Nova Lite's input higher than the catalog; it has no batch price.
			"amazon.nova-lite-v1:0": {Name: "Nova Lite", Prices: Prices{Input: f(0.07)}, AsOf: map[string]string{"input": "2026-09-01"}},
		}},
	}
	merged := c.WithAccount(a, a.UpdatedAt)

	s, _ := merged.Lookup("anthropic.claude-sonnet-4-6")
	if s.Prices.Input == nil || *s.Prices.Input != 3 || s.Prices.BatchOutput != nil || s.RegionalPremium != 0.1 {
		t.Errorf("Sonnet 4.6 prices %+v premium %v; want input 3 from the list, batch output still missing, premium 0.1", s.Prices, s.RegionalPremium)
	}
	if s.PricesSource != SourcePriceList || s.PricesAsOf != "2026-08-01" {
		t.Errorf("Sonnet 4.6 source %q as of %q", s.PricesSource, s.PricesAsOf)
	}
	if got := s.Cost(Usage{Input: 1_000_000, Output: 1_000_000}, BasisOnDemand); !got.Priced || got.Total != 18 {
		t.Errorf("Sonnet 4.6 on demand cost %+v; want priced, 18", got)
	}
	if got := s.Cost(Usage{Input: 1_000_000, Output: 1}, BasisBatch); got.Priced || !slices.Contains(got.Missing, "batch_output") {
		t.Errorf("Sonnet 4.6 batch cost %+v; the batch output price nobody lists stays missing", got)
	}
	l := s.Listing()
	if l.PricesSource != SourcePriceList || l.AsOf != "2026-08-01" {
		t.Errorf("listing source %q as of %q", l.PricesSource, l.AsOf)
	}

	n, _ := merged.Lookup("amazon.nova-lite-v1:0")
	base, _ := c.Lookup("amazon.nova-lite-v1:0")
	if *n.Prices.Input != 0.07 || n.Prices.BatchInput == nil || *n.Prices.BatchInput != *base.Prices.BatchInput {
		t.Errorf("Nova Lite prices %+v: the list's input wins, the catalog's batch input stays", n.Prices)
	}
	ln := n.Listing()
	if ln.PricesSource != "" || ln.PriceSources["input"].Source != SourcePriceList || ln.PriceSources["batch_input"].Source != base.PricesSource ||
		ln.PriceSources["input"].AsOf != "2026-09-01" {
		t.Errorf("Nova Lite listing sources %q %+v; want per-price sources", ln.PricesSource, ln.PriceSources)
	}
	if *base.Prices.Input == 0.07 {
		t.Fatal("the catalog row itself changed")
	}

	c.Apply(a, a.UpdatedAt)
	r := c.PriceReport()
	if !slices.Equal(r.FromList, []string{"amazon.nova-lite-v1:0", "anthropic.claude-sonnet-4-6"}) {
		t.Errorf("report from list %q", r.FromList)
	}
	if slices.Contains(r.Unpriced, "meta.llama3-3-70b-instruct-v1:0") {
		t.Errorf("unpriced %q: Llama 3.3 keeps its catalog prices", r.Unpriced)
	}
	var differ []string
	for _, d := range r.Differ {
		differ = append(differ, d.String())
	}
	joined := strings.Join(differ, "\n")
	for _, want := range []string{"amazon.nova-lite-v1:0 input: catalog 0.06, price list 0.07", "anthropic.claude-sonnet-4-6 input: catalog none, price list 3"} {
		if !strings.Contains(joined, want) {
			t.Errorf("report differences %q lack %q", differ, want)
		}
	}
	if s.Prices.LongContext != nil || !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, "anthropic.claude-sonnet-4-6: long-context prices listed")
	}) {
		t.Errorf("long context %+v, notes %q: without the catalog's threshold the listed tier is noted, not used", s.Prices.LongContext, r.Notes)
	}
	if slices.Contains(r.Unpriced, "anthropic.claude-sonnet-4-6") || slices.Contains(r.Unpriced, "amazon.nova-lite-v1:0") {
		t.Errorf("unpriced %q", r.Unpriced)
	}
}

func TestPriceReportListsTheUnpriced(t *testing.T) {
	c := Default().Filter(ProviderBedrock, []string{"anthropic.claude-opus-4-7", "amazon.nova-lite-v1:0"})
	a := &Account{Region: "us-east-1", UpdatedAt: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)}
	c.Apply(a, a.UpdatedAt)
	r := c.PriceReport()
	if !slices.Equal(r.Unpriced, []string{"anthropic.claude-opus-4-7"}) || len(r.FromList) != 0 {
		t.Errorf("report %+v; want Opus 4.7 unpriced (no Price List read, no catalog price)", r)
	}
}
