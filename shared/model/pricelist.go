package model

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// SourcePriceList names prices read from the AWS Price List Query API
// (shared/pricing) in list_models and the refresh report.
const SourcePriceList = "aws-price-list"

// GapPriceList is the gap a failed Price List read leaves: the catalog's
// prices apply.
const GapPriceList = "pricing GetProducts"

// PriceList is what the AWS Price List said of the account's Bedrock models
// at one refresh, stored in the account snapshot. Merge lays it over the
// catalog's prices: a price the Price List lists wins; one it does not list
// keeps the catalog's (or stays missing).
type PriceList struct {
	// Endpoint is the Region of the Price List endpoint read.
	Endpoint string `json:"endpoint"`
	// Models are the listed prices by model id (the account's ids).
	Models map[string]ListedPrices `json:"models,omitempty"`
	// Unmatched are Price List model names no account model matched.
	Unmatched []string `json:"unmatched,omitempty"`
	// Unclassified are price dimensions the classifier could not classify
	// ("<service code> <model>: <usage type> (<description>)"): reported,
	// never priced.
	Unclassified []string `json:"unclassified,omitempty"`
	// Notes are dimensions classified but not usable as a price of this
	// suite (a long-context price without a threshold, a conflict).
	Notes []string `json:"notes,omitempty"`
}

// ListedPrices are one model's prices as the Price List lists them, in the
// catalog's convention: Prices are the global-profile prices where the
// Price List has global rows (RegionalPremium then the geographic rows'
// extra), else the in-Region/geographic ones.
type ListedPrices struct {
	// Name is the Price List's model name ("Claude Sonnet 4.6", "Nova Lite").
	Name            string                `json:"name"`
	Prices          Prices                `json:"prices"`
	RegionalPremium *float64              `json:"regional_premium,omitempty"`
	ServiceTiers    map[string]TierPrices `json:"service_tiers,omitempty"`
	// LongContext are the long-prompt prices; the Price List does not say
	// above how many input tokens they apply, so they count only where the
	// catalog gives the threshold.
	LongContext *LongContextPrices `json:"long_context,omitempty"`
	// AsOf is each price's effective date (YYYY-MM-DD) by field name
	// ("input", "batch_output", "flex_input", ...).
	AsOf map[string]string `json:"as_of"`
}

// PriceSource says where one listed price comes from.
type PriceSource struct {
	Source string `json:"source"`
	AsOf   string `json:"as_of,omitempty"`
}

// priceFields are the Prices fields by their catalog name.
func priceFields(p *Prices) map[string]**float64 {
	return map[string]**float64{
		"input": &p.Input, "output": &p.Output, "batch_input": &p.BatchInput, "batch_output": &p.BatchOutput,
		"cache_write": &p.CacheWrite, "cache_read": &p.CacheRead, "batch_cache_write": &p.BatchCacheWrite,
		"batch_cache_read": &p.BatchCacheRead, "cache_write_1h": &p.CacheWrite1h, "batch_cache_write_1h": &p.BatchCacheWrite1h,
	}
}

// withPriceList lays the listed prices over m's (a copy): each price the
// Price List lists replaces the catalog's, the others stay; PriceSources
// says which is which. Batch prices count only for a model that runs in
// batch here (list_models shows none for the others).
func withPriceList(m *Model, lp ListedPrices) {
	base := m.Prices
	src := make(map[string]PriceSource, 12)
	catalogSource := PriceSource{Source: m.PricesSource, AsOf: m.PricesAsOf}
	merged := base
	if base.LongContext != nil {
		lc := *base.LongContext
		merged.LongContext = &lc
	}
	have, listed := priceFields(&merged), priceFields(&lp.Prices)
	latest := ""
	batch := m.Supports(ModeBatch)
	for name, v := range listed {
		if *v != nil && (batch || !strings.HasPrefix(name, "batch_")) {
			*have[name] = *v
			src[name] = PriceSource{Source: SourcePriceList, AsOf: lp.AsOf[name]}
			latest = max(latest, lp.AsOf[name])
		} else if *have[name] != nil {
			src[name] = catalogSource
		}
	}
	if lc := lp.LongContext; lc != nil && merged.LongContext != nil && merged.LongContext.AboveInputTokens > 0 {
		l := merged.LongContext
		for name, pair := range map[string][2]**float64{
			"long_context_input": {&l.Input, &lc.Input}, "long_context_output": {&l.Output, &lc.Output},
			"long_context_cache_write": {&l.CacheWrite, &lc.CacheWrite}, "long_context_cache_write_1h": {&l.CacheWrite1h, &lc.CacheWrite1h},
			"long_context_cache_read": {&l.CacheRead, &lc.CacheRead},
		} {
			if *pair[1] != nil {
				*pair[0] = *pair[1]
				src[name] = PriceSource{Source: SourcePriceList, AsOf: lp.AsOf[name]}
			}
		}
	}
	if lp.RegionalPremium != nil {
		m.RegionalPremium = *lp.RegionalPremium
	}
	if len(lp.ServiceTiers) > 0 {
		tiers := make(map[string]TierPrices, len(m.ServiceTiers)+len(lp.ServiceTiers))
		for k, v := range m.ServiceTiers {
			tiers[k] = v
		}
		for tier, tp := range lp.ServiceTiers {
			cur := tiers[tier]
			if tp.Input != nil {
				cur.Input = tp.Input
				src[tier+"_input"] = PriceSource{Source: SourcePriceList, AsOf: lp.AsOf[tier+"_input"]}
			}
			if tp.Output != nil {
				cur.Output = tp.Output
				src[tier+"_output"] = PriceSource{Source: SourcePriceList, AsOf: lp.AsOf[tier+"_output"]}
			}
			tiers[tier] = cur
		}
		m.ServiceTiers = tiers
	}
	m.Prices = merged
	m.PriceSources = src
	if latest != "" {
		m.PricesAsOf = latest
		if m.PricesSource == "" || !slices.ContainsFunc(slices.Collect(maps.Values(src)), func(s PriceSource) bool { return s.Source != SourcePriceList }) {
			m.PricesSource = SourcePriceList
		}
	}
}

// PriceDiff is one price where the catalog and the Price List differ.
type PriceDiff struct {
	Model   string   `json:"model"`
	Field   string   `json:"field"`
	Catalog *float64 `json:"catalog,omitempty"`
	Listed  float64  `json:"listed"`
}

func (d PriceDiff) String() string {
	c := "none"
	if d.Catalog != nil {
		c = fmt.Sprint(*d.Catalog)
	}
	return fmt.Sprintf("%s %s: catalog %s, price list %v", d.Model, d.Field, c, d.Listed)
}

// PriceReport is what a refresh tells of prices: where the catalog and the
// Price List differ, which models the Price List priced, and which stay
// unpriced (no input price from either).
type PriceReport struct {
	Differ       []PriceDiff `json:"differ,omitempty"`
	FromList     []string    `json:"from_price_list,omitempty"`
	Unpriced     []string    `json:"unpriced,omitempty"`
	Unmatched    []string    `json:"unmatched,omitempty"`
	Unclassified []string    `json:"unclassified,omitempty"`
	Notes        []string    `json:"notes,omitempty"`
}

// PriceReport compares c's own rows with the Price List of the account laid
// over c (Apply) and lists the Bedrock models left without an input price.
func (c *Catalog) PriceReport() PriceReport {
	var r PriceReport
	merged := c.view()
	a := merged.account
	var pl *PriceList
	if a != nil {
		pl = a.PriceList
	}
	if pl != nil {
		r.Unmatched, r.Unclassified, r.Notes = pl.Unmatched, pl.Unclassified, slices.Clone(pl.Notes)
	}
	for _, m := range merged.models {
		if m.Provider != ProviderBedrock {
			continue
		}
		if pl != nil {
			if lp, ok := pl.Models[m.ID]; ok {
				r.FromList = append(r.FromList, m.ID)
				var own Prices
				if base, ok := c.index[m.ID]; ok {
					own = base.Prices
				}
				if lp.LongContext != nil && (own.LongContext == nil || own.LongContext.AboveInputTokens <= 0) {
					r.Notes = append(r.Notes, m.ID+": long-context prices listed, but the catalog gives no threshold for them: not used")
				}
				ownF, listed := priceFields(&own), priceFields(&lp.Prices)
				for name, v := range listed {
					if *v == nil {
						continue
					}
					if cv := *ownF[name]; cv == nil || math.Abs(*cv-**v) > 1e-9 {
						r.Differ = append(r.Differ, PriceDiff{Model: m.ID, Field: name, Catalog: *ownF[name], Listed: **v})
					}
				}
			}
		}
		if m.Prices.Input == nil {
			r.Unpriced = append(r.Unpriced, m.ID)
		}
	}
	sort.Slice(r.Differ, func(i, j int) bool {
		return r.Differ[i].Model+" "+r.Differ[i].Field < r.Differ[j].Model+" "+r.Differ[j].Field
	})
	sort.Strings(r.FromList)
	sort.Strings(r.Unpriced)
	sort.Strings(r.Notes)
	return r
}

// listedFields are the prices list_models shows (ListingPrices).
var listedFields = []string{"input", "output", "batch_input", "batch_output", "cache_write", "cache_read"}

// listingSources is the source of the prices list_models shows: one source
// when they share it (the catalog's page, or aws-price-list), else each
// shown price's source and date.
func (m *Model) listingSources() (string, map[string]PriceSource) {
	if len(m.PriceSources) == 0 {
		p := m.Prices
		if p.Input == nil && p.Output == nil && p.BatchInput == nil && p.BatchOutput == nil && p.CacheWrite == nil && p.CacheRead == nil {
			return "", nil
		}
		return m.PricesSource, nil
	}
	per := map[string]PriceSource{}
	kinds := map[PriceSource]bool{}
	for _, f := range listedFields {
		if s, ok := m.PriceSources[f]; ok {
			per[f] = s
			kinds[s] = true
		}
	}
	if len(kinds) <= 1 {
		for s := range kinds {
			return s.Source, nil
		}
		return m.PricesSource, nil
	}
	return "", per
}

// String renders the report for the refresh log, one finding a line.
func (r PriceReport) String() string {
	var b strings.Builder
	for _, d := range r.Differ {
		fmt.Fprintf(&b, "differ: %s\n", d)
	}
	if len(r.FromList) > 0 {
		fmt.Fprintf(&b, "priced from the price list: %s\n", strings.Join(r.FromList, ", "))
	}
	if len(r.Unpriced) > 0 {
		fmt.Fprintf(&b, "unpriced: %s\n", strings.Join(r.Unpriced, ", "))
	}
	for _, u := range r.Unclassified {
		fmt.Fprintf(&b, "unclassified: %s\n", u)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// listed is the Price List's prices of model id, if it listed any.
func (a *Account) listed(id string) (ListedPrices, bool) {
	if a.PriceList == nil {
		return ListedPrices{}, false
	}
	lp, ok := a.PriceList.Models[id]
	return lp, ok
}
