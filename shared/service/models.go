package service

import (
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// Models are the facts of the models this deployment allows: the catalog
// (limits, modes, profiles, prices, the account's quotas) and the region
// that picks on-demand profiles.
type Models struct {
	// Catalog is the deployment's catalog (nil: the embedded one).
	Catalog *model.Catalog
	Region  string
}

// Models are the core's catalog and region.
func (c *Core) Models() Models { return Models{Catalog: c.Catalog, Region: c.Region} }

// LookupModel is the catalog entry of a model id (base id, profile id, alias or ARN).
// Without a Catalog the embedded one applies.
func (c Models) LookupModel(id string) (*model.Model, bool) {
	if c.Catalog == nil {
		return model.Default().Lookup(id)
	}
	return c.Catalog.Lookup(id)
}

// OnDemandID is the id runtime calls must use for a model in this region: the
// inference profile the catalog names when Bedrock serves the base id on demand
// only through one. An id the catalog does not know is used as given.
func (c Models) OnDemandID(id string) string {
	m, ok := c.LookupModel(id)
	if !ok || id != m.ID {
		return id // a profile id or an ARN the caller chose
	}
	return m.OnDemandID(c.Region)
}

// PriceJob sets j.Cost from the job's token counts at the catalog's prices:
// batch prices for batch jobs, on-demand prices otherwise. A batch job whose
// deadline re-drove records on demand is priced both ways, each at its own
// list (see priceRedrive). A model without a catalog entry (a SageMaker
// endpoint) has no cost.
func (c Models) PriceJob(j *job.Job) {
	m, ok := c.LookupModel(j.Model)
	if !ok {
		j.Cost = nil
		return
	}
	if r := j.Redrive; r != nil && r.Started && j.OnDemand != nil {
		priceRedrive(j, m)
		return
	}
	u := model.Usage{Input: j.InputTokens, Output: j.OutputTokens, CacheWrite: j.CacheWriteTokens, CacheRead: j.CacheReadTokens}
	var cost model.Cost
	switch {
	case j.Mode == job.ModeBatch:
		cost = m.Cost(u, model.BasisBatch)
	case j.OnDemand != nil:
		j.Cost = onDemandCost(m, j.OnDemand)
		return
	default:
		cost = m.Cost(u, model.BasisOnDemand)
	}
	j.Cost = costOf(cost)
}

func costOf(c model.Cost) *job.Cost {
	return &job.Cost{
		InputUSD: c.Input, OutputUSD: c.Output, CacheWriteUSD: c.CacheWrite, CacheReadUSD: c.CacheRead,
		TotalUSD: c.Total, Basis: string(c.Basis), Tier: c.Tier, PricesAsOf: c.AsOf, Unpriced: c.Missing,
	}
}

// priceRedrive prices a re-driven batch job: the batch parts' tokens at
// batch prices, the re-drive's at on-demand prices of its tier, and the
// re-drive's tokens at batch prices too, so the cost shows what meeting the
// deadline added.
func priceRedrive(j *job.Job, m *model.Model) {
	r, o := j.Redrive, j.OnDemand
	b := m.Cost(model.Usage{Input: r.BatchInputTokens, Output: r.BatchOutputTokens, CacheWrite: r.BatchCacheWriteTokens, CacheRead: r.BatchCacheReadTokens}, model.BasisBatch)
	ru := model.Usage{Input: o.InputTokens, Output: o.OutputTokens, CacheWrite: o.CacheWriteTokens, CacheRead: o.CacheReadTokens}
	od := onDemandCost(m, o)
	atBatch := m.Cost(ru, model.BasisBatch)
	c := costOf(b)
	addCost(c, od)
	c.Redrive = &job.RedriveCost{Records: r.Records, OnDemandUSD: od.TotalUSD, AtBatchPriceUSD: atBatch.Total,
		ExtraUSD: od.TotalUSD - atBatch.Total, Tier: od.Tier}
	j.Cost = c
}

// onDemandCost prices an on-demand run's tokens at its tier; a run that
// switched tier pays the tier it left for the tokens before the switch.
func onDemandCost(m *model.Model, o *job.OnDemand) *job.Cost {
	all := model.Usage{Input: o.InputTokens, Output: o.OutputTokens, CacheWrite: o.CacheWriteTokens, CacheRead: o.CacheReadTokens}
	sw := o.TierSwitch
	if sw == nil {
		return costOf(m.CostTier(all, o.Params.Tier))
	}
	before := model.Usage{Input: sw.InputTokens, Output: sw.OutputTokens, CacheWrite: sw.CacheWriteTokens, CacheRead: sw.CacheReadTokens}
	after := model.Usage{Input: all.Input - before.Input, Output: all.Output - before.Output,
		CacheWrite: all.CacheWrite - before.CacheWrite, CacheRead: all.CacheRead - before.CacheRead}
	c := costOf(m.CostTier(after, o.Params.Tier))
	addCost(c, costOf(m.CostTier(before, sw.From)))
	return c
}

// addCost adds o's amounts and unpriced names to c (c's basis and tier stay).
func addCost(c, o *job.Cost) {
	c.InputUSD += o.InputUSD
	c.OutputUSD += o.OutputUSD
	c.CacheWriteUSD += o.CacheWriteUSD
	c.CacheReadUSD += o.CacheReadUSD
	c.TotalUSD += o.TotalUSD
	for _, miss := range o.Unpriced {
		if !slices.Contains(c.Unpriced, miss) {
			c.Unpriced = append(c.Unpriced, miss)
		}
	}
}
