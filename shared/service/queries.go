package service

import (
	"context"
	"encoding/json"
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

// MaxResultsPageBytes is the byte budget of a results page: the records'
// JSON stays under it (a page of 500 records of 350 KB each would be 175 MB,
// held several times in the function and over the Function URL's response
// limit). A page always holds at least one record.
const MaxResultsPageBytes = 4 << 20

// ResultsQuery pages through a job's results.
type ResultsQuery struct {
	JobID  string
	Status string // all | succeeded | failed
	Cursor string
	Limit  int
}

// ResultsPage is one page of a job's results.
type ResultsPage struct {
	Records []job.Record
	Next    string
	Job     *job.Job
	// TruncatedByBytes: the page stopped at MaxResultsPageBytes before its
	// limit; Next continues after its last record.
	TruncatedByBytes bool
}

// Results returns a page of a job's record results (see ResultsPage).
func (c *Core) Results(ctx context.Context, owner string, q ResultsQuery) ([]job.Record, string, *job.Job, error) {
	p, err := c.ResultsPage(ctx, owner, q)
	return p.Records, p.Next, p.Job, err
}

// ResultsPage returns a page of a job's record results: up to q.Limit records
// and at most MaxResultsPageBytes of their JSON. The store is read in chunks
// sized from the bytes left and the records seen so far, so a page of big
// records is never read whole; when a chunk would cross the budget, the
// records that fit are read again from the chunk's cursor to get the cursor
// that follows exactly them.
func (c *Core) ResultsPage(ctx context.Context, owner string, q ResultsQuery) (ResultsPage, error) {
	j, err := c.OwnedJob(ctx, owner, q.JobID)
	if err != nil {
		return ResultsPage{}, err
	}
	limit, err := pageLimit(q.Limit)
	if err != nil {
		return ResultsPage{}, err
	}
	var st job.RecordStatus
	switch q.Status {
	case "", job.ResultsAll:
	case string(job.RecordSucceeded), string(job.RecordFailed):
		st = job.RecordStatus(q.Status)
	default:
		return ResultsPage{}, job.Fieldf("status", "must be one of all, succeeded, failed (got %q)", q.Status)
	}
	list := func(cursor string, n int) ([]job.Record, string, error) {
		recs, next, err := c.Store.ListRecords(ctx, j.RecordSet(), store.RecordQuery{Status: st, Cursor: cursor, Limit: n})
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
	page := ResultsPage{Job: j}
	cursor, used := q.Cursor, 0
	for len(page.Records) < limit {
		// Worst case first (records of the inline maximum); then the mean seen.
		per := maxRecordJSON
		if len(page.Records) > 0 {
			per = max(used/len(page.Records), 1)
		}
		n := min(limit-len(page.Records), max(1, (MaxResultsPageBytes-used)/per))
		recs, next, err := list(cursor, n)
		if err != nil {
			return ResultsPage{}, err
		}
		fit := 0
		for _, r := range recs {
			size := recordJSONSize(r)
			if used+size > MaxResultsPageBytes && len(page.Records)+fit > 0 {
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
				return ResultsPage{}, err
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

// maxRecordJSON bounds one stored record's JSON: an inline output of
// job.MaxInlineOutputBytes, escaped (a character may take up to 6 bytes, as
// \u003c), plus the other fields.
const maxRecordJSON = 6*job.MaxInlineOutputBytes + 16<<10

// recordJSONSize is a record's JSON length as a page serialises it, plus room
// for the link that replaces an output kept in object storage.
func recordJSONSize(r job.Record) int {
	b, err := json.Marshal(r)
	if err != nil {
		return maxRecordJSON
	}
	if r.OutputRef != "" {
		return len(b) + 2<<10
	}
	return len(b)
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
	case n < job.MinPageSize || n > job.MaxPageSize:
		return 0, job.Fieldf("limit", "must be %d..%d (got %d)", job.MinPageSize, job.MaxPageSize, n)
	}
	return n, nil
}

// StoredCounts are a job's stored results by outcome.
type StoredCounts struct{ Succeeded, Failed int }

// StoredResults are the ids of the records the job has a result for, and
// their counts by outcome, each stored result counted once (what a
// deadline re-drive leaves out, and the counts of a cancelled on-demand run).
func (c *Core) StoredResults(ctx context.Context, j *job.Job) (map[string]bool, StoredCounts, error) {
	return c.StoredResultsExcept(ctx, j, "")
}

// StoredResultsExcept is StoredResults without the results one path
// produced ("": none left out).
func (c *Core) StoredResultsExcept(ctx context.Context, j *job.Job, path string) (map[string]bool, StoredCounts, error) {
	have := make(map[string]bool, j.RecordCount)
	var n StoredCounts
	for r, err := range store.Records(ctx, c.Store, j.RecordSet(), store.RecordQuery{}) {
		if err != nil {
			return nil, n, fmt.Errorf("list stored results of %s: %w", j.ID, err)
		}
		if have[r.ID] || (path != "" && r.Path == path) {
			continue
		}
		have[r.ID] = true
		if r.Status == job.RecordSucceeded {
			n.Succeeded++
		} else {
			n.Failed++
		}
	}
	return have, n, nil
}
