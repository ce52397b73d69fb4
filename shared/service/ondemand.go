package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// OnDemandModel runs one record through a model's runtime API.
type OnDemandModel interface {
	Invoke(ctx context.Context, model string, in job.Input, p job.Params) (OnDemandResult, error)
}

// OnDemandResult is one model answer.
type OnDemandResult struct {
	Output           string
	StopReason       string
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
}

// ErrRetryable marks a call worth retrying (throttling, a busy or failing service).
var ErrRetryable = errors.New("retryable model error")

// CallError is a model call that failed for good; the record fails with it.
type CallError struct{ Code, Message string }

func (e *CallError) Error() string { return e.Code + ": " + e.Message }

// ErrJobExists: a submit with a caller-chosen job id (a pipeline run key) that is taken.
var ErrJobExists = errors.New("job already exists")

// OnDemandRun is the detail of "On-Demand Run Requested".
type OnDemandRun struct {
	JobID string `json:"jobId"`
}

// OnDemand runs jobs too small for batch (or asked for on demand) record by
// record, with bounded concurrency and retries with backoff and jitter.
type OnDemand struct {
	Model OnDemandModel
	// Concurrency bounds parallel calls per run (default job.DefaultOnDemandConcurrency).
	Concurrency int
	// MaxAttempts per record before a retryable error fails it (default 8).
	MaxAttempts int
	// BaseBackoff and MaxBackoff shape the capped exponential backoff with full jitter
	// (defaults 200 ms and 20 s).
	BaseBackoff, MaxBackoff time.Duration
	// Chunk is how many records run between two checkpoints (default 16 × concurrency).
	Chunk int
}

func (o *OnDemand) concurrency() int {
	if o.Concurrency > 0 {
		return o.Concurrency
	}
	return job.DefaultOnDemandConcurrency
}

// backoff is the wait before retry number attempt (1-based): full jitter over a capped exponential.
func (o *OnDemand) backoff(attempt int) time.Duration {
	base, top := o.BaseBackoff, o.MaxBackoff
	if base <= 0 {
		base = 200 * time.Millisecond
	}
	if top <= 0 {
		top = 20 * time.Second
	}
	d := base << min(attempt-1, 20)
	if d > top || d <= 0 {
		d = top
	}
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

// resolveMode settles req.Mode to batch or on_demand (auto: batch when the
// provider allows it, on demand under its minimum when that is available).
func (s *Service) resolveMode(req *SubmitRequest, prov BatchProvider) error {
	n := len(req.Records)
	lim := prov.Limits()
	if !lim.OnDemand {
		// Without a minimum size (or a runtime API here) there is nothing to run on demand.
		if req.Mode == job.ModeOnDemand {
			return job.Fieldf("mode", "on_demand is not available for provider %s; its jobs run as %s (omit mode)", prov.Name(), lim.Title)
		}
		req.Mode = job.ModeBatch
		return nil
	}
	switch req.Mode {
	case "", job.ModeAuto:
		req.Mode = job.ModeBatch
		if n > 0 && n < lim.MinRecords && s.OnDemand != nil {
			req.Mode = job.ModeOnDemand
		}
	case job.ModeBatch:
	case job.ModeOnDemand:
		if s.OnDemand == nil {
			return job.Fieldf("mode", "on_demand is not available in this deployment; use batch with at least %d records", lim.MinRecords)
		}
	default:
		return job.Fieldf("mode", "must be auto, batch or on_demand (got %q)", req.Mode)
	}
	if req.Mode == job.ModeOnDemand && n > job.MaxOnDemandRecords {
		return job.Fieldf("records", "%d records is over the on-demand maximum of %d; use mode batch (about half the price)", n, job.MaxOnDemandRecords)
	}
	return nil
}

// checkRunID refuses a caller-chosen job id that is taken, before anything is written.
func (s *Service) checkRunID(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	if !job.ValidID(id) {
		return fmt.Errorf("job id %q is not a valid job id", id)
	}
	_, err := s.Store.GetJob(ctx, id)
	switch {
	case err == nil:
		return fmt.Errorf("%w: %s", ErrJobExists, id)
	case errors.Is(err, store.ErrNotFound):
		return nil
	default:
		return fmt.Errorf("check job %s: %w", id, err)
	}
}

// submitOnDemand stores the records and asks the on-demand runner to start; it
// returns at once, like a batch submit.
func (s *Service) submitOnDemand(ctx context.Context, req SubmitRequest) (*job.Job, error) {
	now := s.now()
	id := req.ID
	if id == "" {
		id = job.NewID(now)
	}
	n := len(req.Records)
	j := &job.Job{
		ID: id, Owner: req.Owner, Name: req.Name, Provider: req.Provider, Model: req.Model, Mode: job.ModeOnDemand,
		Status: job.StatusQueued, RecordCount: n, Shards: job.ShardsFor(n), TTLDays: req.TTLDays,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: job.ExpiresAt(now, req.TTLDays),
		InputURI: blob.Join(s.Bucket, "input", id), OutputURI: blob.Join(s.Bucket, "output", id),
		OnDemand: &job.OnDemand{Params: req.Params, Concurrency: s.OnDemand.concurrency()},
		Pipeline: req.Pipeline,
	}
	j.Parts = []job.Part{{Index: 0, Name: job.PartName(s.JobPrefix, id, 0, 1), Status: job.StatusQueued, RecordCount: n,
		InputURI: blob.Join(j.InputURI, "ondemand", "records.jsonl"), ProviderStatus: "OnDemandQueued"}}
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 256<<10)
		enc := json.NewEncoder(w)
		for _, r := range req.Records {
			if err := enc.Encode(r); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := s.Blobs.Put(ctx, j.Parts[0].InputURI, pr, "application/jsonl"); err != nil {
		return nil, fmt.Errorf("write on-demand input of %s: %w", id, err)
	}
	if err := s.writeIDs(ctx, j, req.Records); err != nil {
		return nil, err
	}
	if err := s.Store.CreateJob(ctx, j); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("%w: %s", ErrJobExists, id)
		}
		return nil, fmt.Errorf("store job %s: %w", id, err)
	}
	return s.requestRun(ctx, j)
}

// requestRun publishes "On-Demand Run Requested" once and records that it did.
func (s *Service) requestRun(ctx context.Context, j *job.Job) (*job.Job, error) {
	if err := s.Bus.Publish(ctx, config.DetailOnDemandRun, OnDemandRun{JobID: j.ID}); err != nil {
		return nil, fmt.Errorf("request on-demand run of %s: %w", j.ID, err)
	}
	j, err := s.Store.UpdateJob(ctx, j.ID, func(j *job.Job) error {
		if j.OnDemand == nil || j.OnDemand.RunRequested {
			return store.ErrNoChange
		}
		j.OnDemand.RunRequested = true
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return nil, fmt.Errorf("record run request of %s: %w", j.ID, err)
	}
	return j, nil
}

// ContinueOnDemand republishes the run request so a fresh invocation resumes from the checkpoint.
func (s *Service) ContinueOnDemand(ctx context.Context, id string) error {
	if err := s.Bus.Publish(ctx, config.DetailOnDemandRun, OnDemandRun{JobID: id}); err != nil {
		return fmt.Errorf("publish on-demand continuation for %s: %w", id, err)
	}
	return nil
}

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
	log := s.log().With("job_id", id)
	if s.OnDemand == nil {
		return errors.New("on-demand runs are not configured")
	}
	now := s.now()
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.Mode != job.ModeOnDemand || j.Status.Terminal() || j.Status == job.StatusInProgress {
			return store.ErrNoChange
		}
		if j.Status == job.StatusCancelling {
			return store.ErrNoChange
		}
		j.Parts[0].Status, j.Parts[0].ProviderStatus = job.StatusInProgress, "OnDemandRunning"
		j.SubmittedAt = now
		s.settle(j, now)
		return nil
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		log.InfoContext(ctx, "on-demand run for an unknown or expired job; ignored")
		return nil
	case err != nil && !errors.Is(err, store.ErrNoChange):
		return fmt.Errorf("start on-demand run of %s: %w", id, err)
	}
	if j.Mode != job.ModeOnDemand || j.Status.Terminal() {
		log.InfoContext(ctx, "job is not an unfinished on-demand job; nothing to do", "status", j.Status, "mode", j.Mode)
		return nil
	}
	if j.Status == job.StatusCancelling {
		return s.finishOnDemand(ctx, j)
	}
	rc, err := s.Blobs.Open(ctx, j.Parts[0].InputURI, j.OnDemand.Offset)
	if err != nil {
		return fmt.Errorf("open on-demand input of %s: %w", id, err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 256<<10)
	chunk := s.OnDemand.Chunk
	if chunk <= 0 {
		chunk = 16 * s.OnDemand.concurrency()
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
		if err := s.Store.PutRecords(ctx, j.ID, j.Shards, recs); err != nil {
			return fmt.Errorf("store on-demand results of %s: %w", id, err)
		}
		j, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
			o := j.OnDemand
			if j.Status.Terminal() {
				return errJobEnded // cancelled while this chunk ran
			}
			if o == nil || o.Line != cp.Line || o.Offset != cp.Offset {
				return errOtherRun
			}
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
			j.Succeeded, j.Failed = o.Succeeded, o.Failed
			j.InputTokens, j.OutputTokens = o.InputTokens, o.OutputTokens
			j.CacheReadTokens, j.CacheWriteTokens = o.CacheReadTokens, o.CacheWriteTokens
			return nil
		})
		if errors.Is(err, errOtherRun) {
			log.InfoContext(ctx, "another run of this on-demand job is ahead; this one stops")
			return nil
		}
		if errors.Is(err, errJobEnded) {
			log.InfoContext(ctx, "on-demand job ended (cancelled) while running; this run stops")
			return nil
		}
		if err != nil {
			return fmt.Errorf("checkpoint on-demand run of %s: %w", id, err)
		}
		if j.Status == job.StatusCancelling {
			return s.finishOnDemand(ctx, j)
		}
	}
}

type chunkStats struct {
	job.OnDemand
}

// runChunk runs a chunk of records with at most Concurrency calls in flight.
func (s *Service) runChunk(ctx context.Context, j *job.Job, batch []job.Input) ([]job.Record, chunkStats, error) {
	recs := make([]job.Record, len(batch))
	var mu sync.Mutex
	var st chunkStats
	sem := make(chan struct{}, s.OnDemand.concurrency())
	var wg sync.WaitGroup
	for i, in := range batch {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			rec, res, throttles := s.runRecord(ctx, j, in)
			recs[i] = rec
			mu.Lock()
			defer mu.Unlock()
			st.Throttles += throttles
			if rec.Status == job.RecordSucceeded {
				st.Succeeded++
			} else {
				st.Failed++
			}
			st.InputTokens += res.InputTokens
			st.OutputTokens += res.OutputTokens
			st.CacheReadTokens += res.CacheReadTokens
			st.CacheWriteTokens += res.CacheWriteTokens
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		// Part of the chunk may have been cut short: keep nothing of it, the resumed run redoes it.
		return nil, st, err
	}
	for i := range recs {
		if len(recs[i].Output) > job.MaxInlineOutputBytes {
			uri := blob.Join(s.Bucket, "results", j.ID, recs[i].ID+".txt")
			if _, err := s.Blobs.Put(ctx, uri, strings.NewReader(recs[i].Output), "text/plain; charset=utf-8"); err != nil {
				return nil, st, fmt.Errorf("store big output of %s/%s: %w", j.ID, recs[i].ID, err)
			}
			recs[i].Output, recs[i].OutputRef = "", uri
		}
	}
	return recs, st, nil
}

// runRecord calls the model for one record, retrying retryable errors with backoff and jitter.
func (s *Service) runRecord(ctx context.Context, j *job.Job, in job.Input) (job.Record, OnDemandResult, int64) {
	rec := job.Record{JobID: j.ID, ID: in.ID, ExpiresAt: j.ExpiresAt}
	maxAttempts := s.OnDemand.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 8
	}
	var throttles int64
	for attempt := 1; ; attempt++ {
		res, err := s.OnDemand.Model.Invoke(ctx, j.Model, in, j.OnDemand.Params)
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
		t := time.NewTimer(s.OnDemand.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// finishOnDemand settles the final status from the checkpoint counts and announces it.
func (s *Service) finishOnDemand(ctx context.Context, j *job.Job) error {
	now := s.now()
	j, err := s.Store.UpdateJob(ctx, j.ID, func(j *job.Job) error {
		if j.Status.Terminal() {
			return store.ErrNoChange
		}
		o := j.OnDemand
		j.Succeeded, j.Failed = o.Succeeded, o.Failed
		j.InputTokens, j.OutputTokens = o.InputTokens, o.OutputTokens
		j.CacheReadTokens, j.CacheWriteTokens = o.CacheReadTokens, o.CacheWriteTokens
		final := job.StatusCompleted
		switch {
		case j.Status == job.StatusCancelling:
			final = job.StatusCancelled
		case j.Failed > 0 || j.Succeeded < j.RecordCount:
			final = job.StatusPartiallyCompleted
		}
		j.Parts[0].Status, j.Parts[0].ProviderStatus = final, "OnDemandDone"
		j.Status, j.ProviderStatus = final, "OnDemandDone"
		j.CompletedAt = now
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finish on-demand job %s: %w", j.ID, err)
	}
	s.log().InfoContext(ctx, "on-demand job finished", "job_id", j.ID, "status", j.Status, "succeeded", j.Succeeded, "failed", j.Failed,
		"cache_read_tokens", j.CacheReadTokens, "cache_write_tokens", j.CacheWriteTokens, "throttles", j.OnDemand.Throttles)
	s.publishCompleted(ctx, j)
	return nil
}
