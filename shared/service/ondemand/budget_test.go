package ondemand

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// A chunk is sized to what the budget has left, by the run's mean cost per
// record or, before a re-drive ran one, by the batch parts' mean tokens per
// record at on-demand prices.
func TestBudgetChunk(t *testing.T) {
	const haiku = "anthropic.claude-haiku-4-5-20251001-v1:0"
	m, ok := model.Default().Lookup(haiku)
	if !ok {
		t.Fatalf("%s not in the catalog", haiku)
	}
	// 10,000 input and 1,000 output tokens a record, priced on demand.
	per := m.CostTier(model.Usage{Input: 10_000, Output: 1_000}, "").Total
	if per <= 0 {
		t.Fatalf("%s has no on-demand price", haiku)
	}
	redrive := func(spent float64) *job.Job {
		return &job.Job{Model: haiku, BudgetUSD: spent + 3.5*per, Cost: &job.Cost{TotalUSD: spent},
			Redrive:  &job.Redrive{Started: true, BatchSucceeded: 4, BatchInputTokens: 40_000, BatchOutputTokens: 4_000},
			OnDemand: &job.OnDemand{}}
	}
	for _, tc := range []struct {
		name string
		j    *job.Job
		want int
	}{
		{"no budget", &job.Job{Model: haiku, Cost: &job.Cost{TotalUSD: 1}, OnDemand: &job.OnDemand{Line: 5}}, 64},
		{"nothing to price a record by yet", &job.Job{Model: haiku, BudgetUSD: 1, Cost: &job.Cost{}, OnDemand: &job.OnDemand{}}, 64},
		{"run's mean: $0.10 a record, $0.35 left", &job.Job{Model: haiku, BudgetUSD: 1.35, Cost: &job.Cost{TotalUSD: 1}, OnDemand: &job.OnDemand{Line: 10}}, 4},
		{"run's mean: more left than a chunk buys", &job.Job{Model: haiku, BudgetUSD: 100, Cost: &job.Cost{TotalUSD: 1}, OnDemand: &job.OnDemand{Line: 10}}, 64},
		{"budget reached: one record, then the check stops the run", &job.Job{Model: haiku, BudgetUSD: 1, Cost: &job.Cost{TotalUSD: 1}, OnDemand: &job.OnDemand{Line: 10}}, 1},
		{"re-drive before its first record: batch tokens at on-demand prices", redrive(0.5), 4},
		{"re-drive's own mean once it ran", &job.Job{Model: haiku, BudgetUSD: 2.5, Cost: &job.Cost{TotalUSD: 2, Redrive: &job.RedriveCost{OnDemandUSD: 0.5}},
			Redrive: &job.Redrive{Started: true, BatchSucceeded: 4}, OnDemand: &job.OnDemand{Line: 5}}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{}
			if got := s.budgetChunk(tc.j, 64); got != tc.want {
				t.Errorf("budgetChunk = %d, want %d", got, tc.want)
			}
		})
	}
}
