package retry

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/summary"
)

// maxRetries bounds the retries a merged view follows (children and
// theirs), newest first. With MaxRetriesPerJob it bounds the work of a page.
const maxRetries = 100

// LatestResults pages through a job's results with each record's latest
// outcome across its retries: a record a child job (or a child's child) has a
// result for shows that result (its JobID names the child), newer children
// winning. Paging and the status filter are the parent's: the cursor is a
// get_job_results cursor of the parent, and a page stops at
// service.MaxResultsPageBytes like any results page.
func (s *Service) LatestResults(ctx context.Context, owner string, q service.ResultsQuery) (service.ResultsPage, error) {
	parent, err := service.OwnedJob(ctx, s.Jobs, owner, q.JobID)
	if err != nil {
		return service.ResultsPage{}, err
	}
	var want job.RecordStatus
	switch q.Status {
	case "", job.ResultsAll:
	case string(job.RecordSucceeded), string(job.RecordFailed):
		want = job.RecordStatus(q.Status)
	default:
		return service.ResultsPage{}, job.Fieldf("status", "must be one of all, succeeded, failed (got %q)", service.Truncate(q.Status, 40))
	}
	limit := q.Limit
	switch {
	case limit == 0:
		limit = job.DefaultPageSize
	case limit < job.MinPageSize || limit > job.MaxPageSize:
		return service.ResultsPage{}, job.Fieldf("limit", "must be %d..%d (got %d)", job.MinPageSize, job.MaxPageSize, limit)
	}
	chain, err := s.retryChain(ctx, parent)
	if err != nil {
		return service.ResultsPage{}, err
	}
	list := func(cursor string, n int) ([]job.Record, string, error) {
		// Unfiltered: a record that failed here may have succeeded in a retry,
		// so the filter applies after the merge.
		recs, next, err := s.Jobs.ListRecords(ctx, parent.RecordSet(), store.RecordQuery{Cursor: cursor, Limit: n})
		if errors.Is(err, store.ErrBadCursor) {
			return nil, "", job.Fieldf("cursor", "not a cursor from a previous get_job_results page of this job; omit it to start over")
		}
		if err != nil {
			return nil, "", fmt.Errorf("list results of %s: %w", parent.ID, err)
		}
		return recs, next, s.merge(ctx, s.Jobs, parent, chain, recs)
	}
	// The chunks of one page read the store's items once (packed records
	// are read a range at a time).
	ctx = store.WithReadCache(ctx)
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

// merge replaces each record of recs (a page of parent's) by its latest
// outcome among the retries in chain, read from rd. Only failed records
// can have been retried: those are looked up in the retries, newest first.
func (s *Service) merge(ctx context.Context, rd summary.Reader, parent *job.Job, chain []*job.Job, recs []job.Record) error {
	var failed []job.RecordKey
	for _, r := range recs {
		if r.Status != job.RecordSucceeded {
			failed = append(failed, r.Key())
		}
	}
	if len(failed) == 0 || len(chain) == 0 {
		return nil
	}
	latest, err := s.latestOf(ctx, rd, parent, chain, failed)
	if err != nil {
		return err
	}
	for i, r := range recs {
		if l, ok := latest[r.ID]; ok {
			recs[i] = l
		}
	}
	return nil
}

// Merged walks every record of parent with its latest outcome across its
// retries, page by page from the store (store.Pages): the merged view
// LatestResults pages through, for readers of a whole job.
func (s *Service) Merged(ctx context.Context, parent *job.Job) iter.Seq2[job.Record, error] {
	return s.merged(ctx, parent, s.Jobs, store.RecordQuery{})
}

// merged is Merged reading the records from rd, q.Limit a page.
func (s *Service) merged(ctx context.Context, parent *job.Job, rd summary.Reader, q store.RecordQuery) iter.Seq2[job.Record, error] {
	return func(yield func(job.Record, error) bool) {
		chain, err := s.retryChain(ctx, parent)
		if err != nil {
			yield(job.Record{}, err)
			return
		}
		for page, err := range store.Pages(ctx, rd, parent.RecordSet(), q) {
			if err == nil {
				err = s.merge(ctx, rd, parent, chain, page)
			}
			if err != nil {
				yield(job.Record{}, fmt.Errorf("results of %s: %w", parent.ID, err))
				return
			}
			for _, r := range page {
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// Summarize summarizes an owner's job over its merged view (retries
// included), streaming its records (see summary.Summarize).
func (s *Service) Summarize(ctx context.Context, owner, jobID string, q summary.Query) (*job.Job, summary.Summary, error) {
	if err := q.Check(); err != nil {
		return nil, summary.Summary{}, err
	}
	parent, err := service.OwnedJob(ctx, s.Jobs, owner, jobID)
	if err != nil {
		return nil, summary.Summary{}, err
	}
	// Only what a summary reads of each record, in the largest pages the
	// store gives (a limit past its bound is cut to it).
	recs := s.merged(ctx, parent, summary.Outcomes(s.Jobs), store.RecordQuery{Limit: math.MaxInt32})
	sum, err := summary.Summarize(recs, q)
	return parent, sum, err
}

func appendWanted(dst, recs []job.Record, want job.RecordStatus) []job.Record {
	for _, r := range recs {
		if want == "" || r.Status == want {
			dst = append(dst, r)
		}
	}
	return dst
}

// retryChain is parent's retries and theirs, newest first: at most
// maxRetries, the newest of each job's retries followed first.
func (s *Service) retryChain(ctx context.Context, parent *job.Job) ([]*job.Job, error) {
	var chain []*job.Job
	seen := map[string]bool{parent.ID: true}
	queue := newestFirst(parent.RetriedBy)
	for len(queue) > 0 && len(chain) < maxRetries {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		c, err := s.Jobs.GetJob(ctx, id)
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
		queue = append(queue, newestFirst(c.RetriedBy)...)
	}
	slices.SortStableFunc(chain, func(a, b *job.Job) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return chain, nil
}

// newestFirst is a retried_by list (appended as retries are made) newest first.
func newestFirst(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// latestOf maps the id of each of keys (records of parent) to its newest
// result among the retries in chain (newest first); ids no retry has a result
// for are left out. A retry's record keeps the key it had in parent (id and
// input ordinal). Each retry is asked only for the keys no newer retry
// answered, store.MaxGetRecords at a time, from rd.
func (s *Service) latestOf(ctx context.Context, rd summary.Reader, parent *job.Job, chain []*job.Job, keys []job.RecordKey) (map[string]job.Record, error) {
	latest := map[string]job.Record{}
	pending := slices.Clone(keys)
	for _, c := range chain {
		if len(pending) == 0 {
			break
		}
		for chunk := range slices.Chunk(pending, store.MaxGetRecords) {
			recs, err := rd.GetRecords(ctx, c.RecordSet(), chunk)
			if err != nil {
				return nil, fmt.Errorf("read results of retry %s of %s: %w", c.ID, parent.ID, err)
			}
			for _, r := range recs {
				latest[r.ID] = r
			}
		}
		pending = slices.DeleteFunc(pending, func(k job.RecordKey) bool { _, ok := latest[k.ID]; return ok })
	}
	return latest, nil
}
