package ondemand

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

var (
	errOtherRun = errors.New("another run of this job moved its checkpoint")
	errJobEnded = errors.New("job ended while the run went on")
)

// RunOnDemand runs (or resumes) an on-demand job from its checkpoint to the end.
// It is safe to call twice for the same job: results are idempotent writes, and a
// checkpoint only moves from where this run started, so a second concurrent run
// stops instead of double counting. When ctx ends it returns ctx's error with
// everything up to the last checkpoint kept.
func (s *Service) RunOnDemand(ctx context.Context, id string) error {
	err := s.runOnDemand(ctx, id)
	if err != nil && ctx.Err() == nil {
		// Kept on the job: the reconciler names it if it gives up on the run.
		service.RecordError(ctx, s.Jobs, s.Log, id, "on-demand run", err)
	}
	return err
}

func (s *Service) runOnDemand(ctx context.Context, id string) error {
	log := service.Logger(s.Log).With("job_id", id)
	if s.Model == nil {
		return errors.New("on-demand runs are not configured")
	}
	now := s.Clock.Now()
	j, err := s.Jobs.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.Mode != job.ModeOnDemand || j.Status.Terminal() || j.Status == job.StatusInProgress {
			return store.ErrNoChange // a re-drive runs within its ingesting batch job
		}
		if j.Status == job.StatusCancelling {
			return store.ErrNoChange
		}
		j.Parts[0].Status, j.Parts[0].ProviderStatus = job.StatusInProgress, "OnDemandRunning"
		j.SubmittedAt = now
		service.Settle(s.Providers.Get(j.Provider), j, now)
		return nil
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		log.InfoContext(ctx, "on-demand run for an unknown or expired job; ignored")
		return nil
	case err != nil && !errors.Is(err, store.ErrNoChange):
		return fmt.Errorf("start on-demand run of %s: %w", id, err)
	}
	if !(j.Mode == job.ModeOnDemand || j.Redriving()) || j.Status.Terminal() {
		log.InfoContext(ctx, "job is not an unfinished on-demand job or re-drive; nothing to do", "status", j.Status, "mode", j.Mode)
		return nil
	}
	me := rand.Text()
	j, err = s.claimRun(ctx, id, me)
	if errors.Is(err, errOtherRun) {
		log.InfoContext(ctx, "another run of this on-demand job holds it; this one stops")
		return nil
	}
	if err != nil {
		return err
	}
	defer s.releaseRun(context.WithoutCancel(ctx), id, me)
	if j.Status.Terminal() {
		return nil
	}
	if cancelled(j) || overBudget(j) {
		// A run that reached the budget (or was cancelled) and stopped before
		// the job's end was written resumes only to write it: no chunk more.
		return s.finishOnDemand(ctx, j)
	}
	// Input line i is the record of ordinal i (a retry's: the one it kept;
	// a re-drive's: the one its line had in the job).
	ordinal, err := service.RunOrdinals(ctx, s.Blobs, j)
	if err != nil {
		return err
	}
	rc, err := s.Blobs.Open(ctx, inputOf(j), j.OnDemand.Offset)
	if err != nil {
		return fmt.Errorf("open on-demand input of %s: %w", id, err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 256<<10)
	chunk := s.Chunk
	if chunk <= 0 {
		chunk = 16 * s.concurrency()
		if per := s.textsPerCall(j); per > 1 {
			chunk = max(chunk, per*s.concurrency()) // full calls for every worker
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		cp := *j.OnDemand
		var batch []job.Input
		var read int64
		for size := s.budgetChunk(j, chunk); len(batch) < size; {
			line, err := br.ReadBytes('\n')
			read += int64(len(line))
			if len(strings.TrimSpace(string(line))) > 0 {
				var in job.Input
				if uerr := json.Unmarshal(line, &in); uerr != nil {
					return fmt.Errorf("on-demand input of %s line %d: %w", id, cp.Line+len(batch)+1, uerr)
				}
				batch = append(batch, in)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("read on-demand input of %s: %w", id, err)
			}
		}
		if len(batch) == 0 {
			return s.finishOnDemand(ctx, j)
		}
		recs, stats, err := s.runChunk(ctx, j, batch)
		if err != nil {
			return err
		}
		for k := range recs {
			o, ok := ordinal(cp.Line + k)
			if !ok {
				return fmt.Errorf("on-demand input of %s line %d: no kept ordinal for it", id, cp.Line+k+1)
			}
			recs[k].Ordinal = o
		}
		if err := s.Results.Put(ctx, j.RecordSet(), recs); err != nil {
			return fmt.Errorf("store on-demand results of %s: %w", id, err)
		}
		j, err = s.Jobs.UpdateJob(ctx, id, func(j *job.Job) error {
			o := j.OnDemand
			if j.Status.Terminal() {
				return errJobEnded // cancelled while this chunk ran
			}
			if o == nil || o.Runner != me || o.Line != cp.Line || o.Offset != cp.Offset {
				return errOtherRun
			}
			o.RunnerUntil = s.Clock.Now().Add(job.RunClaim)
			o.Offset += read
			o.Line += len(batch)
			o.Succeeded += stats.Succeeded
			o.Failed += stats.Failed
			o.InputTokens += stats.InputTokens
			o.OutputTokens += stats.OutputTokens
			o.CacheReadTokens += stats.CacheReadTokens
			o.CacheWriteTokens += stats.CacheWriteTokens
			o.Throttles += stats.Throttles
			// Live counts, so get_job shows progress while the run goes on.
			j.SyncOnDemandCounts()
			s.Models.PriceJob(j)
			s.leaveFlex(j, stats.Throttles > 0, s.Clock.Now())
			if n := j.OnDemandRecords(); overBudget(j) && o.Line < n {
				j.AddWarning(fmt.Sprintf("budget_usd $%.4f reached after %d of %d records (spent $%.4f): the other %d were not run; retry them with a new submit",
					j.BudgetUSD, o.Line, n, j.Cost.TotalUSD, n-o.Line))
			}
			return nil
		})
		if errors.Is(err, errOtherRun) {
			log.InfoContext(ctx, "another run of this on-demand job is ahead; this one stops")
			return nil
		}
		if errors.Is(err, errJobEnded) {
			// This chunk's results are stored but the job ended first (cancelled,
			// or failed by the reconciler): count what is stored so no result
			// goes uncounted.
			log.InfoContext(ctx, "on-demand job ended while running; this run stops")
			return s.recountEnded(ctx, id)
		}
		if err != nil {
			return fmt.Errorf("checkpoint on-demand run of %s: %w", id, err)
		}
		if stats.Throttles > 0 {
			s.Telemetry.Measured(ctx, metrics.Throttles, s.Telemetry.Measure().Throttled(j.Provider, j.Model, int(stats.Throttles)))
		}
		if cancelled(j) || overBudget(j) {
			// Over budget: the records not run yet stay unrun; what ran is stored and counted.
			return s.finishOnDemand(ctx, j)
		}
	}
}

// inputOf is the run's input: a re-drive's own file, else the on-demand job's part.
func inputOf(j *job.Job) string {
	if j.OnDemand.InputURI != "" {
		return j.OnDemand.InputURI
	}
	return j.Parts[0].InputURI
}

// cancelled: cancel_job asked the run to stop (an on-demand job cancelling,
// or a re-drive whose job was cancelled).
func cancelled(j *job.Job) bool {
	return j.Status == job.StatusCancelling || (j.Redrive != nil && j.Redrive.CancelRequested)
}

// overBudget: the job has a budget and what it has spent reached it.
func overBudget(j *job.Job) bool {
	return j.BudgetUSD > 0 && j.Cost != nil && j.Cost.TotalUSD >= j.BudgetUSD
}
