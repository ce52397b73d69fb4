package local_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
)

// toolCallBench serves JSON-RPC tools/call requests straight into the MCP
// handler (no network): what a warm Lambda spends per call, server side.
type toolCallBench struct {
	h     http.Handler
	jobID string
}

func newToolCallBench(b *testing.B, records int) *toolCallBench {
	b.Helper()
	l, err := local.New(context.Background(), local.Options{Dir: b.TempDir(), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Owner: func(*http.Request) (string, error) { return "bench", nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	tb := &toolCallBench{h: l.Handler()}
	recs := make([]string, records)
	for i := range recs {
		recs[i] = fmt.Sprintf(`{"id":"r%05d","prompt":"Summarise fact #%d"}`, i, i)
	}
	body := tb.call(b, "submit_batch", `{"model":"`+haiku+`","records":[`+strings.Join(recs, ",")+`]}`)
	i := strings.Index(body, `"job_id":"`)
	if i < 0 {
		b.Fatalf("submit: %s", body)
	}
	tb.jobID = body[i+10 : i+10+26]
	if err := l.Sim.Settle(context.Background()); err != nil {
		b.Fatal(err)
	}
	l.Bus.Wait()
	return tb
}

func (tb *toolCallBench) call(b *testing.B, tool, args string) string {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	tb.h.ServeHTTP(w, req)
	if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"isError":true`) {
		b.Fatalf("%s: %d %s", tool, w.Code, w.Body.String())
	}
	return w.Body.String()
}

// run times each call and reports p50 and p99 next to the mean.
func (tb *toolCallBench) run(b *testing.B, tool, args string) {
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		tb.call(b, tool, args)
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// BenchmarkToolCall: tool-call overhead on a warm function against the local store.
//
//	go test ./shared/app/local/ -run '^$' -bench ToolCall -benchtime 2000x
func BenchmarkToolCall(b *testing.B) {
	tb := newToolCallBench(b, 500)
	b.Run("get_job", func(b *testing.B) { tb.run(b, "get_job", `{"job_id":"`+tb.jobID+`"}`) })
	b.Run("get_job_results_500", func(b *testing.B) {
		tb.run(b, "get_job_results", `{"job_id":"`+tb.jobID+`","limit":500}`)
	})
	b.Run("list_jobs", func(b *testing.B) { tb.run(b, "list_jobs", `{}`) })
}

// BenchmarkExport writes all results of a 10,000-record job per iteration;
// B/op next to file-MB shows the file is streamed, not built in memory.
//
//	go test ./shared/app/local/ -run '^$' -bench Export -benchmem -benchtime 5x
func BenchmarkExport(b *testing.B) {
	tb := newToolCallBench(b, 10_000)
	for _, format := range []string{"jsonl", "csv"} {
		b.Run(format, func(b *testing.B) {
			var size float64
			for b.Loop() {
				body := tb.call(b, "export_results", `{"job_id":"`+tb.jobID+`","format":"`+format+`"}`)
				i := strings.Index(body, `"bytes":`)
				if i < 0 {
					b.Fatalf("export: %s", body)
				}
				var n int64
				fmt.Sscanf(body[i+8:], "%d", &n)
				size = float64(n) / 1e6
			}
			b.ReportMetric(size, "file-MB")
		})
	}
}
