// Package query is the flow of the job queries: get_job, list_jobs,
// get_job_results and the job resources. It only reads: one owner's jobs
// and their stored results.
package query

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// jobReader reads jobs: one by id, and an owner's newest first.
type jobReader interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
	ListJobs(ctx context.Context, owner string, q store.JobQuery) ([]*job.Job, string, error)
}

// Service answers the queries of a job's owner. Its fields are its dependencies.
type Service struct {
	Jobs    jobReader
	Records store.RecordLister
}

// Get returns one of owner's jobs (service.ErrJobNotFound for another's).
func (s *Service) Get(ctx context.Context, owner, id string) (*job.Job, error) {
	return service.OwnedJob(ctx, s.Jobs, owner, id)
}

// ResultsPage returns a page of a job's record results: up to q.Limit records
// and at most service.MaxResultsPageBytes of their JSON. The store is read in chunks
// sized from the bytes left and the records seen so far, so a page of big
// records is never read whole; when a chunk would cross the budget, the
// records that fit are read again from the chunk's cursor to get the cursor
// that follows exactly them.
func (s *Service) ResultsPage(ctx context.Context, owner string, q service.ResultsQuery) (service.ResultsPage, error) {
	j, err := service.OwnedJob(ctx, s.Jobs, owner, q.JobID)
	if err != nil {
		return service.ResultsPage{}, err
	}
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return service.ResultsPage{}, err
	}
	var st job.RecordStatus
	switch q.Status {
	case "", job.ResultsAll:
	case string(job.RecordSucceeded), string(job.RecordFailed):
		st = job.RecordStatus(q.Status)
	default:
		return service.ResultsPage{}, job.Fieldf("status", "must be one of all, succeeded, failed (got %q)", q.Status)
	}
	list := func(cursor string, n int) ([]job.Record, string, error) {
		recs, next, err := s.Records.ListRecords(ctx, j.RecordSet(), store.RecordQuery{Status: st, Cursor: cursor, Limit: n})
		if errors.Is(err, store.ErrBadCursor) {
			return nil, "", job.Fieldf("cursor", "not a cursor from a previous get_job_results page of this job; omit it to start over")
		}
		if err != nil {
			return nil, "", fmt.Errorf("list results of %s: %w", j.ID, err)
		}
		return recs, next, nil
	}
	// The chunks of one page read the store's items once (packed records
	// are read a range at a time).
	ctx = store.WithReadCache(ctx)
	page := service.ResultsPage{Job: j}
	cursor, used := q.Cursor, 0
	for len(page.Records) < limit {
		// Worst case first (records of the inline maximum); then the mean seen.
		per := service.MaxRecordJSON
		if len(page.Records) > 0 {
			per = max(used/len(page.Records), 1)
		}
		n := min(limit-len(page.Records), max(1, (service.MaxResultsPageBytes-used)/per))
		recs, next, err := list(cursor, n)
		if err != nil {
			return service.ResultsPage{}, err
		}
		fit := 0
		for _, r := range recs {
			size := service.RecordJSONSize(r)
			if used+size > service.MaxResultsPageBytes && len(page.Records)+fit > 0 {
				break
			}
			used += size
			fit++
		}
		if fit < len(recs) {
			page.TruncatedByBytes = true
			if fit == 0 {
				page.Next = cursor
				return page, nil
			}
			// Read exactly the records that fit, for the cursor after them.
			if recs, next, err = list(cursor, fit); err != nil {
				return service.ResultsPage{}, err
			}
			page.Records = append(page.Records, recs...)
			page.Next = next
			return page, nil
		}
		page.Records = append(page.Records, recs...)
		page.Next, cursor = next, next
		if next == "" {
			break
		}
	}
	return page, nil
}

// List returns a page of owner's jobs, newest first.
func (s *Service) List(ctx context.Context, owner string, q service.ListQuery) ([]*job.Job, string, error) {
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
	jobs, next, err := s.Jobs.ListJobs(ctx, owner, store.JobQuery{Status: st, Cursor: q.Cursor, Limit: limit})
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
	case n < job.MinPageSize || n > job.MaxPageSize:
		return 0, job.Fieldf("limit", "must be %d..%d (got %d)", job.MinPageSize, job.MaxPageSize, n)
	}
	return n, nil
}
