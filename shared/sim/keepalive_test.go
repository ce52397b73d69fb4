package sim_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// Every simulator reads a refused oversized body to its end before it answers,
// so the client's kept-alive connection carries the refusal and then the next,
// valid request. Bodies are over net/http's own 256 KiB post-handler drain.
func TestSimulatorsKeepTheConnectionAfterARefusedBody(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	big := func(n int) string { return `{"x":"` + strings.Repeat("a", n) + `"}` }
	type req struct {
		method, path, body string
		header             map[string]string
		want               int
	}
	anthropic := map[string]string{"anthropic-version": "2023-06-01", "content-type": "application/json"}
	quotas := map[string]string{"X-Amz-Target": "ServiceQuotasV20190624.ListServiceQuotas", "Content-Type": "application/x-amz-json-1.1"}
	tests := []struct {
		name           string
		h              http.Handler
		refused, valid req
	}{
		{"bedrock runtime InvokeModel over its 25 MB", &sim.RuntimeSim{Log: quiet},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", big(25 << 20), nil, 400},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", `{"inputText":"x"}`, nil, 200}},
		{"bedrock runtime invalid JSON", &sim.RuntimeSim{Log: quiet},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", big(1<<20) + "}", nil, 400},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", `{"inputText":"x"}`, nil, 200}},
		{"bedrock runtime unknown operation", &sim.RuntimeSim{Log: quiet},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/nope", big(1 << 20), nil, 404},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", `{"inputText":"x"}`, nil, 200}},
		{"anthropic batch over MaxBytes", &sim.AnthropicSim{Log: quiet, MaxBytes: 1 << 20},
			req{"POST", "/v1/messages/batches", `{"requests":[` + big(2<<20) + `]}`, anthropic, 413},
			req{"GET", "/v1/messages/batches", "", anthropic, 200}},
		{"anthropic without a version header", &sim.AnthropicSim{Log: quiet},
			req{"POST", "/v1/messages/batches", big(1 << 20), nil, 400},
			req{"GET", "/v1/messages/batches", "", anthropic, 200}},
		{"s3 vectors over 20 MiB", &sim.S3VectorsSim{Log: quiet},
			req{"POST", "/PutVectors", big(21 << 20), nil, 413},
			req{"POST", "/CreateVectorBucket", `{"vectorBucketName":"kept-alive"}`, nil, 200}},
		{"sagemaker InvokeEndpoint over 6 MB", &sim.SageMakerSim{Log: quiet, Endpoints: []string{"ep"}},
			req{"POST", "/endpoints/ep/invocations", big(7 << 20), nil, 400},
			req{"POST", "/endpoints/ep/invocations", `{}`, nil, 200}},
		{"sagemaker unknown endpoint", &sim.SageMakerSim{Log: quiet, Endpoints: []string{"ep"}},
			req{"POST", "/endpoints/nope/invocations", big(1 << 20), nil, 400},
			req{"POST", "/endpoints/ep/invocations", `{}`, nil, 200}},
		{"bedrock CreateModelInvocationJob over 1 MB", &sim.BedrockSim{Log: quiet},
			req{"POST", "/model-invocation-job", big(2 << 20), nil, 400},
			req{"GET", "/model-invocation-jobs", "", nil, 200}},
		{"service quotas over 1 MB", &sim.QuotasSim{Account: sim.NewAccount()},
			req{"POST", "/", big(2 << 20), quotas, 400},
			req{"POST", "/", `{"ServiceCode":"bedrock"}`, quotas, 200}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			t.Cleanup(srv.Close)
			if c, ok := tc.h.(interface{ Close() error }); ok {
				t.Cleanup(func() { c.Close() })
			}
			client := srv.Client()
			var conns []string
			send := func(r req) {
				t.Helper()
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					GotConn: func(ci httptrace.GotConnInfo) { conns = append(conns, ci.Conn.LocalAddr().String()) },
				})
				hr, err := http.NewRequestWithContext(ctx, r.method, srv.URL+r.path, strings.NewReader(r.body))
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range r.header {
					hr.Header.Set(k, v)
				}
				resp, err := client.Do(hr)
				if err != nil {
					t.Fatalf("%s %s (%d bytes): %v", r.method, r.path, len(r.body), err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != r.want || resp.Close {
					t.Errorf("%s %s (%d bytes): %d (close %v), want %d on a kept connection: %.200s",
						r.method, r.path, len(r.body), resp.StatusCode, resp.Close, r.want, bytes.TrimSpace(b))
				}
			}
			send(tc.refused)
			send(tc.refused)
			send(tc.valid)
			if len(conns) != 3 || conns[1] != conns[0] || conns[2] != conns[0] {
				t.Errorf("connections %v: want one, reused", conns)
			}
		})
	}
}
