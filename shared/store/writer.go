package store

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// RecordPutter is the part of Store a Writer writes through.
type RecordPutter interface {
	PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error
}

// Objects is where a Writer keeps outputs too big for a record item.
type Objects interface {
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
}

// Writer is the one way results are stored, by every path that makes them
// (ingest, on-demand runs, SageMaker, budget holds): an output over
// job.MaxInlineOutputBytes is written to Prefix/<job id>/<record id>.out
// first and the record keeps a pointer to it, then the records are put. A
// replay writes the same objects and items again.
type Writer struct {
	Records RecordPutter
	Objects Objects
	// Prefix is an s3:// URI (s3://bucket/results).
	Prefix string
}

// Put stores recs in rs; it may replace a record's Output by its OutputRef.
func (w Writer) Put(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	for i := range recs {
		r := &recs[i]
		if len(r.Output) <= job.MaxInlineOutputBytes {
			continue
		}
		if w.Objects == nil || w.Prefix == "" {
			return fmt.Errorf("record %s: output of %d bytes and nowhere to keep it: %w", r.ID, len(r.Output), ErrTooLarge)
		}
		uri := strings.TrimRight(w.Prefix, "/") + "/" + rs.JobID + "/" + r.ID + ".out"
		if _, err := w.Objects.Put(ctx, uri, strings.NewReader(r.Output), "text/plain; charset=utf-8"); err != nil {
			return fmt.Errorf("store output of record %s: %w", r.ID, err)
		}
		r.OutputRef, r.Output = uri, ""
	}
	if len(recs) == 0 {
		return nil
	}
	if err := w.Records.PutRecords(ctx, rs, recs); err != nil {
		return fmt.Errorf("write %d records (%s..%s): %w", len(recs), recs[0].ID, recs[len(recs)-1].ID, err)
	}
	return nil
}
