package service

// The vocabulary of results pages, shared by the query flow (shared/service/
// query), the merged view of retries and exports; and the stored results of
// a job, which the flows that re-run records read.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

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

// MaxRecordJSON bounds one stored record's JSON: an inline output of
// job.MaxInlineOutputBytes, escaped (a character may take up to 6 bytes, as
// \u003c), plus the other fields.
const MaxRecordJSON = 6*job.MaxInlineOutputBytes + 16<<10

// RecordJSONSize is a record's JSON length as a page serialises it, plus room
// for the link that replaces an output kept in object storage: what a page
// counts against MaxResultsPageBytes (results pages, and the merged view of
// retries).
func RecordJSONSize(r job.Record) int {
	b, err := json.Marshal(r)
	if err != nil {
		return MaxRecordJSON
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

// StoredCounts are a job's stored results by outcome.
type StoredCounts struct{ Succeeded, Failed int }

// StoredResults are the ids of the records the job has a result for, and
// their counts by outcome, each stored result counted once (what a
// deadline re-drive leaves out, and the counts of a cancelled on-demand run),
// without the results one path produced (except; "": none left out).
func StoredResults(ctx context.Context, records store.RecordLister, j *job.Job, except string) (map[string]bool, StoredCounts, error) {
	have := make(map[string]bool, j.RecordCount)
	var n StoredCounts
	for r, err := range store.Records(ctx, records, j.RecordSet(), store.RecordQuery{}) {
		if err != nil {
			return nil, n, fmt.Errorf("list stored results of %s: %w", j.ID, err)
		}
		if have[r.ID] || (except != "" && r.Path == except) {
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
