package model

import "math"

// Basis says which price list a cost uses.
type Basis string

const (
	BasisBatch    Basis = "batch"
	BasisOnDemand Basis = "on_demand"
)

// Usage is a token count by billing category. Input excludes cached tokens.
type Usage struct {
	Input, Output, CacheWrite, CacheRead int64
}

// Cost is a priced Usage in USD, each part rounded to 1e-6.
type Cost struct {
	Input      float64 `json:"input_usd"`
	Output     float64 `json:"output_usd"`
	CacheWrite float64 `json:"cache_write_usd"`
	CacheRead  float64 `json:"cache_read_usd"`
	Total      float64 `json:"total_usd"`
	Basis      Basis   `json:"basis"`
	// Tier is the on-demand service tier priced ("": standard).
	Tier string `json:"tier,omitempty"`
	AsOf string `json:"as_of,omitempty"`
	// Priced is false when a used part has no price; Missing names the prices
	// (as in the catalog: "batch_input", "cache_read", ...) and those parts
	// count as 0 in Total.
	Priced  bool     `json:"priced"`
	Missing []string `json:"missing,omitempty"`
}

// PricedTier is the on-demand service tier c is priced at: standard when
// none was chosen or the model offers no other; "" at batch prices.
func (c Cost) PricedTier() string {
	if c.Basis != BasisOnDemand {
		return ""
	}
	if c.Tier == "" {
		return TierStandard
	}
	return c.Tier
}

// micro rounds half away from zero to the micro-dollar.
func micro(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// Cost prices u at the model's listed prices on basis b (see the package
// comment for the rounding rule).
func (m *Model) Cost(u Usage, b Basis) Cost { return m.cost(u, b, 1, m.Prices) }

// CostTier prices u on demand at a service tier's prices ("" or "standard":
// the listed on-demand prices). A tier's cache prices are not listed, so
// cache tokens on a tier count as missing prices rather than being guessed.
func (m *Model) CostTier(u Usage, tier string) Cost {
	if tier == "" || tier == TierStandard {
		return m.cost(u, BasisOnDemand, 1, m.Prices)
	}
	tp := m.ServiceTiers[tier]
	c := m.cost(u, BasisOnDemand, 1, Prices{Input: tp.Input, Output: tp.Output})
	c.Tier = tier
	for i, name := range c.Missing {
		c.Missing[i] = tier + "_" + name
	}
	return c
}

// CostVia prices u for calls made through the given profile geography:
// for models with a RegionalPremium, every geography other than "global"
// (including "" for the in-Region base id) bills the premium on top.
func (m *Model) CostVia(u Usage, b Basis, geography string) Cost {
	f := 1.0
	if geography != "global" {
		f += m.RegionalPremium
	}
	return m.cost(u, b, f, m.Prices)
}

func (m *Model) cost(u Usage, b Basis, factor float64, p Prices) Cost {
	type part struct {
		tokens int64
		price  *float64
		name   string
		out    *float64
	}
	c := Cost{Basis: b, AsOf: m.PricesAsOf, Priced: true}
	parts := []part{
		{u.Input, p.Input, "input", &c.Input},
		{u.Output, p.Output, "output", &c.Output},
		{u.CacheWrite, p.CacheWrite, "cache_write", &c.CacheWrite},
		{u.CacheRead, p.CacheRead, "cache_read", &c.CacheRead},
	}
	if b == BasisBatch {
		parts[0].price, parts[0].name = p.BatchInput, "batch_input"
		parts[1].price, parts[1].name = p.BatchOutput, "batch_output"
		parts[2].price, parts[2].name = p.BatchCacheWrite, "batch_cache_write"
		parts[3].price, parts[3].name = p.BatchCacheRead, "batch_cache_read"
	}
	var total float64
	for _, pt := range parts {
		if pt.tokens == 0 {
			continue
		}
		if pt.price == nil {
			c.Priced = false
			c.Missing = append(c.Missing, pt.name)
			continue
		}
		*pt.out = micro(float64(pt.tokens) * *pt.price * factor / 1e6)
		total += *pt.out
	}
	c.Total = micro(total)
	return c
}
