package model

import (
	"math"
	"slices"
	"testing"
)

// Two usages: A without cache, B with cache writes and reads.
var (
	usageA = Usage{Input: 1_234_568, Output: 234_568}
	usageB = Usage{Input: 100_000, Output: 20_000, CacheWrite: 50_000, CacheRead: 400_000}
)

// Expected figures are computed by hand: tokens × USD-per-million / 1e6,
// each part rounded to 1e-6, total = sum of rounded parts.
func TestCostTable(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		u       Usage
		b       Basis
		in      float64
		out     float64
		cw      float64
		cr      float64
		total   float64
		missing []string
	}{
		// Bedrock Claude Sonnet 4.5: $3 / $15, batch $1.5 / $7.5, cache write $3.75, read $0.30.
		// 1,234,568 × 3 = 3,703,704 → $3.703704; 234,568 × 15 = 3,518,520 → $3.518520; total $7.222224
		{"sonnet45 on_demand", sonnet45, usageA, BasisOnDemand, 3.703704, 3.51852, 0, 0, 7.222224, nil},
		// 1,234,568 × 1.5 = 1,851,852 → $1.851852; 234,568 × 7.5 = 1,759,260 → $1.759260; total $3.611112
		{"sonnet45 batch", sonnet45, usageA, BasisBatch, 1.851852, 1.75926, 0, 0, 3.611112, nil},
		// 100,000 × 3 → $0.3; 20,000 × 15 → $0.3; 50,000 × 3.75 = 187,500 → $0.1875; 400,000 × 0.3 = 120,000 → $0.12; total $0.9075
		{"sonnet45 on_demand cached", sonnet45, usageB, BasisOnDemand, 0.3, 0.3, 0.1875, 0.12, 0.9075, nil},
		// 100,000 × 1.5 → $0.15; 20,000 × 7.5 → $0.15; Bedrock documents no batch cache prices: unpriced, total $0.30
		{"sonnet45 batch cached", sonnet45, usageB, BasisBatch, 0.15, 0.15, 0, 0, 0.3, []string{"batch_cache_write", "batch_cache_read"}},

		// Bedrock Claude Haiku 4.5: $1 / $5, batch $0.5 / $2.5, cache write $1.25, read $0.10.
		// 1,234,568 × 1 → $1.234568; 234,568 × 5 = 1,172,840 → $1.172840; total $2.407408
		{"haiku45 on_demand", haiku45, usageA, BasisOnDemand, 1.234568, 1.17284, 0, 0, 2.407408, nil},
		// 1,234,568 × 0.5 = 617,284 → $0.617284; 234,568 × 2.5 = 586,420 → $0.586420; total $1.203704
		{"haiku45 batch", haiku45, usageA, BasisBatch, 0.617284, 0.58642, 0, 0, 1.203704, nil},
		// $0.1 + $0.1 + 50,000 × 1.25 = 62,500 → $0.0625 + 400,000 × 0.1 = 40,000 → $0.04; total $0.3025
		{"haiku45 on_demand cached", haiku45, usageB, BasisOnDemand, 0.1, 0.1, 0.0625, 0.04, 0.3025, nil},
		// $0.05 + $0.05, cache parts unpriced; total $0.10
		{"haiku45 batch cached", haiku45, usageB, BasisBatch, 0.05, 0.05, 0, 0, 0.1, []string{"batch_cache_write", "batch_cache_read"}},

		// Bedrock Claude 3.5 Haiku: $0.80 / $4, batch $0.40 / $2, cache write $1, read $0.08.
		// 1,234,568 × 0.8 = 987,654.4 → $0.987654 (rounded down); 234,568 × 4 = 938,272 → $0.938272; total $1.925926
		{"haiku35 on_demand", haiku35, usageA, BasisOnDemand, 0.987654, 0.938272, 0, 0, 1.925926, nil},
		// 1,234,568 × 0.4 = 493,827.2 → $0.493827; 234,568 × 2 = 469,136 → $0.469136; total $0.962963
		{"haiku35 batch", haiku35, usageA, BasisBatch, 0.493827, 0.469136, 0, 0, 0.962963, nil},
		// 100,000 × 0.8 → $0.08; 20,000 × 4 → $0.08; 50,000 × 1 → $0.05; 400,000 × 0.08 = 32,000 → $0.032; total $0.242
		{"haiku35 on_demand cached", haiku35, usageB, BasisOnDemand, 0.08, 0.08, 0.05, 0.032, 0.242, nil},
		// $0.04 + $0.04, cache parts unpriced; total $0.08
		{"haiku35 batch cached", haiku35, usageB, BasisBatch, 0.04, 0.04, 0, 0, 0.08, []string{"batch_cache_write", "batch_cache_read"}},

		// Amazon Nova Micro: $0.035 / $0.14, batch $0.0175 / $0.07, cache write $0.035, read $0.00875.
		// 1,234,568 × 0.035 = 43,209.88 → $0.043210 (rounded up); 234,568 × 0.14 = 32,839.52 → $0.032840; total $0.076050
		{"nova micro on_demand", "amazon.nova-micro-v1:0", usageA, BasisOnDemand, 0.04321, 0.03284, 0, 0, 0.07605, nil},
		// 1,234,568 × 0.0175 = 21,604.94 → $0.021605; 234,568 × 0.07 = 16,419.76 → $0.016420; total $0.038025
		{"nova micro batch", "amazon.nova-micro-v1:0", usageA, BasisBatch, 0.021605, 0.01642, 0, 0, 0.038025, nil},
		// 100,000 × 0.035 = 3,500 → $0.0035; 20,000 × 0.14 = 2,800 → $0.0028; 50,000 × 0.035 = 1,750 → $0.00175;
		// 400,000 × 0.00875 = 3,500 → $0.0035; total $0.01155
		{"nova micro on_demand cached", "amazon.nova-micro-v1:0", usageB, BasisOnDemand, 0.0035, 0.0028, 0.00175, 0.0035, 0.01155, nil},
		// 100,000 × 0.0175 = 1,750 → $0.00175; 20,000 × 0.07 = 1,400 → $0.0014; cache unpriced; total $0.00315
		{"nova micro batch cached", "amazon.nova-micro-v1:0", usageB, BasisBatch, 0.00175, 0.0014, 0, 0, 0.00315, []string{"batch_cache_write", "batch_cache_read"}},

		// Llama 3.1 8B: $0.22 / $0.22, batch $0.11 / $0.11, no caching.
		// 1,234,568 × 0.22 = 271,604.96 → $0.271605; 234,568 × 0.22 = 51,604.96 → $0.051605; total $0.323210
		{"llama31 8b on_demand", "meta.llama3-1-8b-instruct-v1:0", usageA, BasisOnDemand, 0.271605, 0.051605, 0, 0, 0.32321, nil},
		// 1,234,568 × 0.11 = 135,802.48 → $0.135802; 234,568 × 0.11 = 25,802.48 → $0.025802; total $0.161604
		{"llama31 8b batch", "meta.llama3-1-8b-instruct-v1:0", usageA, BasisBatch, 0.135802, 0.025802, 0, 0, 0.161604, nil},
		// 100,000 × 0.22 → $0.022; 20,000 × 0.22 → $0.0044; no cache prices; total $0.0264
		{"llama31 8b on_demand cached", "meta.llama3-1-8b-instruct-v1:0", usageB, BasisOnDemand, 0.022, 0.0044, 0, 0, 0.0264, []string{"cache_write", "cache_read"}},
		// 100,000 × 0.11 → $0.011; 20,000 × 0.11 → $0.0022; total $0.0132
		{"llama31 8b batch cached", "meta.llama3-1-8b-instruct-v1:0", usageB, BasisBatch, 0.011, 0.0022, 0, 0, 0.0132, []string{"batch_cache_write", "batch_cache_read"}},

		// Anthropic API claude-sonnet-4-5: same list prices as Bedrock; batch cache write $1.875 (3 × 1.25 × 0.5), read $0.15 (3 × 0.1 × 0.5).
		{"api sonnet45 on_demand", "claude-sonnet-4-5", usageA, BasisOnDemand, 3.703704, 3.51852, 0, 0, 7.222224, nil},
		{"api sonnet45 batch", "claude-sonnet-4-5", usageA, BasisBatch, 1.851852, 1.75926, 0, 0, 3.611112, nil},
		{"api sonnet45 on_demand cached", "claude-sonnet-4-5", usageB, BasisOnDemand, 0.3, 0.3, 0.1875, 0.12, 0.9075, nil},
		// $0.15 + $0.15 + 50,000 × 1.875 = 93,750 → $0.09375 + 400,000 × 0.15 = 60,000 → $0.06; total $0.45375
		{"api sonnet45 batch cached", "claude-sonnet-4-5", usageB, BasisBatch, 0.15, 0.15, 0.09375, 0.06, 0.45375, nil},

		// Anthropic API claude-haiku-4-5: $1 / $5, batch $0.5 / $2.5, batch cache write $0.625, read $0.05.
		// $0.05 + $0.05 + 50,000 × 0.625 = 31,250 → $0.03125 + 400,000 × 0.05 = 20,000 → $0.02; total $0.15125
		{"api haiku45 batch cached", "claude-haiku-4-5", usageB, BasisBatch, 0.05, 0.05, 0.03125, 0.02, 0.15125, nil},
		{"api haiku45 on_demand cached", "claude-haiku-4-5", usageB, BasisOnDemand, 0.1, 0.1, 0.0625, 0.04, 0.3025, nil},

		// Titan Text Embeddings V2: $0.02 input, batch $0.01.
		// 1,234,568 × 0.02 = 24,691.36 → $0.024691; batch 1,234,568 × 0.01 = 12,345.68 → $0.012346
		{"titan v2 on_demand", titanV2, Usage{Input: 1_234_568}, BasisOnDemand, 0.024691, 0, 0, 0, 0.024691, nil},
		{"titan v2 batch", titanV2, Usage{Input: 1_234_568}, BasisBatch, 0.012346, 0, 0, 0, 0.012346, nil},
		// Cohere Embed v3 has no batch price: the whole cost is unpriced.
		{"cohere batch", cohereEn, Usage{Input: 1000}, BasisBatch, 0, 0, 0, 0, 0, []string{"batch_input"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustModel(t, Default(), tt.model).Cost(tt.u, tt.b)
			got := []float64{c.Input, c.Output, c.CacheWrite, c.CacheRead, c.Total}
			want := []float64{tt.in, tt.out, tt.cw, tt.cr, tt.total}
			for i := range got {
				if math.Abs(got[i]-want[i]) >= 0.005 {
					t.Errorf("part %d: $%.6f is not within a cent of $%.6f", i, got[i], want[i])
				}
				if got[i] != want[i] {
					t.Errorf("part %d: $%v, want exactly $%v after rounding", i, got[i], want[i])
				}
			}
			if c.Basis != tt.b || c.AsOf != "2026-11-30" {
				t.Errorf("basis %q as_of %q", c.Basis, c.AsOf)
			}
			if c.Priced != (tt.missing == nil) || !slices.Equal(c.Missing, tt.missing) {
				t.Errorf("priced %v missing %v, want missing %v", c.Priced, c.Missing, tt.missing)
			}
		})
	}
}

func TestCostVia(t *testing.T) {
	m := mustModel(t, Default(), sonnet45)
	// Global profile: the listed price.
	if c := m.CostVia(usageA, BasisOnDemand, "global"); c.Total != 7.222224 {
		t.Errorf("global: $%v, want $7.222224", c.Total)
	}
	// us. profile: +10%. 3,703,704 × 1.1 = 4,074,074.4 → $4.074074; 3,518,520 × 1.1 = 3,870,372 → $3.870372; total $7.944446
	c := m.CostVia(usageA, BasisOnDemand, "us")
	if c.Input != 4.074074 || c.Output != 3.870372 || c.Total != 7.944446 {
		t.Errorf("us: %+v, want input 4.074074 output 3.870372 total 7.944446", c)
	}
	// No premium listed: every geography bills the listed price.
	if c := mustModel(t, Default(), haiku35).CostVia(usageA, BasisOnDemand, "us"); c.Total != 1.925926 {
		t.Errorf("3.5 Haiku via us: $%v, want $1.925926", c.Total)
	}
}

func TestCostZeroUsage(t *testing.T) {
	c := mustModel(t, Default(), cohereEn).Cost(Usage{}, BasisBatch)
	if !c.Priced || c.Total != 0 || c.Missing != nil {
		t.Errorf("zero usage: %+v, want priced $0", c)
	}
}

// A tier is priced at its own input and output prices; its cache prices are
// not listed, so cache tokens on a tier are named missing, not guessed; an
// unpriced tier is not usable.
func TestCostTier(t *testing.T) {
	in, out := 0.15, 1.25
	m := &Model{ID: "m", Prices: Prices{Input: new(0.3), Output: new(2.5), CacheRead: new(0.075)},
		ServiceTiers: map[string]TierPrices{TierFlex: {Input: &in, Output: &out}, TierPriority: {}}}
	// 1,234,568 × 0.15 = $0.185185; 234,568 × 1.25 = $0.293210
	if c := m.CostTier(usageA, TierFlex); c.Input != 0.185185 || c.Output != 0.29321 || c.Total != 0.478395 || c.Tier != TierFlex || !c.Priced {
		t.Errorf("flex: %+v", c)
	}
	if c, std := m.CostTier(usageA, TierStandard), m.Cost(usageA, BasisOnDemand); c.Total != std.Total || c.Tier != "" {
		t.Errorf("standard: %+v, want %+v", c, std)
	}
	for _, tc := range []struct {
		c    Cost
		want string
	}{{m.Cost(usageA, BasisBatch), ""}, {m.Cost(usageA, BasisOnDemand), TierStandard}, {m.CostTier(usageA, ""), TierStandard},
		{m.CostTier(usageA, TierStandard), TierStandard}, {m.CostTier(usageA, TierFlex), TierFlex}} {
		if got := tc.c.PricedTier(); got != tc.want {
			t.Errorf("%s/%q priced tier %q, want %q", tc.c.Basis, tc.c.Tier, got, tc.want)
		}
	}
	if c := m.CostTier(usageB, TierFlex); c.Priced || !slices.Equal(c.Missing, []string{"flex_cache_write", "flex_cache_read"}) {
		t.Errorf("flex with cache tokens: %+v, want cache prices missing", c)
	}
	if _, ok := m.Tier(TierPriority); ok {
		t.Error("priority without prices reported usable")
	}
	if _, ok := m.Tier(TierFlex); !ok {
		t.Error("priced flex reported unusable")
	}
}
