package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdk "github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// endpointStub is a local real-time endpoint: it answers after latency with a
// small JSON body, as a SageMaker InvokeEndpoint would.
func endpointStub(latency time.Duration) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if latency > 0 {
			time.Sleep(latency)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Invoked-Production-Variant", "AllTraffic")
		_, _ = io.WriteString(w, `{"label":"positive","score":0.97}`)
	}))
}

// BenchmarkInvokeEndpointOverhead: what invoke_endpoint adds to the endpoint's
// own latency, measured per call as (call time - stub latency), reported as p50
// and p99. "service" calls the use case (validation, deadline, retry loop, the
// real SDK client over loopback HTTP); "mcp-tool" is a whole tools/call by an MCP
// client over Streamable HTTP.
//
//	go test ./shared/mcpserver/ -run '^$' -bench InvokeEndpointOverhead -benchmem
func BenchmarkInvokeEndpointOverhead(b *testing.B) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	for _, latency := range []time.Duration{0, 5 * time.Millisecond} {
		stub := endpointStub(latency)
		api := sdk.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")},
			func(o *sdk.Options) { o.BaseEndpoint = aws.String(stub.URL) })
		m := &smsvc.Service{Log: log, Runtime: sagemaker.New(api, log), Endpoints: []string{"ep"}}
		req := smsvc.InvokeRequest{Owner: "alice", Endpoint: "ep", Body: []byte(`{"inputs":"great product"}`), ContentType: "application/json"}

		b.Run(fmt.Sprintf("service/stub-%s", latency), func(b *testing.B) {
			measure(b, latency, func() error { _, err := m.Invoke(context.Background(), req); return err })
		})

		srv := &mcpserver.Server{Log: log, SageMaker: m, Features: mcpserver.Features{SageMaker: true}}
		mcpSrv := httptest.NewServer(srv.Handler(func(*http.Request) (string, error) { return "alice", nil }))
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: mcpSrv.URL, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		args := map[string]any{"endpoint_name": "ep", "body": map[string]any{"inputs": "great product"}, "content_type": "application/json"}
		b.Run(fmt.Sprintf("mcp-tool/stub-%s", latency), func(b *testing.B) {
			measure(b, latency, func() error {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "invoke_endpoint", Arguments: args})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %v", res.Content)
				}
				return err
			})
		})
		cs.Close()
		mcpSrv.Close()
		stub.Close()
	}
}

func measure(b *testing.B, latency time.Duration, call func() error) {
	var overhead []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		overhead = append(overhead, time.Since(start)-latency)
	}
	slices.Sort(overhead)
	pct := func(p float64) float64 {
		return float64(overhead[int(p*float64(len(overhead)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "overhead-p50-ms")
	b.ReportMetric(pct(0.99), "overhead-p99-ms")
}
