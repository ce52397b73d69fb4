package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Get returns one of owner's jobs.
func (c *Core) Get(ctx context.Context, owner, id string) (*job.Job, error) {
	return c.OwnedJob(ctx, owner, id)
}

// ResultsQuery pages through a job's results.
type ResultsQuery struct {
	JobID  string
	Status string // all | succeeded | failed
	Cursor string
	Limit  int
}

// Results returns a page of a job's record results.
func (c *Core) Results(ctx context.Context, owner string, q ResultsQuery) ([]job.Record, string, *job.Job, error) {
	j, err := c.OwnedJob(ctx, owner, q.JobID)
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
	recs, next, err := c.Store.ListRecords(ctx, j.ID, j.Shards, store.RecordQuery{Status: st, Cursor: q.Cursor, Limit: limit})
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
func (c *Core) List(ctx context.Context, owner string, q ListQuery) ([]*job.Job, string, error) {
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
	jobs, next, err := c.Store.ListJobs(ctx, owner, store.JobQuery{Status: st, Cursor: q.Cursor, Limit: limit})
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
