package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// ErrJobNotFound is returned for unknown jobs and for other owners' jobs alike,
// so nobody can probe for job ids they do not own.
var ErrJobNotFound = errors.New("job not found")

// ModelError is a model outside the allowed list.
type ModelError struct {
	Model   string
	Allowed []string
}

func (e *ModelError) Error() string {
	return fmt.Sprintf("model %q is not allowed here; allowed models: %s", e.Model, strings.Join(e.Allowed, ", "))
}

// Service runs the use cases. Its fields are its dependencies.
type Service struct {
	Store    store.Store
	Blobs    Blobs
	Bus      Publisher
	Ingester Ingester
	Log      *slog.Logger
	Now      Clock
	// Providers are the batch providers of this deployment, by name.
	Providers *Registry
	// Bucket is the s3:// URI root of job inputs, outputs and big results.
	Bucket string
	// JobPrefix prefixes provider job names so the event rule matches only this stack's jobs.
	JobPrefix string
	// TimeoutHours is the provider job timeout (Bedrock: 24..168; 0: the provider's default).
	TimeoutHours int
	// OnDemand runs small jobs through the runtime API (nil: batch only).
	OnDemand *OnDemand

	// Quota is the per-model limit of submitted + in-progress jobs of a
	// quota-limited provider; models not listed get DefaultQuota (0: the package's DefaultQuota).
	Quota        map[string]int
	DefaultQuota int
	// StaleAfter is how long a job of a provider that pushes events may go
	// without one before the reconciler asks the provider (0: DefaultStaleAfter).
	StaleAfter time.Duration
	// ReconcileLimit bounds the jobs one reconciler run looks at per provider (0: DefaultReconcileLimit).
	ReconcileLimit int
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// ownedJob loads a job and hides it unless owner owns it.
func (s *Service) ownedJob(ctx context.Context, owner, id string) (*job.Job, error) {
	if !job.ValidID(id) {
		return nil, ErrJobNotFound
	}
	j, err := s.Store.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrJobNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load job %s: %w", id, err)
	}
	if j.Owner != owner {
		return nil, ErrJobNotFound
	}
	return j, nil
}

// Get returns one of owner's jobs.
func (s *Service) Get(ctx context.Context, owner, id string) (*job.Job, error) {
	return s.ownedJob(ctx, owner, id)
}

// ResultsQuery pages through a job's results.
type ResultsQuery struct {
	JobID  string
	Status string // all | succeeded | failed
	Cursor string
	Limit  int
}

// Results returns a page of a job's record results.
func (s *Service) Results(ctx context.Context, owner string, q ResultsQuery) ([]job.Record, string, *job.Job, error) {
	j, err := s.ownedJob(ctx, owner, q.JobID)
	if err != nil {
		return nil, "", nil, err
	}
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return nil, "", nil, err
	}
	var st job.RecordStatus
	switch q.Status {
	case "", "all":
	case string(job.RecordSucceeded), string(job.RecordFailed):
		st = job.RecordStatus(q.Status)
	default:
		return nil, "", nil, job.Fieldf("status", "must be one of all, succeeded, failed (got %q)", q.Status)
	}
	recs, next, err := s.Store.ListRecords(ctx, j.ID, j.Shards, store.RecordQuery{Status: st, Cursor: q.Cursor, Limit: limit})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", nil, job.Fieldf("cursor", "not a cursor from a previous get_job_results page of this job; omit it to start over")
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("list results of %s: %w", j.ID, err)
	}
	return recs, next, j, nil
}

// ListQuery pages through an owner's jobs.
type ListQuery struct {
	Status string
	Cursor string
	Limit  int
}

// List returns a page of owner's jobs, newest first.
func (s *Service) List(ctx context.Context, owner string, q ListQuery) ([]*job.Job, string, error) {
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return nil, "", err
	}
	var st job.Status
	if q.Status != "" {
		if st, err = job.ParseStatus(q.Status); err != nil {
			return nil, "", job.Fieldf("status", "must be one of %s (got %q)", statusList(), q.Status)
		}
	}
	jobs, next, err := s.Store.ListJobs(ctx, owner, store.JobQuery{Status: st, Cursor: q.Cursor, Limit: limit})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", job.Fieldf("cursor", "not a cursor from a previous list_jobs page; omit it to start over")
	}
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	return jobs, next, nil
}

func statusList() string {
	var names []string
	for _, st := range job.AllStatuses {
		names = append(names, string(st))
	}
	return strings.Join(names, ", ")
}

func pageLimit(n int) (int, error) {
	switch {
	case n == 0:
		return job.DefaultPageSize, nil
	case n < 1 || n > job.MaxPageSize:
		return 0, job.Fieldf("limit", "must be 1..%d (got %d)", job.MaxPageSize, n)
	}
	return n, nil
}

// Cancel stops a job's provider jobs. Cancelling a finished job is not an error:
// it reports the status the job already has.
func (s *Service) Cancel(ctx context.Context, owner, id string) (*job.Job, error) {
	j, err := s.ownedJob(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	if j.Status.Terminal() || j.Status == job.StatusIngesting {
		return j, nil
	}
	if err := cancelUnsupported(j); err != nil {
		return nil, err
	}
	prov := s.provider(j.Provider)
	for _, p := range j.Parts {
		if p.Ref == "" || p.Status.Rank() >= job.StatusCancelling.Rank() {
			continue
		}
		if err := prov.Stop(ctx, p.Ref); err != nil {
			return nil, fmt.Errorf("stop provider job %s: %w", p.Name, err)
		}
	}
	now := s.now()
	j, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		changed := false
		for i := range j.Parts {
			p := &j.Parts[i]
			switch {
			case p.Ref == "" && !p.Status.Terminal():
				// Never reached the provider: nothing to stop, nothing to ingest.
				p.Status = job.StatusCancelled
				changed = true
			case job.CanMove(p.Status, job.StatusCancelling):
				p.Status = job.StatusCancelling
				p.CancelRequested = true
				changed = true
			}
		}
		if !changed {
			return store.ErrNoChange
		}
		s.settle(j, now)
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return nil, fmt.Errorf("mark job %s cancelling: %w", id, err)
	}
	if j.Status == job.StatusCancelled {
		s.publishCompleted(ctx, j)
	}
	return j, nil
}

// settle recomputes the job status from its parts after a part changed.
func (s *Service) settle(j *job.Job, now time.Time) {
	prov := s.provider(j.Provider)
	if len(j.Parts) > 0 {
		j.ProviderStatus = leastAdvanced(prov, j.Parts).ProviderStatus
	}
	agg := j.Aggregate()
	if job.CanMove(j.Status, agg) {
		j.Status = agg
	}
	if j.Status == job.StatusIngesting {
		j.FinalStatus = finalOf(prov, j.Parts)
	}
	if j.Status.Terminal() && j.CompletedAt.IsZero() {
		j.CompletedAt = now
		if j.Status == job.StatusFailed || j.Status == job.StatusCancelled {
			j.Failed = max(j.Failed, 0)
		}
		var msgs []string
		for _, p := range j.Parts {
			if p.Message != "" {
				msgs = append(msgs, p.Message)
			}
		}
		if len(msgs) > 0 && j.Error == "" {
			j.Error = strings.Join(slices.Compact(msgs), "; ")
		}
	}
}

// finalOf is what a job becomes once all its parts' outputs are read: the least
// successful part's outcome wins. A part the provider never ended is cancelled
// when it was, else completed.
func finalOf(prov BatchProvider, parts []job.Part) job.Status {
	final := job.StatusCompleted
	rank := map[job.Status]int{job.StatusCompleted: 0, job.StatusPartiallyCompleted: 1, job.StatusExpired: 2, job.StatusCancelled: 3}
	for _, p := range parts {
		f := prov.Final(p)
		if f == "" {
			f = job.StatusCompleted
			if p.Status == job.StatusCancelled {
				f = job.StatusCancelled
			}
		}
		if rank[f] > rank[final] {
			final = f
		}
	}
	return final
}
