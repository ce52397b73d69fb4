package retry

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// maxRetries bounds the retries a merged view follows (children and theirs).
const maxRetries = 100

// LatestResults pages through a job's results with each record's latest
// outcome across its retries: a record a child job (or a child's child) has a
// result for shows that result (its JobID names the child), newer children
// winning. Paging and the status filter are the parent's: the cursor is a
// get_job_results cursor of the parent, and a page stops at
// service.MaxResultsPageBytes like any results page.
func (s *Service) LatestResults(ctx context.Context, owner string, q service.ResultsQuery) (service.ResultsPage, error) {
	parent, err := s.OwnedJob(ctx, owner, q.JobID)
	if err != nil {
		return service.ResultsPage{}, err
	}
	var want job.RecordStatus
	switch q.Status {
	case "", "all":
	case string(job.RecordSucceeded), string(job.RecordFailed):
		want = job.RecordStatus(q.Status)
	default:
		return service.ResultsPage{}, job.Fieldf("status", "must be one of all, succeeded, failed (got %q)", service.Truncate(q.Status, 40))
	}
	limit := q.Limit
	switch {
	case limit == 0:
		limit = job.DefaultPageSize
	case limit < 1 || limit > job.MaxPageSize:
		return service.ResultsPage{}, job.Fieldf("limit", "must be 1..%d (got %d)", job.MaxPageSize, limit)
	}
	latest, err := s.retriedOutcomes(ctx, parent)
	if err != nil {
		return service.ResultsPage{}, err
	}
	list := func(cursor string, n int) ([]job.Record, string, error) {
		// Unfiltered: a record that failed here may have succeeded in a retry,
		// so the filter applies after the merge.
		recs, next, err := s.Store.ListRecords(ctx, parent.ID, parent.Shards, store.RecordQuery{Cursor: cursor, Limit: n})
		if errors.Is(err, store.ErrBadCursor) {
			return nil, "", job.Fieldf("cursor", "not a cursor from a previous get_job_results page of this job; omit it to start over")
		}
		if err != nil {
			return nil, "", fmt.Errorf("list results of %s: %w", parent.ID, err)
		}
		for i, r := range recs {
			if l, ok := latest[r.ID]; ok {
				recs[i] = l
			}
		}
		return recs, next, nil
	}
	page := service.ResultsPage{Job: parent, Records: make([]job.Record, 0, min(limit, 100))}
	cursor, used := q.Cursor, 0
	for len(page.Records) < limit {
		recs, next, err := list(cursor, min(limit-len(page.Records), 100))
		if err != nil {
			return service.ResultsPage{}, err
		}
		// Keep what passes the filter, up to the byte budget (at least one record).
		fit, kept := 0, 0
		for _, r := range recs {
			if want == "" || r.Status == want {
				size := service.RecordJSONSize(r)
				if used+size > service.MaxResultsPageBytes && len(page.Records)+kept > 0 {
					break
				}
				used += size
				kept++
			}
			fit++
		}
		if fit < len(recs) {
			// Read exactly the records looked at, for the cursor after them.
			page.TruncatedByBytes = true
			if fit > 0 {
				if recs, next, err = list(cursor, fit); err != nil {
					return service.ResultsPage{}, err
				}
			} else {
				recs, next = nil, cursor
			}
			page.Records = appendWanted(page.Records, recs, want)
			page.Next = next
			return page, nil
		}
		page.Records = appendWanted(page.Records, recs, want)
		page.Next, cursor = next, next
		if next == "" {
			break
		}
	}
	return page, nil
}

func appendWanted(dst, recs []job.Record, want job.RecordStatus) []job.Record {
	for _, r := range recs {
		if want == "" || r.Status == want {
			dst = append(dst, r)
		}
	}
	return dst
}

// retriedOutcomes maps record id → latest result over parent's retries,
// following children breadth first in creation order.
func (s *Service) retriedOutcomes(ctx context.Context, parent *job.Job) (map[string]job.Record, error) {
	latest := map[string]job.Record{}
	var chain []*job.Job
	seen := map[string]bool{parent.ID: true}
	queue := slices.Clone(parent.RetriedBy)
	for len(queue) > 0 && len(chain) < maxRetries {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		c, err := s.Store.GetJob(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue // expired before its parent
		}
		if err != nil {
			return nil, fmt.Errorf("load retry %s of %s: %w", id, parent.ID, err)
		}
		if c.Owner != parent.Owner {
			continue
		}
		chain = append(chain, c)
		queue = append(queue, c.RetriedBy...)
	}
	slices.SortStableFunc(chain, func(a, b *job.Job) int { return a.CreatedAt.Compare(b.CreatedAt) })
	for _, c := range chain {
		cursor := ""
		for {
			recs, next, err := s.Store.ListRecords(ctx, c.ID, c.Shards, store.RecordQuery{Cursor: cursor, Limit: job.MaxPageSize})
			if err != nil {
				return nil, fmt.Errorf("list results of retry %s: %w", c.ID, err)
			}
			for _, r := range recs {
				latest[r.ID] = r
			}
			if next == "" {
				break
			}
			cursor = next
		}
	}
	return latest, nil
}
