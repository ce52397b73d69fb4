// Package report renders a finished job as report.md, a self-contained
// report.html (inline CSS and SVG charts: no scripts, fonts or links to fetch) and
// report.json. Records are streamed twice from their source (once to count, once
// to write), so memory stays flat however many records a job has.
package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Output kinds of a pipeline.
const (
	KindText = "text"
	KindJSON = "json"
)

// Meta is what the report says about the run besides its records.
type Meta struct {
	Title    string
	Pipeline string
	Date     string
	Job      *job.Job
	// OutputKind is text or json; for json, CategoryField names the field whose
	// distribution is charted (default "category").
	OutputKind    string
	CategoryField string
	// Documents is how many source documents the run saw; Skipped lists the ones it could not use.
	Documents int
	Skipped   []Skipped
}

// Skipped is a source document left out of a run, with the reason.
type Skipped struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// Records streams a job's records to yield; it must be callable more than once.
type Records func(ctx context.Context, yield func(job.Record) error) error

// StoreRecords streams a job's records from the store page by page.
func StoreRecords(st store.RecordLister, j *job.Job) Records {
	return func(ctx context.Context, yield func(job.Record) error) error {
		for r, err := range store.Records(ctx, st, j.RecordSet(), store.RecordQuery{}) {
			if err != nil {
				return fmt.Errorf("list records of %s: %w", j.ID, err)
			}
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// Count is one bar of a distribution.
type Count struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// Failure is one failed record.
type Failure struct {
	ID      string `json:"id"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Summary is the report's head, also the body of the notification.
type Summary struct {
	Title            string    `json:"title"`
	Pipeline         string    `json:"pipeline,omitempty"`
	Date             string    `json:"date,omitempty"`
	JobID            string    `json:"job_id"`
	Status           string    `json:"status"`
	Mode             string    `json:"mode"`
	Provider         string    `json:"provider"`
	Model            string    `json:"model"`
	Documents        int       `json:"documents"`
	SkippedDocuments int       `json:"skipped_documents"`
	Records          int       `json:"records"`
	Succeeded        int       `json:"succeeded"`
	Failed           int       `json:"failed"`
	InputTokens      int64     `json:"input_tokens"`
	OutputTokens     int64     `json:"output_tokens"`
	CacheReadTokens  int64     `json:"cache_read_tokens"`
	CacheWriteTokens int64     `json:"cache_write_tokens"`
	CostUSD          float64   `json:"cost_usd_estimate"`
	PriceKnown       bool      `json:"price_known"`
	DurationSeconds  float64   `json:"duration_seconds"`
	StartedAt        time.Time `json:"started_at"`
	FinishedAt       time.Time `json:"finished_at,omitzero"`
	OutputKind       string    `json:"output_kind"`
	CategoryField    string    `json:"category_field,omitempty"`
	Categories       []Count   `json:"categories,omitempty"`
	// Unparsed counts JSON-output records whose output was not a JSON object with the category field.
	Unparsed      int     `json:"unparsed_outputs,omitempty"`
	FailureCodes  []Count `json:"failure_codes,omitempty"`
	ListedFailure int     `json:"listed_failures"`
}

// MaxListedFailures caps the failures listed in full; the rest are counted by code.
const MaxListedFailures = 1000

// MaxOutputChars is how much of each record's output the report shows.
const MaxOutputChars = 600

// Outputs are where the three renderings go.
type Outputs struct {
	Markdown, HTML, JSON io.Writer
}

// Render writes the report and returns its summary.
func Render(ctx context.Context, m Meta, recs Records, out Outputs) (Summary, error) {
	s, fails, err := summarize(ctx, m, recs)
	if err != nil {
		return Summary{}, err
	}
	w := &writers{md: out.Markdown, html: out.HTML, json: out.JSON}
	w.head(s, fails, m.Skipped)
	n := 0
	err = recs(ctx, func(r job.Record) error {
		w.record(s, n, r)
		n++
		if n%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return w.err
	})
	if err != nil {
		return Summary{}, fmt.Errorf("render records: %w", err)
	}
	w.tail(s)
	if w.err != nil {
		return Summary{}, fmt.Errorf("write report: %w", w.err)
	}
	return s, nil
}

// summarize is the first pass: counts, tokens, the category distribution and the failures.
func summarize(ctx context.Context, m Meta, recs Records) (Summary, []Failure, error) {
	j := m.Job
	if j == nil {
		return Summary{}, nil, errors.New("report needs the job")
	}
	s := Summary{
		Title: m.Title, Pipeline: m.Pipeline, Date: m.Date, JobID: j.ID, Status: string(j.Status), Mode: j.Mode,
		Provider: j.Provider, Model: j.Model, Documents: m.Documents, SkippedDocuments: len(m.Skipped),
		InputTokens: j.InputTokens, OutputTokens: j.OutputTokens, CacheReadTokens: j.CacheReadTokens, CacheWriteTokens: j.CacheWriteTokens,
		StartedAt: j.CreatedAt, FinishedAt: j.CompletedAt, OutputKind: m.OutputKind,
	}
	if s.Mode == "" {
		s.Mode = job.ModeBatch
	}
	if s.Title == "" {
		s.Title = "Job " + j.ID
	}
	if s.OutputKind == "" {
		s.OutputKind = KindText
	}
	if s.OutputKind == KindJSON {
		s.CategoryField = m.CategoryField
		if s.CategoryField == "" {
			s.CategoryField = "category"
		}
	}
	if !j.CompletedAt.IsZero() {
		s.DurationSeconds = j.CompletedAt.Sub(j.CreatedAt).Seconds()
	}
	cats := map[string]int{}
	codes := map[string]int{}
	var fails []Failure
	err := recs(ctx, func(r job.Record) error {
		s.Records++
		if r.Status == job.RecordSucceeded {
			s.Succeeded++
			if s.OutputKind == KindJSON {
				if c, ok := category(r.Output, s.CategoryField); ok {
					cats[c]++
				} else {
					s.Unparsed++
				}
			}
			return nil
		}
		s.Failed++
		codes[r.ErrorCode]++
		if len(fails) < MaxListedFailures {
			fails = append(fails, Failure{ID: r.ID, Code: r.ErrorCode, Message: r.ErrorMessage})
		}
		return nil
	})
	if err != nil {
		return Summary{}, nil, fmt.Errorf("summarize records: %w", err)
	}
	// Records the job counted but never stored (no result at all) are failures too.
	if missing := j.RecordCount - s.Records; missing > 0 {
		s.Failed += missing
		codes["NoResult"] += missing
	}
	s.Records = max(s.Records, j.RecordCount)
	s.Categories = sorted(cats)
	s.FailureCodes = sorted(codes)
	s.ListedFailure = len(fails)
	// The job's cost, priced from the model catalog when its tokens were counted.
	if j.Cost != nil {
		s.CostUSD, s.PriceKnown = j.Cost.TotalUSD, len(j.Cost.Unpriced) == 0
	}
	return s, fails, nil
}

// category reads the category field of a JSON object output (fenced ```json blocks too).
func category(out, field string) (string, bool) {
	out = strings.TrimSpace(out)
	if i := strings.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	if i := strings.LastIndexByte(out, '}'); i >= 0 {
		out = out[:i+1]
	}
	var obj map[string]any
	if json.Unmarshal([]byte(out), &obj) != nil {
		return "", false
	}
	v, ok := obj[field]
	if !ok {
		return "", false
	}
	c := strings.TrimSpace(fmt.Sprint(v))
	return c, c != ""
}

func sorted(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{Name: k, Count: v})
	}
	slices.SortFunc(out, func(a, b Count) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
