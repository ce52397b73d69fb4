package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sample is a small, fully deterministic finished job.
func sample(kind string) (Meta, Records) {
	t0 := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	j := &job.Job{ID: "01kb0000000000000000000000", Provider: "bedrock", Model: "anthropic.claude-3-5-haiku-20241022-v1:0",
		Mode: job.ModeOnDemand, Status: job.StatusPartiallyCompleted, RecordCount: 6, Succeeded: 4, Failed: 2,
		InputTokens: 1_000_000, OutputTokens: 200_000, CacheReadTokens: 500_000, CacheWriteTokens: 10_000,
		CreatedAt: t0, CompletedAt: t0.Add(95 * time.Second)}
	service.Models{}.PriceJob(j) // as ingest does, from the embedded catalog
	outs := []string{`{"category":"billing","confidence":0.9,"summary":"card charged twice"}`,
		"```json\n{\"category\":\"billing\",\"summary\":\"refund <please>\"}\n```",
		`{"category":"outage","summary":"site | down"}`, `not json at all`}
	var recs []job.Record
	for i, o := range outs {
		recs = append(recs, job.Record{ID: fmt.Sprintf("doc-%d", i), Status: job.RecordSucceeded, Output: o})
	}
	recs = append(recs, job.Record{ID: "doc-4", Status: job.RecordFailed, ErrorCode: "ThrottlingException", ErrorMessage: "gave up after 8 attempts"},
		job.Record{ID: "doc-5", Status: job.RecordFailed, ErrorCode: "ValidationException", ErrorMessage: "prompt too long\nfor the model"})
	m := Meta{Title: "Support tickets <nightly>", Pipeline: "support-triage", Date: "2026-11-27", Job: j, OutputKind: kind,
		Documents: 8, Skipped: []Skipped{{Key: "tickets/huge.txt", Reason: "2.1 MB is over the 256 KB document limit"}, {Key: "tickets/bad.json", Reason: "not valid JSON"}}}
	return m, sliceRecords(recs)
}

func sliceRecords(recs []job.Record) Records {
	return func(ctx context.Context, yield func(job.Record) error) error {
		for _, r := range recs {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

func render(t *testing.T, m Meta, recs Records) (Summary, map[string][]byte) {
	t.Helper()
	var md, h, js bytes.Buffer
	s, err := Render(context.Background(), m, recs, Outputs{Markdown: &md, HTML: &h, JSON: &js})
	if err != nil {
		t.Fatal(err)
	}
	return s, map[string][]byte{"report.md": md.Bytes(), "report.html": h.Bytes(), "report.json": js.Bytes()}
}

func TestRenderGolden(t *testing.T) {
	for _, kind := range []string{KindJSON, KindText} {
		t.Run(kind, func(t *testing.T) {
			m, recs := sample(kind)
			_, files := render(t, m, recs)
			for name, got := range files {
				golden := filepath.Join("testdata", kind+"-"+name)
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./shared/report -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s; rerun with -update after checking the change", name, golden)
				}
			}
		})
	}
}

func TestRenderNumbers(t *testing.T) {
	m, recs := sample(KindJSON)
	s, files := render(t, m, recs)
	checks := []struct {
		name      string
		got, want any
	}{
		{"records", s.Records, 6},
		{"succeeded", s.Succeeded, 4},
		{"failed", s.Failed, 2},
		{"categories", fmt.Sprint(s.Categories), "[{billing 2} {outage 1}]"},
		{"unparsed", s.Unparsed, 1},
		{"failure codes", fmt.Sprint(s.FailureCodes), "[{ThrottlingException 1} {ValidationException 1}]"},
		{"skipped", s.SkippedDocuments, 2},
		{"duration", s.DurationSeconds, 95.0},
		// on demand, Haiku 3.5: 1M in × 0.8 + 0.2M out × 4 + 0.5M cache read × 0.08 + 0.01M cache write × 1.0
		{"cost", fmt.Sprintf("%.4f", s.CostUSD), "1.6500"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Fatalf("got %v, want %v", c.got, c.want)
			}
		})
	}
	var doc struct {
		Summary  Summary           `json:"summary"`
		Failures []Failure         `json:"failures"`
		Skipped  []Skipped         `json:"skipped"`
		Records  []json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(files["report.json"], &doc); err != nil {
		t.Fatalf("report.json is not JSON: %v", err)
	}
	if len(doc.Records) != 6 || len(doc.Failures) != 2 || len(doc.Skipped) != 2 || doc.Summary.Succeeded != 4 {
		t.Fatalf("report.json: %d records, %d failures, %d skipped", len(doc.Records), len(doc.Failures), len(doc.Skipped))
	}
	h := string(files["report.html"])
	for _, bad := range []string{"<script", "<link", "@import", "http://", "https://", "url("} {
		// The SVG namespace is an identifier, not a fetch.
		if strings.Contains(strings.ReplaceAll(h, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Fatalf("report.html is not self-contained: it contains %q", bad)
		}
	}
	if strings.Contains(h, "<please>") || !strings.Contains(h, "&lt;please&gt;") {
		t.Fatal("record output is not HTML-escaped")
	}
	if strings.Count(string(files["report.md"]), "\n| doc-") != 6+2 { // 6 record rows + 2 failure rows
		t.Fatalf("markdown has the wrong number of record rows:\n%s", files["report.md"])
	}
}

func TestMissingRecordsCountAsFailures(t *testing.T) {
	m, _ := sample(KindText)
	m.Job.RecordCount = 10
	s, _ := render(t, m, sliceRecords([]job.Record{{ID: "a", Status: job.RecordSucceeded, Output: "x"}}))
	if s.Records != 10 || s.Failed != 9 || s.FailureCodes[0].Name != "NoResult" {
		t.Fatalf("summary %+v", s)
	}
}
