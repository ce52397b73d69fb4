package service

import (
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// LookupModel is the catalog entry of a model id (base id, profile id, alias or ARN).
// Without a Catalog the embedded one applies.
func (c *Core) LookupModel(id string) (*model.Model, bool) {
	if c.Catalog == nil {
		return model.Default().Lookup(id)
	}
	return c.Catalog.Lookup(id)
}

// OnDemandID is the id runtime calls must use for a model in this region: the
// inference profile the catalog names when Bedrock serves the base id on demand
// only through one. An id the catalog does not know is used as given.
func (c *Core) OnDemandID(id string) string {
	m, ok := c.LookupModel(id)
	if !ok || id != m.ID {
		return id // a profile id or an ARN the caller chose
	}
	return m.OnDemandID(c.Region)
}

// PriceJob sets j.Cost from the job's token counts at the catalog's prices:
// batch prices for batch jobs, on-demand prices otherwise. A model without a
// catalog entry (a SageMaker endpoint) has no cost.
func (c *Core) PriceJob(j *job.Job) {
	m, ok := c.LookupModel(j.Model)
	if !ok {
		j.Cost = nil
		return
	}
	u := model.Usage{Input: j.InputTokens, Output: j.OutputTokens, CacheWrite: j.CacheWriteTokens, CacheRead: j.CacheReadTokens}
	var cost model.Cost
	switch {
	case j.Mode == job.ModeBatch:
		cost = m.Cost(u, model.BasisBatch)
	case j.OnDemand != nil:
		cost = m.CostTier(u, j.OnDemand.Params.Tier)
	default:
		cost = m.Cost(u, model.BasisOnDemand)
	}
	j.Cost = &job.Cost{
		InputUSD: cost.Input, OutputUSD: cost.Output, CacheWriteUSD: cost.CacheWrite, CacheReadUSD: cost.CacheRead,
		TotalUSD: cost.Total, Basis: string(cost.Basis), Tier: cost.Tier, PricesAsOf: cost.AsOf, Unpriced: cost.Missing,
	}
}
