package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	rt "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go/middleware"

	"github.com/mcpbatch/mcpbatch/shared/sim"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	simvectors "github.com/mcpbatch/mcpbatch/shared/sim/s3vectors"
	simsagemaker "github.com/mcpbatch/mcpbatch/shared/sim/sagemaker"
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
		{"bedrock runtime InvokeModel over its 25 MB", &simbedrock.RuntimeSim{Log: quiet},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", big(25 << 20), nil, 400},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", `{"inputText":"x"}`, nil, 200}},
		{"bedrock runtime invalid JSON", &simbedrock.RuntimeSim{Log: quiet},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", big(1<<20) + "}", nil, 400},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", `{"inputText":"x"}`, nil, 200}},
		{"bedrock runtime unknown operation", &simbedrock.RuntimeSim{Log: quiet},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/nope", big(1 << 20), nil, 404},
			req{"POST", "/model/amazon.titan-embed-text-v2:0/invoke", `{"inputText":"x"}`, nil, 200}},
		{"anthropic batch over MaxBytes", &simanthropic.AnthropicSim{Log: quiet, MaxBytes: 1 << 20},
			req{"POST", "/v1/messages/batches", `{"requests":[` + big(2<<20) + `]}`, anthropic, 413},
			req{"GET", "/v1/messages/batches", "", anthropic, 200}},
		{"anthropic without a version header", &simanthropic.AnthropicSim{Log: quiet},
			req{"POST", "/v1/messages/batches", big(1 << 20), nil, 400},
			req{"GET", "/v1/messages/batches", "", anthropic, 200}},
		{"s3 vectors over 20 MiB", &simvectors.S3VectorsSim{Log: quiet},
			req{"POST", "/PutVectors", big(21 << 20), nil, 413},
			req{"POST", "/CreateVectorBucket", `{"vectorBucketName":"kept-alive"}`, nil, 200}},
		{"sagemaker InvokeEndpoint over 6 MB", &simsagemaker.SageMakerSim{Log: quiet, Endpoints: []string{"ep"}},
			req{"POST", "/endpoints/ep/invocations", big(7 << 20), nil, 400},
			req{"POST", "/endpoints/ep/invocations", `{}`, nil, 200}},
		{"sagemaker unknown endpoint", &simsagemaker.SageMakerSim{Log: quiet, Endpoints: []string{"ep"}},
			req{"POST", "/endpoints/nope/invocations", big(1 << 20), nil, 400},
			req{"POST", "/endpoints/ep/invocations", `{}`, nil, 200}},
		{"bedrock CreateModelInvocationJob over 1 MB", &simbedrock.BedrockSim{Log: quiet},
			req{"POST", "/model-invocation-job", big(2 << 20), nil, 400},
			req{"GET", "/model-invocation-jobs", "", nil, 200}},
		{"service quotas over 1 MB", &simbedrock.QuotasSim{Account: simbedrock.NewAccount()},
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

// holdWrite holds the connection write that ends with tail until release: the
// write of a request's last body byte, so the answer arrives first.
type holdWrite struct {
	tail    []byte
	held    atomic.Bool
	release chan struct{}
	once    sync.Once
}

func (h *holdWrite) let() { h.once.Do(func() { close(h.release) }) }

type holdConn struct {
	net.Conn
	hold *atomic.Pointer[holdWrite]
}

func (c *holdConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if h := c.hold.Load(); h != nil && bytes.HasSuffix(p, h.tail) && h.held.CompareAndSwap(false, true) {
		select {
		case <-h.release:
		case <-time.After(10 * time.Second): // never a deadlock, whatever the SDK does
		}
	}
	return n, err
}

// The SDK's clients keep their connection when the answer outruns the client's
// own write loop, the order a loaded machine produces by chance (the flake of
// TestRuntimeEmbeddingRefusals/Cohere_96_texts): each request's last body
// write is held until the SDK has had the response and closed the request
// body, then the write loop goes on. A refusal, then two embeddings of 96
// texts, all on one connection.
func TestSDKClientKeepsItsConnectionWhenTheAnswerComesFirst(t *testing.T) {
	s := &simbedrock.RuntimeSim{Log: slog.New(slog.DiscardHandler)}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var hold atomic.Pointer[holdWrite]
	inner := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		var d net.Dialer
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &holdConn{Conn: c, hold: &hold}, nil
		}
	})
	// Innermost in the deserialize step: runs once the SDK's HTTP handler has
	// returned, i.e. after it closed the request body.
	release := middleware.DeserializeMiddlewareFunc("releaseHeldWrite", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleDeserialize(ctx, in)
		if h := hold.Load(); h != nil {
			h.let()
		}
		return out, md, err
	})
	c := rt.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *rt.Options) {
			o.BaseEndpoint, o.RetryMaxAttempts, o.HTTPClient = aws.String(url), 1, sim.GuardBody(inner)
			o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error { return st.Deserialize.Add(release, middleware.After) })
		})
	texts := make([]string, 96)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d", i)
	}
	b, _ := json.Marshal(map[string]any{"input_type": "search_query", "texts": texts})
	calls := []struct{ model, body, wantErr string }{
		{"amazon.titan-embed-text-v2:0", `{"inputText":"x","dimensions":300}`, "#/dimensions: 300 is not a valid enum value"},
		{"cohere.embed-english-v3", string(b), ""},
		{"cohere.embed-english-v3", string(b), ""},
	}
	var conns []string
	for i, call := range calls {
		h := &holdWrite{tail: []byte(call.body[len(call.body)-16:]), release: make(chan struct{})}
		hold.Store(h)
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(ci httptrace.GotConnInfo) { conns = append(conns, ci.Conn.LocalAddr().String()) },
		})
		out, err := c.InvokeModel(ctx, &rt.InvokeModelInput{ModelId: aws.String(call.model), Body: []byte(call.body), ContentType: aws.String("application/json")})
		switch {
		case call.wantErr != "":
			if got := validationMessage(t, err); !strings.Contains(got, call.wantErr) {
				t.Errorf("call %d: message %q, want %q", i, got, call.wantErr)
			}
		case err != nil:
			t.Fatalf("call %d: %v", i, err)
		case !bytes.Contains(out.Body, []byte(`"embeddings"`)):
			t.Errorf("call %d: body %.100s", i, out.Body)
		}
		if !h.held.Load() {
			t.Fatalf("call %d: the last body write was not held; the test no longer sets the order it is about", i)
		}
	}
	if len(conns) != len(calls) || conns[1] != conns[0] || conns[2] != conns[0] {
		t.Errorf("connections %v: want one, reused", conns)
	}
}
