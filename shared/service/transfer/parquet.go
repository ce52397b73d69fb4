package transfer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// parquetRowGroup is how many records one Parquet row group holds: the
// writer buffers a row group's columns until it is flushed, so this bounds
// the export's memory (with outputs up to job.MaxInlineOutputBytes inline).
const parquetRowGroup = 1000

// parquetColumn is one column of a Parquet export: its node and how a
// record fills it (false: null).
type parquetColumn struct {
	name  string
	node  parquet.Node
	value func(r *job.Record, l *ExportLine, cost float64) (parquet.Value, bool)
}

func str(v string) (parquet.Value, bool) { return parquet.ValueOf(v), v != "" }

// fixedColumns are a Parquet export's columns whatever the job: the record,
// its outcome, tokens, cost and text.
var fixedColumns = []parquetColumn{
	{"id", parquet.String(), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) {
		return parquet.ValueOf(r.ID), true
	}},
	{"status", parquet.String(), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) {
		return parquet.ValueOf(string(r.Status)), true
	}},
	{"error_code", parquet.Optional(parquet.String()), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) { return str(r.ErrorCode) }},
	{"error_message", parquet.Optional(parquet.String()), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) { return str(r.ErrorMessage) }},
	{"stop_reason", parquet.Optional(parquet.String()), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) { return str(r.StopReason) }},
	{"path", parquet.Optional(parquet.String()), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) { return str(r.Path) }},
	{"input_tokens", parquet.Int(64), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) {
		return parquet.ValueOf(r.InputTokens), true
	}},
	{"output_tokens", parquet.Int(64), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) {
		return parquet.ValueOf(r.OutputTokens), true
	}},
	{"cost_usd", parquet.Leaf(parquet.DoubleType), func(_ *job.Record, _ *ExportLine, cost float64) (parquet.Value, bool) {
		return parquet.ValueOf(cost), true
	}},
	{"output", parquet.Optional(parquet.String()), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) { return str(r.Output) }},
	{"output_uri", parquet.Optional(parquet.String()), func(_ *job.Record, l *ExportLine, _ float64) (parquet.Value, bool) { return str(l.OutputURI) }},
	{"output_json", parquet.Optional(parquet.String()), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) { return str(r.OutputJSON) }},
	{"reused_from", parquet.Optional(parquet.String()), func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) { return str(r.ReusedFrom) }},
}

// schemaColumns are one column per top-level property of the job's output
// schema, typed by the property's type (string, number, integer, boolean;
// anything else holds the value's JSON), null where a record lacks it. A
// name taken by a fixed column is prefixed with "output_".
func schemaColumns(raw string) ([]parquetColumn, error) {
	if raw == "" {
		return nil, nil
	}
	var sch struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(raw), &sch); err != nil {
		return nil, fmt.Errorf("read output schema: %w", err)
	}
	taken := map[string]bool{}
	for _, c := range fixedColumns {
		taken[c.name] = true
	}
	var cols []parquetColumn
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range sch.Properties {
			if !yield(n) {
				return
			}
		}
	}) {
		col := name
		for taken[col] {
			col = "output_" + col
		}
		taken[col] = true
		prop := name
		kind, _ := sch.Properties[name].Type.(string)
		node := parquet.Optional(parquet.String())
		conv := func(v json.RawMessage) (parquet.Value, bool) {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return parquet.ValueOf(s), true
			}
			return parquet.ValueOf(string(v)), true
		}
		switch kind {
		case "number":
			node = parquet.Optional(parquet.Leaf(parquet.DoubleType))
			conv = func(v json.RawMessage) (parquet.Value, bool) {
				f, err := strconv.ParseFloat(string(v), 64)
				return parquet.ValueOf(f), err == nil
			}
		case "integer":
			node = parquet.Optional(parquet.Int(64))
			conv = func(v json.RawMessage) (parquet.Value, bool) {
				i, err := strconv.ParseInt(string(v), 10, 64)
				return parquet.ValueOf(i), err == nil
			}
		case "boolean":
			node = parquet.Optional(parquet.Leaf(parquet.BooleanType))
			conv = func(v json.RawMessage) (parquet.Value, bool) {
				b, err := strconv.ParseBool(string(v))
				return parquet.ValueOf(b), err == nil
			}
		}
		cols = append(cols, parquetColumn{col, node, func(r *job.Record, _ *ExportLine, _ float64) (parquet.Value, bool) {
			if r.OutputJSON == "" {
				return parquet.Value{}, false
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(r.OutputJSON), &obj) != nil {
				return parquet.Value{}, false
			}
			v, ok := obj[prop]
			if !ok || string(v) == "null" {
				return parquet.Value{}, false
			}
			return conv(v)
		}})
	}
	return cols, nil
}

// writeParquet writes the export as one Parquet file, a row group per
// parquetRowGroup records, so memory stays at one row group whatever the
// job's size. A record's cost_usd prices its tokens at the job's basis.
func (s *Service) writeParquet(ctx context.Context, w io.Writer, req ExportRequest, out *Export) error {
	extra, err := schemaColumns(out.Job.OutputSchema())
	if err != nil {
		return err
	}
	cols := append(slices.Clone(fixedColumns), extra...)
	group := parquet.Group{}
	for _, c := range cols {
		group[c.name] = parquet.Compressed(c.node, &parquet.Snappy)
	}
	schema := parquet.NewSchema("results", group)
	// The schema orders its columns by name: index each column by its place there.
	index := map[string]int{}
	for i, f := range schema.Fields() {
		index[f.Name()] = i
	}
	pw := parquet.NewWriter(w, schema, parquet.MaxRowsPerRowGroup(parquetRowGroup))
	price := s.recordPricer(out.Job)
	rows := make([]parquet.Row, 0, exportPage)
	written := 0
	err = s.exportPages(ctx, req, out, func(recs []job.Record) error {
		rows = rows[:0]
		for i := range recs {
			r := &recs[i]
			l, err := s.exportLine(ctx, *r)
			if err != nil {
				return err
			}
			row := make(parquet.Row, len(cols))
			cost := price(r)
			for _, c := range cols {
				ci := index[c.name]
				v, ok := c.value(r, &l, cost)
				switch {
				case !ok:
					row[ci] = parquet.NullValue().Level(0, 0, ci)
				case c.node.Optional():
					row[ci] = v.Level(0, 1, ci)
				default:
					row[ci] = v.Level(0, 0, ci)
				}
			}
			rows = append(rows, row)
		}
		if _, err := pw.WriteRows(rows); err != nil {
			return fmt.Errorf("write parquet rows: %w", err)
		}
		if written += len(rows); written >= parquetRowGroup {
			written = 0
			return pw.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return pw.Close()
}

// recordPricer prices one record's tokens at the job's price basis and the
// catalog's prices (0 when the model has no row).
func (s *Service) recordPricer(j *job.Job) func(*job.Record) float64 {
	m, ok := s.LookupModel(j.Model)
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
