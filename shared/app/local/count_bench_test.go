package local_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
)

// A 5,000-record dry run, server side: validation, the chars/4 estimate, 400
// counts over HTTP to the simulator (CountTokens or count_tokens, 4 in
// flight) and the paths. The simulators answer at loopback speed, so this is
// the suite's own share of a dry run, not the provider's latency.
func BenchmarkDryRunCounted(b *testing.B) {
	l, err := local.New(context.Background(), local.Options{Dir: b.TempDir(), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Owner: func(*http.Request) (string, error) { return "bench", nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	tb := &toolCallBench{h: l.Handler()}
	recs, _ := variedRecords(5000)
	for _, m := range []string{haiku, claudeHaiku} {
		args, _ := json.Marshal(map[string]any{"model": m, "records": recs, "dry_run": true})
		b.Run(m, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tb.call(b, "submit_batch", string(args))
			}
		})
	}
}
