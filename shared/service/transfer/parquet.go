package transfer

import (
	"context"
	"errors"
	"io"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// TableWriter writes export rows into a columnar file (Parquet:
// shared/parquetout, which only the mcp function links: the library would
// add megabytes to every function that has the transfer service).
type TableWriter interface {
	Write(r *job.Record, outputURI string, cost float64) error
	Close() error
}

// NewTable opens a TableWriter on w for a job's output schema (JSON Schema
// text, "" none).
type NewTable func(w io.Writer, outputSchema string) (TableWriter, error)

// errNoParquet: the function running the export was built without a writer.
var errNoParquet = errors.New("this function writes no Parquet (transfer.Service.Parquet is nil)")

// writeParquet writes the export as one Parquet file through s.Parquet. A
// record's cost_usd prices its tokens at the job's basis.
func (s *Service) writeParquet(ctx context.Context, w io.Writer, req ExportRequest, out *Export) error {
	if s.Parquet == nil {
		return errNoParquet
	}
	tw, err := s.Parquet(w, out.Job.OutputSchema())
	if err != nil {
		return err
	}
	price := s.recordPricer(out.Job)
	err = s.exportPages(ctx, req, out, func(recs []job.Record) error {
		for i := range recs {
			r := &recs[i]
			l, err := s.exportLine(ctx, *r)
			if err != nil {
				return err
			}
			if err := tw.Write(r, l.OutputURI, price(r)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// recordPricer prices one record's tokens at the job's price basis and the
// catalog's prices (0 when the model has no row).
func (s *Service) recordPricer(j *job.Job) func(*job.Record) float64 {
	m, ok := s.Models.LookupModel(j.Model)
	if !ok {
		return func(*job.Record) float64 { return 0 }
	}
	basis := model.BasisBatch
	if j.Mode == job.ModeOnDemand {
		basis = model.BasisOnDemand
	}
	return func(r *job.Record) float64 {
		if r.Path == job.PathReused {
			return 0
		}
		return m.Cost(model.Usage{Input: r.InputTokens, Output: r.OutputTokens, CacheRead: r.CacheReadTokens, CacheWrite: r.CacheWriteTokens}, basis).Total
	}
}
