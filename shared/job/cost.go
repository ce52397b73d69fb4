package job

import "math"

// Cost is what a job's tokens cost in US dollars at the model catalog's prices
// (shared/model). It is recomputed from the job's token counts whenever they
// change, so it is never more than the counts say.
type Cost struct {
	InputUSD      float64 `json:"inputUsd"`
	OutputUSD     float64 `json:"outputUsd"`
	CacheWriteUSD float64 `json:"cacheWriteUsd,omitempty"`
	CacheReadUSD  float64 `json:"cacheReadUsd,omitempty"`
	TotalUSD      float64 `json:"totalUsd"`
	// Basis is the price list used: "batch" (the batch discount) or "on_demand".
	Basis string `json:"basis"`
	// Tier is the on-demand service tier priced ("": standard).
	Tier string `json:"tier,omitempty"`
	// PricesAsOf is the date of the catalog's figures.
	PricesAsOf string `json:"pricesAsOf,omitempty"`
	// Unpriced names token kinds the catalog has no price for (their cost is not in TotalUSD).
	Unpriced []string `json:"unpriced,omitempty"`
	// Redrive is what the records a deadline re-drove cost on demand next to
	// what they would have cost at the batch price (nil: no re-drive).
	Redrive *RedriveCost `json:"redrive,omitempty"`
}

// RedriveCost prices a deadline re-drive's records both ways.
type RedriveCost struct {
	Records         int     `json:"records"`
	OnDemandUSD     float64 `json:"onDemandUsd"`
	AtBatchPriceUSD float64 `json:"atBatchPriceUsd"`
	// ExtraUSD is OnDemandUSD − AtBatchPriceUSD: what meeting the deadline cost.
	ExtraUSD float64 `json:"extraUsd"`
	// Tier is the on-demand service tier the re-drive ran on ("": standard).
	Tier string `json:"tier,omitempty"`
}

// Spent is what the job has cost so far: its priced tokens, or while a batch
// job runs (its tokens are counted at ingest) the provider's own totals of
// the parts whose provider job ended, when those were read (Part.SpentUSD).
func (j *Job) Spent() float64 {
	var total, parts float64
	if j.Cost != nil {
		total = j.Cost.TotalUSD
	}
	for _, p := range j.Parts {
		if p.SpentUSD != nil {
			parts += *p.SpentUSD
		}
	}
	return max(total, parts)
}

// CheckBudget refuses a budget_usd (named field) that is not a positive
// amount or 0 (no budget).
func CheckBudget(field string, usd float64) error {
	if usd < 0 || math.IsNaN(usd) || math.IsInf(usd, 0) {
		return Fieldf(field, "must be a positive amount in USD (0 or absent: no budget), got %v", usd)
	}
	return nil
}
