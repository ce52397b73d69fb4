// Package ondemand runs jobs record by record through a model's runtime API
// (Bedrock's InvokeModel): jobs under a batch provider's minimum, or asked for
// on demand. A run continues across invocations from a checkpoint on the job,
// with bounded concurrency and retries with backoff and jitter.
package ondemand

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
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

// OnDemandRun is the detail of "On-Demand Run Requested".
type OnDemandRun struct {
	JobID string `json:"jobId"`
}

// Service runs jobs too small for batch (or asked for on demand) record by
// record, with bounded concurrency and retries with backoff and jitter.
type Service struct {
	Jobs  jobStore
	Blobs service.Blobs
	// Bus carries the On-Demand Run events that start and resume runs.
	Bus service.Publisher
	// Results stores the records a run answers.
	Results   store.Writer
	Telemetry service.Telemetry
	Models    service.Models
	// Providers settle a run's job as its provider would.
	Providers *service.Registry
	Clock     service.Clock
	Log       *slog.Logger
	// Bucket is the s3:// root of job inputs; JobPrefix prefixes part names.
	Bucket, JobPrefix string
	// Model is the runtime API (nil in the functions that only submit: runs are refused).
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
	// Vectors writes embedding jobs' vectors into their index (nil: none).
	Vectors batch.VectorSink
}

// jobStore is what on-demand runs read and write: their jobs, and the
// results a job has stored.
type jobStore interface {
	CreateJob(ctx context.Context, j *job.Job) error
	GetJob(ctx context.Context, id string) (*job.Job, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error)
}

func (s *Service) concurrency() int {
	if s.Concurrency > 0 {
		return s.Concurrency
	}
	return job.DefaultOnDemandConcurrency
}

// backoff is the wait before retry number attempt (1-based): full jitter over a capped exponential.
func (s *Service) backoff(attempt int) time.Duration {
	base, top := s.BaseBackoff, s.MaxBackoff
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

// SubmitOnDemand stores the records and asks the on-demand runner to start; it
// returns at once, like a batch submit.
func (s *Service) SubmitOnDemand(ctx context.Context, req batch.SubmitRequest) (*job.Job, error) {
	now := s.Clock.Now()
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
		OnDemand: &job.OnDemand{Params: req.Params, Concurrency: s.concurrency()},
		Pipeline: req.Pipeline, Index: req.Target, RetryOf: req.RetryOf, Notify: req.Notify, BudgetUSD: req.BudgetUSD,
		Deadline: req.Deadline, DeadlineTokens: req.DeadlineTokens(),
	}
	j.ExpiresAt = job.NewExpiresAt(j, now) // held while in flight; TTL counts from the end
	j.AddWarning(req.Warnings...)
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
	if err := service.WriteIDs(ctx, s.Blobs, j, req.Records); err != nil {
		return nil, err
	}
	if err := service.KeyRecords(ctx, s.Blobs, j, req.Ordinals, req.ByID); err != nil {
		return nil, err
	}
	if err := req.StoreReused(ctx, s.Results, j); err != nil {
		return nil, err
	}
	if err := s.Jobs.CreateJob(ctx, j); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("%w: %s", service.ErrJobExists, id)
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
	id := j.ID
	j, err := s.Jobs.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.OnDemand == nil || j.OnDemand.RunRequested {
			return store.ErrNoChange
		}
		j.OnDemand.RunRequested = true
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return nil, fmt.Errorf("record run request of %s: %w", id, err) // j is nil here
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
