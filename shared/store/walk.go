package store

import (
	"context"
	"iter"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// RecordLister is the part of Store a walk over records reads.
type RecordLister interface {
	ListRecords(ctx context.Context, rs job.RecordSet, q RecordQuery) ([]job.Record, string, error)
}

// Pages walks the records of rs that q selects, one ListRecords page at a
// time (q.Limit sizes them; 0 is job.MaxPageSize), from q.Cursor on, in the
// store's order. It is the one cursor loop every path that reads a whole
// job's results uses. A failed page is yielded as its error, and ends the walk.
func Pages(ctx context.Context, st RecordLister, rs job.RecordSet, q RecordQuery) iter.Seq2[[]job.Record, error] {
	if q.Limit == 0 {
		q.Limit = job.MaxPageSize
	}
	return func(yield func([]job.Record, error) bool) {
		for {
			recs, next, err := st.ListRecords(ctx, rs, q)
			if err != nil {
				yield(nil, err)
				return
			}
			if len(recs) > 0 && !yield(recs, nil) {
				return
			}
			if next == "" {
				return
			}
			q.Cursor = next
		}
	}
}

// Records walks the same records as Pages, one at a time.
func Records(ctx context.Context, st RecordLister, rs job.RecordSet, q RecordQuery) iter.Seq2[job.Record, error] {
	return func(yield func(job.Record, error) bool) {
		for page, err := range Pages(ctx, st, rs, q) {
			if err != nil {
				yield(job.Record{}, err)
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
