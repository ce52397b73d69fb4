package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// syntheticAccount is an account of n text models with lifecycle, access,
// profiles and quotas, the shape the refresh stores.
func syntheticAccount(n int) *model.Account {
	a := &model.Account{Region: "us-east-1", UpdatedAt: time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)}
	for i := range n {
		id := fmt.Sprintf("sim.model-%03d-v1:0", i)
		m := model.AccountModel{ID: id, Name: fmt.Sprintf("Sim Model %03d", i), Provider: "Simulated", Lifecycle: "ACTIVE",
			InferenceTypes: []string{"ON_DEMAND", "INFERENCE_PROFILE"}, Input: []string{"TEXT", "IMAGE"}, Output: []string{"TEXT"},
			Access: model.AccessGranted, Quotas: &model.Quotas{MinRecordsPerJob: 100, MaxRecordsPerJob: 50000, MaxRecordsPerFile: 50000,
				MaxInputFileBytes: 1 << 30, MaxJobBytes: 5 << 30, MaxConcurrentJobs: 20}}
		if i%5 == 0 {
			m.Lifecycle, m.LegacySince, m.EndOfLife = "LEGACY", "2026-09-01", "2027-03-01"
		}
		a.Bedrock = append(a.Bedrock, m)
		for _, g := range []string{"us", "global"} {
			a.Profiles = append(a.Profiles, model.AccountProfile{ID: g + "." + id, Type: "SYSTEM_DEFINED", Status: "ACTIVE", Models: []string{id}})
		}
	}
	return a
}

// BenchmarkListModels: a whole list_models tools/call by an MCP client over
// Streamable HTTP, over the embedded catalog merged with a 200-model account
// (the catalog's own rows plus 200 the account adds), reported as p50 and p99.
//
//	go test ./shared/mcpserver/ -run '^$' -bench ListModels -benchmem
func BenchmarkListModels(b *testing.B) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	cat := model.Default().Filter("", nil) // a copy: the overlay leaves Default alone
	cat.Apply(syntheticAccount(200), time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	n := len(cat.All())
	srv := &mcpserver.Server{Log: log, Models: cat}
	mcpSrv := httptest.NewServer(srv.Handler(func(*http.Request) (string, error) { return "alice", nil }))
	defer mcpSrv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: mcpSrv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.Run(fmt.Sprintf("mcp-tool/%d-models", n), func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime()
		defer func() { b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op") }()
		measure(b, 0, func() error {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_models", Arguments: map[string]any{}})
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %v", res.Content)
			}
			return err
		})
	})
}

// BenchmarkListModelsServer: the same call as a client that does not parse
// the answer sees it: one JSON-RPC tools/call POSTed to the stateless
// endpoint, the whole response read (the server's part of list_models:
// listing, output-schema validation, encoding, HTTP).
//
//	go test ./shared/mcpserver/ -run '^$' -bench ListModelsServer -benchmem
func BenchmarkListModelsServer(b *testing.B) {
	// The machine these run on is shared: wall times swing with its load, so
	// the process CPU time per call is reported beside them.
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	cat := model.Default().Filter("", nil)
	cat.Apply(syntheticAccount(200), time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	srv := &mcpserver.Server{Log: log, Models: cat}
	mcpSrv := httptest.NewServer(srv.Handler(func(*http.Request) (string, error) { return "alice", nil }))
	defer mcpSrv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_models","arguments":{}}}`
	call := func() (int, error) {
		req, _ := http.NewRequest(http.MethodPost, mcpSrv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return int(n), err
	}
	n, err := call()
	if err != nil || n < 1000 {
		b.Fatalf("tools/call: %d bytes, %v", n, err)
	}
	b.Run(fmt.Sprintf("http/%d-models", len(cat.All())), func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime()
		measure(b, 0, func() error { _, err := call(); return err })
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		b.ReportMetric(float64(n), "response-bytes")
	})
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
