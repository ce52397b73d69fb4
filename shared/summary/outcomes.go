package summary

import (
	"context"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// OutcomeLister is a store that lists only what a summary reads of each
// record: ListRecords' records (the same order, status filter and cursors)
// with just their key, status, error code and output_json. A store without
// it is read through ListRecords, whole records.
type OutcomeLister interface {
	ListOutcomes(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error)
}

// Outcomes is st's lister of what a summary reads: its ListOutcomes when it
// has one, else its ListRecords.
func Outcomes(st store.RecordLister) store.RecordLister {
	if o, ok := st.(OutcomeLister); ok {
		return outcomes{o}
	}
	return st
}

type outcomes struct{ o OutcomeLister }

func (l outcomes) ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	return l.o.ListOutcomes(ctx, rs, q)
}
