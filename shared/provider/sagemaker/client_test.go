package sagemaker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdk "github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simsagemaker "github.com/mcpbatch/mcpbatch/shared/sim/sagemaker"
)

var quiet = slog.New(slog.NewJSONHandler(io.Discard, nil))

// newSimClient returns the adapter over the real SDK client pointed at a simulator.
func newSimClient(t testing.TB, knobs func(*simsagemaker.SageMakerSim)) (*Client, *simsagemaker.SageMakerSim) {
	t.Helper()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &simsagemaker.SageMakerSim{Log: quiet, Blobs: blobs}
	if knobs != nil {
		knobs(s)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.Close(); s.Close() })
	api := sdk.NewFromConfig(aws.Config{
		Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("simulated", "simulated", ""),
	}, func(o *sdk.Options) { o.BaseEndpoint = aws.String(srv.URL); o.HTTPClient = sim.HTTPClient() })
	c := New(api, quiet)
	// Tiny backoffs: the table checks decisions and counts, not waiting.
	c.Retry = Retry{MaxAttempts: 4, Base: time.Millisecond, Cap: 4 * time.Millisecond}
	return c, s
}

// TestRetryTable: every SageMaker error type against the simulator through the
// real SDK client: whether it is retried, how many calls the endpoint sees, and
// what the caller is told.
func TestRetryTable(t *testing.T) {
	tests := []struct {
		fault        string
		times        int // how many calls fail before the endpoint answers
		wantKind     string
		wantAttempts int
	}{
		{"ModelNotReadyException", 2, "", 3},
		{"InternalFailure", 2, "", 3},
		{"ServiceUnavailable", 2, "", 3},
		{"InternalDependencyException", 2, "", 3},
		{"ThrottlingException", 2, "", 3},
		{"ServiceUnavailable", 10, smsvc.KindRetryable, 4}, // gives up at MaxAttempts
		{"ModelError", 1, smsvc.KindModelError, 1},
		{"ValidationError", 1, smsvc.KindValidation, 1},
	}
	for _, tc := range tests {
		t.Run(tc.fault, func(t *testing.T) {
			c, s := newSimClient(t, nil)
			faults := make([]string, tc.times)
			for i := range faults {
				faults[i] = tc.fault
			}
			s.QueueFaults("ep", faults...)
			res, err := c.Invoke(context.Background(), smsvc.Invocation{Endpoint: "ep", Body: []byte(`{"a":1}`), ContentType: "application/json"})
			if tc.wantKind == "" {
				if err != nil {
					t.Fatalf("want success after retries, got %v", err)
				}
				if res.Attempts != tc.wantAttempts || s.Calls("ep") != tc.wantAttempts {
					t.Fatalf("attempts %d, endpoint calls %d, want %d", res.Attempts, s.Calls("ep"), tc.wantAttempts)
				}
				return
			}
			var ee *smsvc.EndpointError
			if !errors.As(err, &ee) {
				t.Fatalf("want an EndpointError, got %v", err)
			}
			if ee.Kind != tc.wantKind || ee.Attempts != tc.wantAttempts || s.Calls("ep") != tc.wantAttempts || ee.Code != tc.fault {
				t.Fatalf("got kind %s code %s attempts %d (endpoint saw %d), want %s/%s/%d", ee.Kind, ee.Code, ee.Attempts, s.Calls("ep"), tc.wantKind, tc.fault, tc.wantAttempts)
			}
			if tc.fault == "ModelError" && (ee.OriginalStatusCode != 500 || ee.OriginalMessage != "simulated model failure" || ee.LogStreamARN == "") {
				t.Errorf("model error details lost: %+v", ee)
			}
		})
	}
}

// TestDeadlineBoundsRetries: an endpoint that never recovers ends the call
// within the caller's deadline, without starting a backoff the deadline would cut.
func TestDeadlineBoundsRetries(t *testing.T) {
	c, s := newSimClient(t, func(s *simsagemaker.SageMakerSim) { s.Latency = 20 * time.Millisecond })
	c.Retry = Retry{MaxAttempts: 1000, Base: 40 * time.Millisecond, Cap: 160 * time.Millisecond}
	c.jitter = func() float64 { return 0.999 }
	faults := make([]string, 1000)
	for i := range faults {
		faults[i] = "ServiceUnavailable"
	}
	s.QueueFaults("ep", faults...)
	const deadline = 700 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := c.Invoke(ctx, smsvc.Invocation{Endpoint: "ep", Body: []byte("x"), ContentType: "text/plain"})
	elapsed := time.Since(start)
	var ee *smsvc.EndpointError
	if !errors.As(err, &ee) || (ee.Kind != smsvc.KindRetryable && ee.Kind != smsvc.KindDeadline) {
		t.Fatalf("want a retryable/deadline EndpointError, got %v", err)
	}
	if ee.Attempts < 2 || ee.Attempts != s.Calls("ep") {
		t.Fatalf("attempts %d, endpoint calls %d", ee.Attempts, s.Calls("ep"))
	}
	// A bound, not a speed check: the call must not outlive its deadline (plus scheduling slack).
	if elapsed > deadline+300*time.Millisecond {
		t.Fatalf("call took %v, deadline %v", elapsed, deadline)
	}
}

func TestBackoffIsCappedFullJitter(t *testing.T) {
	c := New(nil, quiet)
	r := Retry{MaxAttempts: 10, Base: 100 * time.Millisecond, Cap: time.Second}
	tests := []struct {
		attempt int
		jitter  float64
		want    time.Duration
	}{
		{1, 0.5, 50 * time.Millisecond},
		{2, 0.5, 100 * time.Millisecond},
		{3, 0.999, 399600 * time.Microsecond},
		{5, 1, time.Second}, // 1.6 s capped
		{40, 0.5, 500 * time.Millisecond},
		{3, 0, 0},
	}
	for _, tc := range tests {
		c.jitter = func() float64 { return tc.jitter }
		if got := c.backoff(r, tc.attempt); got != tc.want {
			t.Errorf("attempt %d jitter %v: %v, want %v", tc.attempt, tc.jitter, got, tc.want)
		}
	}
}

func TestResponseCap(t *testing.T) {
	c, _ := newSimClient(t, nil)
	_, err := c.Invoke(context.Background(), smsvc.Invocation{Endpoint: "ep", Body: []byte(`{"a":1}`), ContentType: "application/json", MaxResponseBytes: 10})
	var ee *smsvc.EndpointError
	if !errors.As(err, &ee) || ee.Kind != smsvc.KindTooLarge || ee.Limit != 10 || ee.Size <= 10 {
		t.Fatalf("got %v", err)
	}
}

func TestInvokeAsyncAgainstSimulator(t *testing.T) {
	tests := []struct {
		name    string
		in      smsvc.AsyncInvocation
		wantErr string
	}{
		{"inline body", smsvc.AsyncInvocation{Endpoint: "ep", InferenceID: "01jc3v9k2m4n5p6q7r8s9t0v1w", Body: []byte("x"), ContentType: "text/plain", RequestTTLS: 60, InvocationTimeoutS: 1}, ""},
		{"unknown endpoint", smsvc.AsyncInvocation{Endpoint: "nope", InferenceID: "id", Body: []byte("x")}, smsvc.KindValidation},
		{"ttl out of range", smsvc.AsyncInvocation{Endpoint: "ep", InferenceID: "id", Body: []byte("x"), RequestTTLS: 30}, smsvc.KindValidation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newSimClient(t, func(s *simsagemaker.SageMakerSim) { s.Endpoints = []string{"ep"} })
			acc, err := c.InvokeAsync(context.Background(), tc.in)
			if tc.wantErr != "" {
				var ee *smsvc.EndpointError
				if !errors.As(err, &ee) || ee.Kind != tc.wantErr {
					t.Fatalf("got %v, want kind %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || acc.InferenceID != tc.in.InferenceID || acc.OutputLocation == "" || acc.FailureLocation == "" {
				t.Fatalf("got %+v, %v", acc, err)
			}
		})
	}
}

// The simulator takes an async body inline (up to 128,000 bytes) or by
// InputLocation (up to 1,024 characters), exactly one of them, from its own
// rules, through the real SDK; the same bytes either way give the same
// notification and the same output object.
func TestInvokeAsyncBodyInlineOrByLocation(t *testing.T) {
	const endpoint = "ep"
	atLimit := bytes.Repeat([]byte("x"), job.SageMakerMaxInlineBody)
	long := func(n int) string { return "s3://in/" + strings.Repeat("k", n-len("s3://in/")) }
	refusals := []struct {
		name string
		in   smsvc.AsyncInvocation
		want string
	}{
		{"inline one byte over", smsvc.AsyncInvocation{Body: append(bytes.Clone(atLimit), 'x')}, "Body is over 128000 bytes"},
		{"both", smsvc.AsyncInvocation{Body: []byte("x"), InputLocation: "s3://in/body"}, "mutually exclusive"},
		{"neither", smsvc.AsyncInvocation{}, "one of Body or InputLocation is required"},
		{"location over 1,024 characters", smsvc.AsyncInvocation{InputLocation: long(job.SageMakerMaxInputLocation + 1)}, "over 1024 characters"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newSimClient(t, func(s *simsagemaker.SageMakerSim) { s.Endpoints = []string{endpoint} })
			tc.in.Endpoint, tc.in.InferenceID = endpoint, "refused"
			_, err := c.InvokeAsync(context.Background(), tc.in)
			var ee *smsvc.EndpointError
			if !errors.As(err, &ee) || ee.Kind != smsvc.KindValidation || !strings.Contains(ee.Message, tc.want) {
				t.Fatalf("got %v, want a validation error saying %q", err, tc.want)
			}
		})
	}
	t.Run("location of 1,024 characters is taken", func(t *testing.T) {
		c, _ := newSimClient(t, func(s *simsagemaker.SageMakerSim) { s.Endpoints = []string{endpoint} })
		in := smsvc.AsyncInvocation{Endpoint: endpoint, InferenceID: "long", InputLocation: long(job.SageMakerMaxInputLocation)}
		if _, err := c.InvokeAsync(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	})

	var mu sync.Mutex
	var got []smsvc.SageMakerEvent
	c, s := newSimClient(t, func(s *simsagemaker.SageMakerSim) {
		s.Endpoints = []string{endpoint}
		s.Emit = func(_ context.Context, ev []byte) {
			var e events.SNSEvent
			if err := json.Unmarshal(ev, &e); err != nil || len(e.Records) != 1 {
				t.Errorf("event %s: %v", ev, err)
				return
			}
			n, err := ParseNotification([]byte(e.Records[0].SNS.Message))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
		}
	})
	ctx := context.Background()
	const staged = "s3://in/at-limit"
	if _, err := s.Blobs.Put(ctx, staged, bytes.NewReader(atLimit), "text/plain"); err != nil {
		t.Fatal(err)
	}
	for _, in := range []smsvc.AsyncInvocation{
		{Endpoint: endpoint, InferenceID: "inline", Body: atLimit, ContentType: "text/plain"},
		{Endpoint: endpoint, InferenceID: "by-location", InputLocation: staged, ContentType: "text/plain"},
	} {
		if _, err := c.InvokeAsync(ctx, in); err != nil {
			t.Fatalf("%s: %v", in.InferenceID, err)
		}
	}
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d notifications, want 2", len(got))
	}
	outputs := make([][]byte, 2)
	for i, n := range got {
		if n.Status != smsvc.SageMakerCompleted || n.OutputLocation == "" {
			t.Fatalf("notification %+v", n)
		}
		rc, err := s.Blobs.Open(ctx, n.OutputLocation, 0)
		if err != nil {
			t.Fatal(err)
		}
		outputs[i], _ = io.ReadAll(rc)
		rc.Close()
		got[i].InferenceID, got[i].OutputLocation = "", ""
	}
	if !bytes.Equal(outputs[0], outputs[1]) || !bytes.Contains(outputs[0], []byte(`"input_bytes":128000`)) {
		t.Errorf("outputs differ or miss the body: %.120s / %.120s", outputs[0], outputs[1])
	}
	if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
		t.Errorf("notifications differ beyond id and location: %+v / %+v", got[0], got[1])
	}
}
