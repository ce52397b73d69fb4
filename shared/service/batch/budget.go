package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// A batch job's budget_usd while it runs. A part not yet submitted to the
// provider (queued behind the provider's per-model quota) is submitted only
// when what the job has committed plus the part's estimate is within the
// budget. Committed is, over the job's other parts that reached the provider
// or are being submitted: what a part cost by the provider's token totals
// once its provider job ended and the provider wrote them (Bedrock's
// manifest.json.out), else its estimate. The estimate is the submit check's
// (estimated input, max_tokens × records of output, at batch prices), so the
// parts' estimates add up to the one the submit was judged on: a part is held
// only when the parts already run cost more than estimated (input tokens are
// estimated, output is bounded by max_tokens).
//
// The check is made inside the conditional write that claims the part for
// submission (claimPart), so two runs that start parts at once, or a
// duplicated event, never submit past the budget between them: the second
// write sees the first one's lease and counts that part's estimate.
//
// A part that does not fit is held (provider_status HeldForBudget) while
// other parts run, since they may cost less than estimated; once nothing else
// of the job runs, the held parts stop (StoppedAtBudget): the job is ingested,
// their records are stored as failed with error code BudgetHeld, and the job
// ends partially_completed saying what it spent of its budget and how many
// records were not run. retry_failed (with a new budget_usd) runs them.

// Provider statuses of a part held at its job's budget.
const (
	HeldForBudget   = "HeldForBudget"
	StoppedAtBudget = "StoppedAtBudget"
)

// budgetSlack absorbs rounding: prices are rounded to the micro-dollar per
// token kind (shared/model), so the parts' estimates may add up to a few
// micro-dollars more than the submit's estimate, which was at most the budget.
func budgetSlack(j *job.Job) float64 { return float64(len(j.Parts)+1) * 1e-6 }

// budgetMove is what the budget allows for a queued part.
type budgetMove int

const (
	budgetGo   budgetMove = iota // submit it
	budgetHold                   // hold it while other parts still run
	budgetStop                   // nothing else runs: the held parts stop
)

// committedUSD is what the parts of j other than part skip count against its
// budget: the known cost of those the provider ended, the estimate of those
// running or being submitted; nothing for parts never sent.
func committedUSD(j *job.Job, skip int) float64 {
	var sum float64
	for i, p := range j.Parts {
		if i == skip || p.Held || (p.Ref == "" && p.SubmitLease == "") {
			continue
		}
		if p.SpentUSD != nil {
			sum += *p.SpentUSD
		} else {
			sum += p.EstimateUSD
		}
	}
	return sum
}

// decideBudget is what j's budget allows for its queued part idx.
func decideBudget(j *job.Job, idx int) budgetMove {
	if j.BudgetUSD <= 0 || committedUSD(j, idx)+j.Parts[idx].EstimateUSD <= j.BudgetUSD+budgetSlack(j) {
		return budgetGo
	}
	for i, p := range j.Parts {
		if i != idx && !p.Held && p.Status.Rank() < job.StatusIngesting.Rank() {
			return budgetHold // it may still end cheaper than its estimate
		}
	}
	return budgetStop
}

// applyBudget holds queued part idx of j when its budget says so, inside the
// claim's write; it reports whether the part may be claimed. budgetStop moves
// this part and every held part that still does not fit to ingesting without
// a provider job.
func applyBudget(j *job.Job, idx int) (bool, error) {
	p := &j.Parts[idx]
	if p.Status != job.StatusQueued {
		return true, nil
	}
	move := decideBudget(j, idx)
	if move == budgetGo {
		if p.Held {
			p.Held, p.Message = false, "" // the parts before it cost less than estimated
		}
		return true, nil
	}
	if !p.Held {
		p.Held, p.ProviderStatus = true, HeldForBudget
		p.Message = fmt.Sprintf("not submitted: spent or in flight $%.4f plus this provider job's estimate $%.4f would pass budget_usd $%.4f",
			committedUSD(j, idx), p.EstimateUSD, j.BudgetUSD)
	} else if move == budgetHold {
		return false, store.ErrNoChange
	}
	if move == budgetStop {
		for i := range j.Parts {
			// A held part that fits on its own now stays queued for StartParts.
			if q := &j.Parts[i]; q.Held && q.Status == job.StatusQueued && (i == idx || decideBudget(j, i) != budgetGo) {
				q.Status, q.ProviderStatus = job.StatusIngesting, StoppedAtBudget
			}
		}
	}
	return false, nil
}

// stoppedAtBudget: a part that ended held at its job's budget, never submitted.
func stoppedAtBudget(p job.Part) bool {
	return p.Held && p.Ref == "" && p.ProviderStatus == StoppedAtBudget
}

// partEstimates prices each part's share of the submit's estimate: its
// records' estimated input and their output caps (outputTokens) at batch
// prices (sizes are the parts' record counts, in record order).
func (s *Service) partEstimates(req SubmitRequest, md *media, sizes []int) []float64 {
	m, ok := s.Models.LookupModel(req.Model)
	if !ok || req.BudgetUSD <= 0 {
		return nil
	}
	out := make([]float64, len(sizes))
	start := 0
	for k, n := range sizes {
		var in int64
		for i := start; i < start+n; i++ {
			in += s.recordTokens(&req.Records[i], md, i, req.Params.System)
		}
		out[k] = m.Cost(model.Usage{Input: in, Output: req.outputTokens(start, start+n)}, model.BasisBatch).Total
		start += n
	}
	return out
}

// recordSpent writes on j's parts whose provider job ended what they cost by
// the provider's token totals, where the provider writes them (a
// Abilities.ManifestTokens); a part without them keeps counting its estimate.
func (s *Service) recordSpent(ctx context.Context, j *job.Job) *job.Job {
	prov := s.Providers.Get(j.Provider)
	tokens := s.abilities(prov).ManifestTokens
	m, priced := s.Models.LookupModel(j.Model)
	if tokens == nil || !priced || j.BudgetUSD <= 0 {
		return j
	}
	spent := map[int]float64{}
	for i, p := range j.Parts {
		if p.Ref == "" || p.SpentUSD != nil || p.Status.Rank() < job.StatusIngesting.Rank() {
			continue
		}
		in, out, found, err := s.partManifest(ctx, prov, tokens, j, p)
		if err != nil {
			service.Logger(s.Log).WarnContext(ctx, "an ended part's estimate counts against the budget", "job_id", j.ID, "part", i, "error", err)
		}
		if found {
			spent[i] = m.Cost(model.Usage{Input: in, Output: out}, model.BasisBatch).Total
		}
	}
	if len(spent) == 0 {
		return j
	}
	nj, err := s.Store.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
		changed := false
		for i, usd := range spent {
			if i < len(cur.Parts) && cur.Parts[i].SpentUSD == nil {
				cur.Parts[i].SpentUSD = &usd
				changed = true
			}
		}
		if !changed {
			return store.ErrNoChange
		}
		return nil
	})
	if err != nil {
		if !errors.Is(err, store.ErrNoChange) {
			service.Logger(s.Log).WarnContext(ctx, "record what ended parts spent", "job_id", j.ID, "error", err)
		}
		if nj == nil {
			return j
		}
	}
	return nj
}

// writeHeld stores the records of parts stopped at the budget as failed with
// job.RecordBudgetHeld (retry_failed runs them) and returns how many; a
// replayed ingest writes the same items again.
func (s *Service) writeHeld(ctx context.Context, j *job.Job, resolve ingest.IDResolver) (int, error) {
	const chunk = 1000
	var recs []job.Record
	n, start := 0, 0
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		if err := s.Results.Put(ctx, j.RecordSet(), recs); err != nil {
			return fmt.Errorf("store the held records of %s: %w", j.ID, err)
		}
		n += len(recs)
		recs = recs[:0]
		return nil
	}
	for _, p := range j.Parts {
		if stoppedAtBudget(p) && resolve != nil {
			for i := start; i < start+p.RecordCount; i++ {
				id, ok, err := resolve(job.ProviderRecordID(i))
				if err != nil {
					return n, fmt.Errorf("resolve held record %d of %s: %w", i, j.ID, err)
				}
				if !ok {
					continue
				}
				recs = append(recs, job.Record{JobID: j.ID, ID: id.ID, Ordinal: id.Ordinal, Status: job.RecordFailed, ErrorCode: job.RecordBudgetHeld,
					ErrorMessage: p.Message + "; retry_failed with a new budget_usd runs it", ExpiresAt: j.RecordsExpireAt})
				if len(recs) == chunk {
					if err := flush(); err != nil {
						return n, err
					}
				}
			}
		}
		start += p.RecordCount
	}
	return n, flush()
}

// budgetStopMessage says why a job ended with parts held at its budget ("" when none).
func budgetStopMessage(j *job.Job) string {
	parts, records := 0, 0
	for _, p := range j.Parts {
		if stoppedAtBudget(p) {
			parts++
			records += p.RecordCount
		}
	}
	if parts == 0 {
		return ""
	}
	spent := 0.0
	if j.Cost != nil {
		spent = j.Cost.TotalUSD
	}
	return fmt.Sprintf("stopped at budget_usd: spent $%.4f of budget $%.4f; %d records in %d held provider jobs were not run (error_code %s); retry_failed with a new budget_usd runs them",
		spent, j.BudgetUSD, records, parts, job.RecordBudgetHeld)
}

// StopHeld stops a job's held parts once nothing else of it runs and they
// still do not fit, without waiting for room at the provider (a stop takes
// none; the reconciler's per-job pass calls it). A held part that now fits
// is left queued for StartParts, which needs room to submit it.
func (s *Service) StopHeld(ctx context.Context, id string) (*job.Job, error) {
	j, err := s.Store.GetJob(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reload job %s: %w", id, err)
	}
	if !HoldsParts(j) {
		return j, nil
	}
	j = s.recordSpent(ctx, j)
	before := j.Status
	nj, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		for i, p := range j.Parts {
			if p.Held && p.Status == job.StatusQueued && p.Ref == "" && p.SubmitLease == "" && decideBudget(j, i) == budgetStop {
				applyBudget(j, i)
				service.Settle(s.Providers.Get(j.Provider), j, s.Clock.Now())
				return nil
			}
		}
		return store.ErrNoChange
	})
	if errors.Is(err, store.ErrNoChange) {
		return nj, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stop the held parts of job %s: %w", id, err)
	}
	if nj.Status == job.StatusIngesting && before != job.StatusIngesting {
		return nj, s.AfterStatus(ctx, nj)
	}
	return nj, nil
}

// HoldsParts: a part of j is held at its budget and not stopped yet.
func HoldsParts(j *job.Job) bool {
	for _, p := range j.Parts {
		if p.Held && p.Status == job.StatusQueued {
			return true
		}
	}
	return false
}
