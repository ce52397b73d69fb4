package summary

import (
	"context"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Reader is the part of a store a summary reads records through: a job's
// records page by page, and its retries' records by key (the merged view).
type Reader interface {
	store.RecordLister
	GetRecords(ctx context.Context, rs job.RecordSet, keys []job.RecordKey) ([]job.Record, error)
}

// OutcomeReader is a store that reads only what a summary needs of each
// record: ListRecords' and GetRecords' records (the same ones, order,
// status filter and cursors) with just their key, status, error code and
// output_json.
type OutcomeReader interface {
	ListOutcomes(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error)
	GetOutcomes(ctx context.Context, rs job.RecordSet, keys []job.RecordKey) ([]job.Record, error)
}

// Outcomes is st as a summary reads it: through its OutcomeReader methods
// when it has them, else whole records.
func Outcomes(st Reader) Reader {
	if o, ok := st.(OutcomeReader); ok {
		return outcomes{o}
	}
	return st
}

type outcomes struct{ o OutcomeReader }

func (r outcomes) ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	return r.o.ListOutcomes(ctx, rs, q)
}

func (r outcomes) GetRecords(ctx context.Context, rs job.RecordSet, keys []job.RecordKey) ([]job.Record, error) {
	return r.o.GetOutcomes(ctx, rs, keys)
}
