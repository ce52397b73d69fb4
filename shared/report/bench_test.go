package report

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// genRecords streams n generated records (every 25th failed) without holding them.
func genRecords(n int) Records {
	return func(ctx context.Context, yield func(job.Record) error) error {
		cats := []string{"billing", "outage", "feature-request", "account", "other"}
		for i := range n {
			r := job.Record{ID: fmt.Sprintf("doc-%06d", i), Status: job.RecordSucceeded,
				Output: fmt.Sprintf(`{"category":%q,"confidence":0.9,"summary":"%s"}`, cats[i%len(cats)], strings.Repeat("lorem ipsum ", 20))}
			if i%25 == 0 {
				r = job.Record{ID: r.ID, Status: job.RecordFailed, ErrorCode: "ThrottlingException", ErrorMessage: "gave up after 8 attempts"}
			}
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// BenchmarkRender50k renders a 50,000-record job to all three formats and
// reports the process's peak RSS (VmHWM) next to the time.
// Run: go test -run '^$' -bench Render50k -benchtime=1x ./shared/report/
func BenchmarkRender50k(b *testing.B) {
	const n = 50_000
	t0 := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	m := Meta{Title: "bench", Job: &job.Job{ID: "01kb0000000000000000000000", Model: "anthropic.claude-3-5-haiku-20241022-v1:0",
		Status: job.StatusPartiallyCompleted, RecordCount: n, CreatedAt: t0, CompletedAt: t0.Add(time.Hour)}, OutputKind: KindJSON}
	for b.Loop() {
		s, err := Render(context.Background(), m, genRecords(n), Outputs{Markdown: io.Discard, HTML: io.Discard, JSON: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if s.Records != n || s.Failed != n/25 {
			b.Fatalf("summary: %d records, %d failed", s.Records, s.Failed)
		}
	}
	if hwm := procstat.PeakRSSMB(); hwm > 0 {
		b.ReportMetric(hwm, "peakRSS_MB")
	}
}
