package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// BenchmarkConsoleJobList: the console's first page with 10,000 jobs stored —
// the list_jobs call it makes (limit 50, newest first) through the MCP
// handler with token auth, as make dev serves it.
//
//	go test ./shared/console/ -run '^$' -bench ConsoleJobList -benchtime 300x
func BenchmarkConsoleJobList(b *testing.B) {
	dir := b.TempDir()
	key, auth, err := local.DevToken(dir)
	if err != nil {
		b.Fatal(err)
	}
	st, err := localstore.Open(filepath.Join(dir, "mcpbatch.db"))
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now().Add(-10000 * time.Minute)
	statuses := []job.Status{job.StatusCompleted, job.StatusPartiallyCompleted, job.StatusFailed, job.StatusInProgress}
	for i := range 10000 {
		created := start.Add(time.Duration(i) * time.Minute)
		j := &job.Job{ID: fmt.Sprintf("01bench%019d", i), Owner: local.DevKeyName, Name: fmt.Sprintf("job %d", i), Provider: "bedrock",
			Model: haiku, Status: statuses[i%len(statuses)], RecordCount: 1000, Succeeded: 990, Failed: 10,
			InputTokens: 120000, OutputTokens: 34000, TTLDays: 30, CreatedAt: created, UpdatedAt: created,
			ExpiresAt: created.Add(30 * 24 * time.Hour)}
		if err := st.CreateJob(context.Background(), j); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	l, err := local.New(context.Background(), local.Options{Dir: dir, Owner: auth.Owner, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	h := l.MCP.Handler(auth.Owner)
	call := func() string {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_jobs","arguments":{"limit":50}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"isError":true`) {
			b.Fatalf("list_jobs: %d %s", w.Code, w.Body.String())
		}
		return w.Body.String()
	}
	if body := call(); !strings.Contains(body, fmt.Sprintf("01bench%019d", 9999)) || strings.Count(body, `\"job_id\"`)+strings.Count(body, `"job_id"`) < 50 {
		b.Fatalf("first page lacks the newest job or has under 50 jobs: %.500s", body)
	}
	var d []time.Duration
	for b.Loop() {
		t0 := time.Now()
		call()
		d = append(d, time.Since(t0))
	}
	slices.Sort(d)
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
