package ondemand

import (
	"math"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// budgetChunk sizes the next chunk of j's run to what its budget has left:
// as many records as the remaining dollars buy at what a record of the run
// costs (rounded up, so the run reaches the budget and stops there), never
// more than chunk. Without it a run stops only after the chunk that passed
// the budget, a whole chunk past it — for a deadline's re-drive, at about
// twice the batch price. A job without a budget, or a run with nothing yet
// to price a record by, keeps chunk.
func (s *Service) budgetChunk(j *job.Job, chunk int) int {
	if j.BudgetUSD <= 0 || j.Cost == nil {
		return chunk
	}
	per := s.recordUSD(j)
	if per <= 0 {
		return chunk
	}
	left := j.BudgetUSD - j.Cost.TotalUSD
	if left <= 0 {
		return 1
	}
	n := math.Ceil(left / per)
	if n >= float64(chunk) {
		return chunk
	}
	return max(1, int(n))
}

// recordUSD is what one record of j's run costs: the run's mean so far, or,
// before a re-drive ran a record, the batch parts' mean tokens per record at
// the run's on-demand prices (0: nothing to go by yet).
func (s *Service) recordUSD(j *job.Job) float64 {
	o := j.OnDemand
	if o.Line > 0 {
		spent := j.Cost.TotalUSD
		if r := j.Cost.Redrive; r != nil {
			spent = r.OnDemandUSD
		}
		return spent / float64(o.Line)
	}
	r := j.Redrive
	if r == nil {
		return 0
	}
	n := int64(r.BatchSucceeded + r.BatchFailed)
	m, ok := s.Models.LookupModel(j.Model)
	if n == 0 || !ok {
		return 0
	}
	u := model.Usage{Input: r.BatchInputTokens / n, Output: r.BatchOutputTokens / n,
		CacheRead: r.BatchCacheReadTokens / n, CacheWrite: r.BatchCacheWriteTokens / n}
	return m.CostTier(u, o.Params.Tier).Total
}
