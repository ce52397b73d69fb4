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
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
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
		s.RecordError(ctx, id, "on-demand run", err)
	}
	return err
}

func (s *Service) runOnDemand(ctx context.Context, id string) error {
	log := s.Logger().With("job_id", id)
	if s.Model == nil {
		return errors.New("on-demand runs are not configured")
	}
	now := s.Now()
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.Mode != job.ModeOnDemand || j.Status.Terminal() || j.Status == job.StatusInProgress {
			return store.ErrNoChange // a re-drive runs within its ingesting batch job
		}
		if j.Status == job.StatusCancelling {
			return store.ErrNoChange
		}
		j.Parts[0].Status, j.Parts[0].ProviderStatus = job.StatusInProgress, "OnDemandRunning"
		j.SubmittedAt = now
		s.Settle(j, now)
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
	ordinal, err := s.RunOrdinals(ctx, j)
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
		for len(batch) < chunk {
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
		if err := s.ResultsWriter().Put(ctx, j.RecordSet(), recs); err != nil {
			return fmt.Errorf("store on-demand results of %s: %w", id, err)
		}
		j, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
			o := j.OnDemand
			if j.Status.Terminal() {
				return errJobEnded // cancelled while this chunk ran
			}
			if o == nil || o.Runner != me || o.Line != cp.Line || o.Offset != cp.Offset {
				return errOtherRun
			}
			o.RunnerUntil = s.Now().Add(job.RunClaim)
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
			s.PriceJob(j)
			s.leaveFlex(j, stats.Throttles > 0, s.Now())
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
			s.Measured(ctx, metrics.Throttles, s.Measure().Throttled(j.Provider, j.Model, int(stats.Throttles)))
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

type chunkStats struct {
	job.OnDemand
}

// ManyEmbedder is a model adapter that embeds several texts in one call
// where the model takes them (Cohere Embed: up to 96 texts a call); results
// come back in the order of ins.
type ManyEmbedder interface {
	EmbedMany(ctx context.Context, model string, ins []job.Input, p job.Params) ([]OnDemandResult, error)
}

// textsPerCall is how many records of j one call carries: the catalog's
// texts per call for an embedding model whose adapter embeds many, else 1.
func (s *Service) textsPerCall(j *job.Job) int {
	if _, ok := s.Model.(ManyEmbedder); !ok {
		return 1
	}
	m, ok := s.LookupModel(j.Model)
	if !ok || m.MaxTextsPerCall <= 1 {
		return 1
	}
	return m.MaxTextsPerCall
}

// groups cuts a chunk into calls: runs of text records up to per long, every
// other record alone.
func groups(batch []job.Input, per int) [][2]int {
	var out [][2]int
	for i := 0; i < len(batch); {
		end := i + 1
		if per > 1 && batch[i].Text != "" {
			for end < len(batch) && end-i < per && batch[end].Text != "" {
				end++
			}
		}
		out = append(out, [2]int{i, end})
		i = end
	}
	return out
}

// runChunk runs a chunk of records with at most Concurrency calls in flight;
// texts for a model that takes several per call go together.
func (s *Service) runChunk(ctx context.Context, j *job.Job, batch []job.Input) ([]job.Record, chunkStats, error) {
	recs := make([]job.Record, len(batch))
	var mu sync.Mutex
	var st chunkStats
	schema, err := outschema.ForJob(j)
	if err != nil {
		return nil, st, err
	}
	sem := make(chan struct{}, s.concurrency())
	var wg sync.WaitGroup
	count := func(rec job.Record, res OnDemandResult) {
		if rec.Status == job.RecordSucceeded {
			st.Succeeded++
		} else {
			st.Failed++
		}
		st.InputTokens += res.InputTokens
		st.OutputTokens += res.OutputTokens
		st.CacheReadTokens += res.CacheReadTokens
		st.CacheWriteTokens += res.CacheWriteTokens
	}
	for _, g := range groups(batch, s.textsPerCall(j)) {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			var rs []job.Record
			var res []OnDemandResult
			var throttles int64
			if g[1]-g[0] > 1 {
				rs, res, throttles = s.runGroup(ctx, j, batch[g[0]:g[1]])
			} else {
				rec, r, t := s.runRecord(ctx, j, batch[g[0]])
				rs, res, throttles = []job.Record{rec}, []OnDemandResult{r}, t
			}
			copy(recs[g[0]:g[1]], rs)
			mu.Lock()
			defer mu.Unlock()
			st.Throttles += throttles
			for k := range rs {
				if schema != nil {
					schema.Apply(&recs[g[0]+k])
					rs[k] = recs[g[0]+k]
				}
				count(rs[k], res[k])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		// Part of the chunk may have been cut short: keep nothing of it, the resumed run redoes it.
		return nil, st, err
	}
	return recs, st, nil
}

// runGroup embeds several texts in one call, retrying retryable errors with
// backoff and jitter. A call the model refuses is run again record by
// record, so one bad text fails alone.
func (s *Service) runGroup(ctx context.Context, j *job.Job, ins []job.Input) ([]job.Record, []OnDemandResult, int64) {
	me := s.Model.(ManyEmbedder)
	maxAttempts := s.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 8
	}
	var throttles int64
	for attempt := 1; ; attempt++ {
		res, err := me.EmbedMany(ctx, s.OnDemandID(j.Model), ins, j.OnDemand.Params)
		if err == nil && len(res) == len(ins) {
			recs := make([]job.Record, len(ins))
			for k, in := range ins {
				recs[k] = job.Record{JobID: j.ID, ID: in.ID, ExpiresAt: job.RecordExpiresAt(j, s.Now()), Path: job.PathOnDemand,
					Status: job.RecordSucceeded, Output: res[k].Output, StopReason: res[k].StopReason,
					InputTokens: res[k].InputTokens, OutputTokens: res[k].OutputTokens}
			}
			return recs, res, throttles
		}
		if err == nil || !errors.Is(err, ErrRetryable) || attempt >= maxAttempts || ctx.Err() != nil {
			break // refused, or no more tries: each record on its own
		}
		throttles++
		t := time.NewTimer(s.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	recs := make([]job.Record, len(ins))
	res := make([]OnDemandResult, len(ins))
	for k, in := range ins {
		var t int64
		recs[k], res[k], t = s.runRecord(ctx, j, in)
		throttles += t
	}
	return recs, res, throttles
}

// runRecord calls the model for one record, retrying retryable errors with backoff and jitter.
func (s *Service) runRecord(ctx context.Context, j *job.Job, in job.Input) (job.Record, OnDemandResult, int64) {
	rec := job.Record{JobID: j.ID, ID: in.ID, ExpiresAt: job.RecordExpiresAt(j, s.Now()), Path: job.PathOnDemand}
	maxAttempts := s.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 8
	}
	var throttles int64
	for attempt := 1; ; attempt++ {
		res, err := s.Model.Invoke(ctx, s.OnDemandID(j.Model), in, j.OnDemand.Params)
		if err == nil {
			rec.Status, rec.Output, rec.StopReason = job.RecordSucceeded, res.Output, res.StopReason
			rec.InputTokens, rec.OutputTokens = res.InputTokens, res.OutputTokens
			return rec, res, throttles
		}
		var ce *CallError
		switch {
		case errors.As(err, &ce):
			rec.Status, rec.ErrorCode, rec.ErrorMessage = job.RecordFailed, ce.Code, ce.Message
			return rec, OnDemandResult{}, throttles
		case ctx.Err() != nil:
			rec.Status, rec.ErrorCode, rec.ErrorMessage = job.RecordFailed, "Interrupted", ctx.Err().Error()
			return rec, OnDemandResult{}, throttles
		case !errors.Is(err, ErrRetryable) || attempt >= maxAttempts:
			rec.Status, rec.ErrorCode = job.RecordFailed, "ThrottlingException"
			rec.ErrorMessage = fmt.Sprintf("gave up after %d attempts: %v", attempt, err)
			if !errors.Is(err, ErrRetryable) {
				rec.ErrorCode = "InvokeFailed"
			}
			return rec, OnDemandResult{}, throttles
		}
		throttles++
		t := time.NewTimer(s.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// finishOnDemand settles the final status from the checkpoint counts and announces it.
func (s *Service) finishOnDemand(ctx context.Context, j *job.Job) error {
	var refused *batch.VectorsRefusedError
	if j.Index != nil && s.Vectors != nil && !j.Status.Terminal() {
		// Before the job is final, so a transiently failed write is retried
		// with the run; one that can never succeed ends the job with its reason.
		if err := s.Vectors.WriteJob(ctx, j); err != nil && !errors.As(err, &refused) {
			return fmt.Errorf("write vectors of %s: %w", j.ID, err)
		}
	}
	now := s.Now()
	var stored *service.StoredCounts
	if cancelled(j) {
		// A chunk stored by a run that died (or was refused) before its
		// checkpoint is not redone once the job is cancelled, yet its results
		// stay readable: the counts are the stored results.
		_, c, err := s.StoredResults(ctx, j)
		if err != nil {
			return err
		}
		stored = &c
	}
	id := j.ID
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.Status.Terminal() {
			return store.ErrNoChange
		}
		j.SyncOnDemandCounts()
		s.PriceJob(j)
		final := job.StatusCompleted
		switch {
		case cancelled(j):
			final = job.StatusCancelled
			// A run killed after storing a chunk and before its checkpoint
			// is never redone once cancelled: count what is stored.
			if stored != nil {
				// The stored results hold the records reused at submit too.
				j.Succeeded, j.Failed = stored.Succeeded-j.Reused, stored.Failed
			}
		case j.Succeeded == 0 && j.Reused == 0 && j.RecordCount > 0:
			// Nothing to read but errors: the job failed, not "partially" completed.
			final = job.StatusFailed
			if j.Error == "" {
				j.Error = fmt.Sprintf("all %d records failed; get_job_results status=failed lists each error", j.RecordCount)
			}
		case j.Failed > 0 || j.Succeeded < j.RecordCount:
			final = job.StatusPartiallyCompleted
		}
		if j.Redrive != nil {
			// A re-drive ends its batch job: every part whose output was read ends with it.
			for i := range j.Parts {
				if !j.Parts[i].Status.Terminal() {
					j.Parts[i].Status = final
				}
			}
		} else {
			j.Parts[0].Status, j.Parts[0].ProviderStatus = final, "OnDemandDone"
		}
		j.Status, j.ProviderStatus = final, "OnDemandDone"
		if refused != nil {
			batch.VectorsRefused(j, refused)
		}
		j.CompletedAt = now
		j.Retain()
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finish on-demand job %s: %w", id, err) // j is nil here
	}
	s.Logger().InfoContext(ctx, "on-demand job finished", "job_id", j.ID, "status", j.Status, "succeeded", j.Succeeded, "failed", j.Failed,
		"cache_read_tokens", j.CacheReadTokens, "cache_write_tokens", j.CacheWriteTokens, "throttles", j.OnDemand.Throttles)
	if j.Index != nil && s.Vectors != nil && j.Status == job.StatusCompleted {
		if err := s.Vectors.CommitJob(ctx, j); err != nil {
			s.Logger().ErrorContext(ctx, "commit of job to its vector index failed", "job_id", j.ID, "index", j.Index.Name, "error", err)
		}
	}
	s.PublishCompleted(ctx, j)
	return nil
}

// endedByOthers are the ends a run does not set itself: cancel_job, the
// reconciler giving up on a run that made no progress, expiry.
func endedByOthers(st job.Status) bool {
	return st == job.StatusCancelled || st == job.StatusFailed || st == job.StatusExpired
}

// recountEnded sets the counts of an on-demand job ended by others to its
// stored results after a run stored a chunk whose checkpoint the ended job
// refused (a slow run outlived the reconciler's patience, or a cancel).
func (s *Service) recountEnded(ctx context.Context, id string) error {
	j, err := s.Store.GetJob(ctx, id)
	if err != nil {
		return fmt.Errorf("recount on-demand job %s: %w", id, err)
	}
	if !endedByOthers(j.Status) {
		return nil
	}
	_, c, err := s.StoredResults(ctx, j)
	if err != nil {
		return err
	}
	_, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		// The stored results hold the records reused at submit too.
		if !endedByOthers(j.Status) || (j.Succeeded == c.Succeeded-j.Reused && j.Failed == c.Failed) {
			return store.ErrNoChange
		}
		j.Succeeded, j.Failed = c.Succeeded-j.Reused, c.Failed
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return fmt.Errorf("recount on-demand job %s: %w", id, err)
	}
	return nil
}
