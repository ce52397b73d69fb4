// Package parquetout writes export rows as one Parquet file: fixed columns
// (id, status, error, tokens, cost, text) and one typed column per
// top-level property of the job's output schema. It is its own package so
// that only the function that exports (mcp) links the Parquet library.
package parquetout

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/mcpbatch/mcpbatch/shared/job"
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
	value func(r *job.Record, outputURI string, cost float64) (parquet.Value, bool)
}

func str(v string) (parquet.Value, bool) { return parquet.ValueOf(v), v != "" }

// fixedColumns are a Parquet export's columns whatever the job: the record,
// its outcome, tokens, cost and text.
var fixedColumns = []parquetColumn{
	{"id", parquet.String(), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) {
		return parquet.ValueOf(r.ID), true
	}},
	{"status", parquet.String(), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) {
		return parquet.ValueOf(string(r.Status)), true
	}},
	{"error_code", parquet.Optional(parquet.String()), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) { return str(r.ErrorCode) }},
	{"error_message", parquet.Optional(parquet.String()), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) { return str(r.ErrorMessage) }},
	{"stop_reason", parquet.Optional(parquet.String()), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) { return str(r.StopReason) }},
	{"path", parquet.Optional(parquet.String()), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) { return str(r.Path) }},
	{"input_tokens", parquet.Int(64), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) {
		return parquet.ValueOf(r.InputTokens), true
	}},
	{"output_tokens", parquet.Int(64), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) {
		return parquet.ValueOf(r.OutputTokens), true
	}},
	{"cost_usd", parquet.Leaf(parquet.DoubleType), func(_ *job.Record, _ string, cost float64) (parquet.Value, bool) {
		return parquet.ValueOf(cost), true
	}},
	{"output", parquet.Optional(parquet.String()), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) { return str(r.Output) }},
	{"output_uri", parquet.Optional(parquet.String()), func(_ *job.Record, outputURI string, _ float64) (parquet.Value, bool) { return str(outputURI) }},
	{"output_json", parquet.Optional(parquet.String()), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) { return str(r.OutputJSON) }},
	{"reused_from", parquet.Optional(parquet.String()), func(r *job.Record, _ string, _ float64) (parquet.Value, bool) { return str(r.ReusedFrom) }},
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
		cols = append(cols, parquetColumn{col, node, func(r *job.Record, _ string, _ float64) (parquet.Value, bool) {
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

// Writer writes records as rows, a row group per parquetRowGroup records, so
// memory stays at one row group whatever the job's size.
type Writer struct {
	pw    *parquet.Writer
	cols  []parquetColumn
	index map[string]int
	rows  []parquet.Row
}

// New opens a Writer on w for a job whose output schema is outputSchema
// (JSON Schema text; "": the fixed columns only).
func New(w io.Writer, outputSchema string) (*Writer, error) {
	extra, err := schemaColumns(outputSchema)
	if err != nil {
		return nil, err
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
	return &Writer{pw: parquet.NewWriter(w, schema, parquet.MaxRowsPerRowGroup(parquetRowGroup)), cols: cols, index: index,
		rows: make([]parquet.Row, 0, parquetRowGroup)}, nil
}

// Write adds the row of r (its output's URI when stored apart, its cost).
func (w *Writer) Write(r *job.Record, outputURI string, cost float64) error {
	row := make(parquet.Row, len(w.cols))
	for _, c := range w.cols {
		ci := w.index[c.name]
		v, ok := c.value(r, outputURI, cost)
		switch {
		case !ok:
			row[ci] = parquet.NullValue().Level(0, 0, ci)
		case c.node.Optional():
			row[ci] = v.Level(0, 1, ci)
		default:
			row[ci] = v.Level(0, 0, ci)
		}
	}
	w.rows = append(w.rows, row)
	if len(w.rows) < parquetRowGroup {
		return nil
	}
	return w.flush()
}

func (w *Writer) flush() error {
	if len(w.rows) == 0 {
		return nil
	}
	if _, err := w.pw.WriteRows(w.rows); err != nil {
		return fmt.Errorf("write parquet rows: %w", err)
	}
	w.rows = w.rows[:0]
	return w.pw.Flush()
}

// Close writes the rows left and the file's footer.
func (w *Writer) Close() error {
	if err := w.flush(); err != nil {
		return err
	}
	return w.pw.Close()
}
