package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/remote"
	"github.com/mcpbatch/mcpbatch/shared/service"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

const (
	testFunction = "mcpbatch-providers"
	testRegion   = "us-east-1"
)

var testCreds = credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "token")

// lambdaAPI stands in for Lambda's Invoke API (a test double of
// POST /2015-03-31/functions/{name}/invocations): it checks the SigV4
// signature by signing the request again, then answers as the scenario says
// or runs the server.
type lambdaAPI struct {
	t        *testing.T
	srv      *remote.Server
	throttle atomic.Int64 // answer this many tries with 429 first
	fail     string       // "5xx", "function", "404": every try
	calls    atomic.Int64
}

func (l *lambdaAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	if r.URL.EscapedPath() != "/2015-03-31/functions/"+testFunction+"/invocations" || r.Method != http.MethodPost ||
		r.Header.Get("X-Amz-Invocation-Type") != "RequestResponse" {
		l.t.Errorf("invoke %s %s type %q", r.Method, r.URL.EscapedPath(), r.Header.Get("X-Amz-Invocation-Type"))
	}
	if err := verify(r, body); err != nil {
		w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":%q}`, err.Error())
		return
	}
	if l.throttle.Add(-1) >= 0 {
		w.Header().Set("X-Amzn-Errortype", "TooManyRequestsException:")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"Reason":"ReservedFunctionConcurrentInvocationLimitExceeded","Type":"User","message":"Rate Exceeded."}`)
		return
	}
	switch l.fail {
	case "5xx":
		w.Header().Set("X-Amzn-Errortype", "ServiceException")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"Type":"Service","message":"internal failure"}`)
		return
	case "404":
		w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"Type":"User","Message":"Function not found: arn:aws:lambda:us-east-1:123456789012:function:mcpbatch-providers"}`)
		return
	case "403":
		w.Header().Set("X-Amzn-Errortype", "AccessDeniedException")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"Type":"User","Message":"User: arn:aws:sts::123456789012:assumed-role/mcpbatch-mcp-role/mcpbatch-mcp is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:123456789012:function:mcpbatch-providers"}`)
		return
	case "function":
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		io.WriteString(w, `{"errorMessage":"2026-12-01T12:00:00.000Z Task timed out after 90.00 seconds","errorType":"Sandbox.Timedout"}`)
		return
	}
	var req remote.Request
	if err := json.Unmarshal(body, &req); err != nil {
		l.t.Errorf("request %s: %v", body, err)
	}
	resp, err := l.srv.Handle(r.Context(), req)
	if err != nil {
		l.t.Errorf("handle: %v", err)
	}
	json.NewEncoder(w).Encode(resp)
}

// verify signs a copy of r again and compares the Authorization header.
func verify(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/"+testRegion+"/lambda/aws4_request") {
		return fmt.Errorf("authorization %q is not SigV4 for lambda in %s", auth, testRegion)
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return err
	}
	cp, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	for k, v := range r.Header {
		if k != "Authorization" && k != "User-Agent" && k != "Accept-Encoding" && k != "Content-Length" {
			cp.Header[k] = v
		}
	}
	creds, _ := testCreds.Retrieve(context.Background())
	hash := fmt.Sprintf("%x", sha(body))
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, cp, hash, "lambda", testRegion, at); err != nil {
		return err
	}
	if cp.Header.Get("Authorization") != auth {
		return errors.New("the signature does not match the request")
	}
	return nil
}

// fakeCalls answer as set; the last request of each kind is kept.
type fakeCalls struct {
	err      error
	submit   service.BatchSubmit
	since    time.Time
	counted  job.Input
	params   job.Params
	stopped  string
	endpoint smsvc.EndpointState
	weights  []smsvc.VariantWeight
}

func (f *fakeCalls) Submit(_ context.Context, in service.BatchSubmit) (string, error) {
	f.submit = in
	if f.err != nil {
		return "", f.err
	}
	return "msgbatch_01", nil
}

func (f *fakeCalls) Get(_ context.Context, ref string) (service.BatchState, error) {
	return service.BatchState{Ref: ref, Status: "in_progress"}, f.err
}

func (f *fakeCalls) Stop(_ context.Context, ref string) error { f.stopped = ref; return f.err }

func (f *fakeCalls) FindSubmitted(_ context.Context, in service.BatchSubmit, since time.Time) (service.Found, error) {
	f.submit, f.since = in, since
	return service.Found{Ours: []string{"msgbatch_01"}, Unproven: []string{"msgbatch_02"}}, f.err
}

func (f *fakeCalls) CountTokens(_ context.Context, _ string, in job.Input, p job.Params) (int64, error) {
	f.counted, f.params = in, p
	return int64(len(in.Prompt)), f.err
}

func (f *fakeCalls) DescribeEndpoint(_ context.Context, name string) (smsvc.EndpointState, error) {
	return f.endpoint, f.err
}

func (f *fakeCalls) UpdateWeights(_ context.Context, name string, w []smsvc.VariantWeight) error {
	f.weights = w
	return f.err
}

func newRemote(t *testing.T, f *fakeCalls) (*lambdaAPI, remote.AnthropicCalls, remote.EndpointControl) {
	t.Helper()
	l := &lambdaAPI{t: t, srv: &remote.Server{Anthropic: f, Control: f}}
	ts := httptest.NewServer(l)
	t.Cleanup(ts.Close)
	inv := remote.NewInvoker(aws.Config{Region: testRegion, Credentials: testCreds}, testFunction, ts.URL)
	inv.Backoff = func(int) time.Duration { return time.Millisecond }
	inv.Log = slog.New(slog.DiscardHandler)
	return l, remote.AnthropicCalls{Caller: inv}, remote.EndpointControl{Caller: inv}
}

// Every call reaches the provider with what the caller gave, and its answer
// comes back whole.
func TestCallsRoundTrip(t *testing.T) {
	f := &fakeCalls{endpoint: smsvc.EndpointState{Name: "ep", Status: "InService", Async: true, LastModified: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Backlog: new(3.5), Variants: []smsvc.VariantState{{Name: "AllTraffic", CurrentWeight: 1, DesiredInstances: 2, Scaling: &smsvc.ScalingLimits{Min: 0, Max: 4}}}}}
	_, an, ctl := newRemote(t, f)
	ctx := context.Background()
	in := service.BatchSubmit{Name: "mcpbatch-j-1", ClientToken: "mcpbatch-j-1", Model: "claude-haiku-4-5", InputURI: "s3://b/input/j/part-1/records.jsonl",
		OutputURI: "s3://b/output/j/part-1/", Tags: map[string]string{"mcpbatch:job": "j"}, TimeoutHrs: 24, Records: 3, BetaHeaders: []string{"output-300k-2026-03-24"}}
	ref, err := an.Submit(ctx, in)
	if err != nil || ref != "msgbatch_01" || !reflect.DeepEqual(f.submit, in) {
		t.Fatalf("submit = %q, %v; provider saw %+v", ref, err, f.submit)
	}
	since := time.Date(2026, 12, 1, 9, 30, 0, 123, time.UTC)
	found, err := an.FindSubmitted(ctx, in, since)
	if err != nil || !reflect.DeepEqual(found, service.Found{Ours: []string{"msgbatch_01"}, Unproven: []string{"msgbatch_02"}}) || !f.since.Equal(since) {
		t.Fatalf("find = %+v, %v; since %v", found, err, f.since)
	}
	st, err := an.Get(ctx, "msgbatch_01")
	if err != nil || st != (service.BatchState{Ref: "msgbatch_01", Status: "in_progress"}) {
		t.Fatalf("get = %+v, %v", st, err)
	}
	if err := an.Stop(ctx, "msgbatch_02"); err != nil || f.stopped != "msgbatch_02" {
		t.Fatalf("stop: %v, provider stopped %q", err, f.stopped)
	}
	rec := job.Input{ID: "r1", Prompt: "count me", Messages: json.RawMessage(`[{"role":"user","content":"x"}]`)}
	p := job.Params{System: "terse", MaxTokens: 100, Temperature: new(0.2)}
	n, err := an.CountTokens(ctx, "claude-haiku-4-5", rec, p)
	if err != nil || n != 8 || !reflect.DeepEqual(f.counted, rec) || !reflect.DeepEqual(f.params, p) {
		t.Fatalf("count = %d, %v; provider saw %+v %+v", n, err, f.counted, f.params)
	}
	es, err := ctl.DescribeEndpoint(ctx, "ep")
	if err != nil || !reflect.DeepEqual(es, f.endpoint) {
		t.Fatalf("describe = %+v, %v", es, err)
	}
	w := []smsvc.VariantWeight{{Variant: "a", Weight: 0.9}, {Variant: "b", Weight: 0.1}}
	if err := ctl.UpdateWeights(ctx, "ep", w); err != nil || !reflect.DeepEqual(f.weights, w) {
		t.Fatalf("weights: %v, provider saw %v", err, f.weights)
	}
}

// Errors keep their text and the kinds the service tells apart, whether the
// provider or Lambda made them: busy parts stay queued, a create that may
// have been made is looked for before another is made, and an endpoint's
// refusal is worded by the tools.
func TestCallErrors(t *testing.T) {
	busy := errors.Join(service.ErrProviderBusy, errors.New("create message batch: anthropic busy (HTTP 529): Overloaded"))
	unknown := errors.Join(service.ErrSubmitUnknown, errors.New("create message batch: connection reset"))
	refused := &smsvc.EndpointError{Endpoint: "ep", Kind: smsvc.KindValidation, Code: "ValidationException", Message: "Could not find endpoint", Attempts: 1}
	cases := []struct {
		name        string
		provErr     error
		lambda      string
		throttle    int64
		op          string // submit | get | describe
		wantText    string
		wantBusy    bool
		wantUnknown bool
		wantTries   int64
	}{
		{name: "provider busy", provErr: busy, op: "submit", wantText: busy.Error(), wantBusy: true, wantTries: 1},
		{name: "provider may have created", provErr: unknown, op: "submit", wantText: unknown.Error(), wantUnknown: true, wantTries: 1},
		{name: "plain refusal", provErr: errors.New("create message batch: HTTP 400: max_tokens: too large"), op: "submit", wantText: "HTTP 400: max_tokens: too large", wantTries: 1},
		{name: "endpoint refusal", provErr: refused, op: "describe", wantText: refused.Error(), wantTries: 1},
		{name: "throttled then served", throttle: 2, op: "get", wantText: "", wantTries: 3},
		{name: "throttled throughout", throttle: 99, op: "submit", wantText: "HTTP 429: TooManyRequestsException", wantBusy: true, wantTries: 3},
		{name: "Lambda 5xx on a create", lambda: "5xx", op: "submit", wantText: "HTTP 500: ServiceException", wantUnknown: true, wantTries: 1},
		{name: "Lambda 5xx on a read", lambda: "5xx", op: "get", wantText: "HTTP 500: ServiceException", wantTries: 1},
		{name: "function timed out on a create", lambda: "function", op: "submit", wantText: "Unhandled Sandbox.Timedout", wantUnknown: true, wantTries: 1},
		{name: "no such function on a create: stays queued for the reconciler", lambda: "404", op: "submit", wantText: "HTTP 404: ResourceNotFoundException", wantBusy: true, wantTries: 1},
		{name: "no such function on a read", lambda: "404", op: "get", wantText: "HTTP 404: ResourceNotFoundException", wantTries: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeCalls{err: c.provErr}
			l, an, ctl := newRemote(t, f)
			l.fail = c.lambda
			l.throttle.Store(c.throttle)
			ctx := context.Background()
			var err error
			switch c.op {
			case "submit":
				_, err = an.Submit(ctx, service.BatchSubmit{Name: "p"})
			case "get":
				_, err = an.Get(ctx, "msgbatch_01")
			case "describe":
				_, err = ctl.DescribeEndpoint(ctx, "ep")
			}
			if got := l.calls.Load(); got != c.wantTries {
				t.Errorf("%d invokes, want %d", got, c.wantTries)
			}
			if c.wantText == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantText) {
				t.Fatalf("err = %v, want it to say %q", err, c.wantText)
			}
			if c.op == "submit" && errors.Is(err, service.ErrSubmitInFlight) != (c.lambda == "5xx" || c.lambda == "function") {
				t.Errorf("in flight %v: a create the function may still be making keeps its lease: %v", errors.Is(err, service.ErrSubmitInFlight), err)
			}
			if errors.Is(err, service.ErrProviderBusy) != c.wantBusy || errors.Is(err, service.ErrSubmitUnknown) != c.wantUnknown {
				t.Errorf("busy %v unknown %v, want %v %v: %v", errors.Is(err, service.ErrProviderBusy), errors.Is(err, service.ErrSubmitUnknown), c.wantBusy, c.wantUnknown, err)
			}
			var ee *smsvc.EndpointError
			if (c.provErr == refused) != errors.As(err, &ee) || (ee != nil && !reflect.DeepEqual(ee, refused)) {
				t.Errorf("endpoint error = %+v, want %+v", ee, c.provErr)
			}
		})
	}
}

// A request over a synchronous invocation's limit is refused before it is
// sent, naming the size and the limit.
func TestRequestTooLarge(t *testing.T) {
	l, an, _ := newRemote(t, &fakeCalls{})
	_, err := an.CountTokens(context.Background(), "claude-haiku-4-5", job.Input{ID: "big", Prompt: strings.Repeat("x", remote.MaxPayload)}, job.Params{})
	if err == nil || !strings.Contains(err.Error(), "record big") || !strings.Contains(err.Error(), fmt.Sprintf("at most %d", remote.MaxPayload)) {
		t.Fatalf("err = %v", err)
	}
	if l.calls.Load() != 0 {
		t.Errorf("%d invokes sent", l.calls.Load())
	}
}

// Without an Anthropic key the calls say where to put it and are busy (the
// reconciler, which reads the key itself, submits the part); unknown ops are
// refused.
func TestServerRefuses(t *testing.T) {
	srv := &remote.Server{}
	ctx := context.Background()
	r, _ := srv.Handle(ctx, remote.Request{Op: remote.OpSubmit, Submit: &service.BatchSubmit{}})
	if r.Error == nil || !strings.Contains(r.Error.Message, "AnthropicKeySecretArn") || !r.Error.Busy {
		t.Errorf("no key: %+v", r.Error)
	}
	r, _ = (&remote.Server{Anthropic: &fakeCalls{}}).Handle(ctx, remote.Request{Op: "anthropic.delete_everything"})
	if r.Error == nil || !strings.Contains(r.Error.Message, `unknown op "anthropic.delete_everything"`) {
		t.Errorf("unknown op: %+v", r.Error)
	}
	r, _ = (&remote.Server{Anthropic: &fakeCalls{}}).Handle(ctx, remote.Request{Op: remote.OpCountTokens})
	if r.Error == nil || !strings.Contains(r.Error.Message, "no input and params") {
		t.Errorf("missing field: %+v", r.Error)
	}
}

// The samples in events/providers are requests the server takes as they are.
func TestEventSamples(t *testing.T) {
	paths, err := filepath.Glob("../../events/providers/*.json")
	if err != nil || len(paths) < 2 {
		t.Fatalf("samples %v: %v", paths, err)
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var req remote.Request
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		f := &fakeCalls{endpoint: smsvc.EndpointState{Name: "sentiment-async"}}
		resp, _ := (&remote.Server{Anthropic: f, Control: f}).Handle(context.Background(), req)
		if resp.Error != nil || (resp.Tokens == 0 && resp.EndpointState == nil) {
			t.Errorf("%s: answer %+v", p, resp)
		}
	}
}

// blockingCalls wait for their context to end.
type blockingCalls struct{ fakeCalls }

func (b *blockingCalls) Submit(ctx context.Context, _ service.BatchSubmit) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// A call ends when its caller stops waiting, and a timeout stays a timeout
// across the hop, whether the caller's deadline or the function's passed.
func TestDeadlines(t *testing.T) {
	srv := &remote.Server{Anthropic: &blockingCalls{}}
	r, _ := srv.Handle(context.Background(), remote.Request{Op: remote.OpSubmit, Submit: &service.BatchSubmit{}, Deadline: time.Now().Add(20 * time.Millisecond)})
	if r.Error == nil || !r.Error.Deadline {
		t.Fatalf("the server ran past the caller's deadline: %+v", r.Error)
	}
	l, an, _ := newRemote(t, &fakeCalls{})
	l.srv = &remote.Server{Anthropic: &blockingCalls{}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := an.Submit(ctx, service.BatchSubmit{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
}

// Lambda's own refusals name the account, roles and functions: callers (a
// dry run's warnings, a part's message) get the status and error type only,
// and the whole refusal goes to the log.
func TestHopErrorsAreCallerSafe(t *testing.T) {
	for _, fail := range []string{"403", "404", "function"} {
		t.Run(fail, func(t *testing.T) {
			l, an, _ := newRemote(t, &fakeCalls{})
			l.fail = fail
			var logs bytes.Buffer
			an.Caller.(*remote.Invoker).Log = slog.New(slog.NewTextHandler(&logs, nil))
			_, err := an.CountTokens(context.Background(), "claude-haiku-4-5", job.Input{Prompt: "q"}, job.Params{MaxTokens: 10})
			if err == nil {
				t.Fatal("no error")
			}
			for _, secret := range []string{"123456789012", "arn:", "mcpbatch-mcp-role", "Task timed out"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("caller-facing error %q holds %q", err, secret)
				}
			}
			if want := map[string]string{"403": "123456789012", "404": "123456789012", "function": "Task timed out"}[fail]; !strings.Contains(logs.String(), want) {
				t.Errorf("log %q does not keep the detail %q", logs.String(), want)
			}
		})
	}
}
