package local_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// BenchmarkTasksGet: tasks/get over loopback HTTP against the make dev wiring
// (local store, the whole MCP handler), for a finished 1,000-record job whose
// result comes inline; p50 and p99 per call.
//
//	go test ./shared/app/local/ -run '^$' -bench TasksGet -benchtime 2000x
func BenchmarkTasksGet(b *testing.B) {
	tb := newToolCallBench(b, 1000)
	srv := httptest.NewServer(tb.h)
	b.Cleanup(srv.Close)
	body := []byte(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"` + tb.jobID + `","_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`)
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tasks/get")
		req.Header.Set("Mcp-Name", tb.jobID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"status":"completed"`)) {
			b.Fatalf("tasks/get: %d %s", resp.StatusCode, out)
		}
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
