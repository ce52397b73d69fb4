package local_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/index"
)

// BenchmarkSearchIndex is search_index through a real MCP client against the
// local suite: the query embedded by the runtime simulator, then a top-10
// exact search in the S3 Vectors simulator over 10,000 × 1,024 vectors
// (loaded through the index port). p50/p99 per call. The index layer's
// BenchmarkS3VectorsQuery100k measures the search alone over 100,000.
//
//	go test ./shared/app/local/ -run '^$' -bench SearchIndex -benchtime 200x
func BenchmarkSearchIndex(b *testing.B) {
	const n, dim = 10_000, 1024
	ctx := context.Background()
	l, err := local.New(ctx, local.Options{Dir: b.TempDir(), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Owner: func(*http.Request) (string, error) { return "bench", nil }})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()
	ref := index.Ref{Owner: "bench", Name: "corpus"}
	if _, err := l.Vectors.Index.Open(ctx, ref, index.Spec{Dimension: dim, Metric: index.Cosine, Model: "amazon.titan-embed-text-v2:0"}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for start := 0; start < n; start += 500 {
		vecs := make([]index.Vector, 0, 500)
		for i := start; i < start+500; i++ {
			v := make([]float32, dim)
			for d := range v {
				v[d] = float32(r.NormFloat64())
			}
			vecs = append(vecs, index.Vector{Key: fmt.Sprintf("doc-%06d", i), Data: v, Metadata: map[string]any{"topic": fmt.Sprint(i % 7)}})
		}
		if err := l.Vectors.Index.Put(ctx, ref, vecs); err != nil {
			b.Fatal(err)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_index", Arguments: map[string]any{
			"index": "corpus", "query": fmt.Sprintf("weekly survey of lichen%d and basalt", i), "k": 10}})
		lat = append(lat, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatalf("search_index: %v %v", err, res)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
}
