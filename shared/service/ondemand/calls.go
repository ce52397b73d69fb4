package ondemand

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
)

// The calls a run makes: a chunk of records cut into calls (several texts in
// one for a model that embeds many), each retried with backoff and jitter.

// chunkStats are a chunk's counts, added to the checkpoint.
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
	m, ok := s.Models.LookupModel(j.Model)
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
		res, err := me.EmbedMany(ctx, s.Models.OnDemandID(j.Model), ins, j.OnDemand.Params)
		if err == nil && len(res) == len(ins) {
			recs := make([]job.Record, len(ins))
			for k, in := range ins {
				recs[k] = job.Record{JobID: j.ID, ID: in.ID, ExpiresAt: job.RecordExpiresAt(j, s.Clock.Now()), Path: job.PathOnDemand,
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
	rec := job.Record{JobID: j.ID, ID: in.ID, ExpiresAt: job.RecordExpiresAt(j, s.Clock.Now()), Path: job.PathOnDemand}
	maxAttempts := s.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 8
	}
	var throttles int64
	for attempt := 1; ; attempt++ {
		res, err := s.Model.Invoke(ctx, s.Models.OnDemandID(j.Model), in, j.OnDemand.Params)
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
