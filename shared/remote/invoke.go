package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// MaxPayload is a synchronous invocation's request and response limit: the
// Lambda quotas page says "6 MB each"; Lambda's own refusal counts in MiB.
// The stricter reading, 6,000,000 bytes, is taken.
const MaxPayload = 6_000_000

// invokeAttempts is how often a throttled invoke (429: the function did not
// run) is tried before the call reports the provider busy.
const invokeAttempts = 3

// Doer sends an HTTP request (aws.Config's HTTPClient, http.Client).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Invoker calls a function with Lambda's Invoke API (RequestResponse) over a
// SigV4-signed request. It stands in for the Lambda client, which would add
// 0.66 MB to the mcp bootstrap for this one operation.
type Invoker struct {
	// Function is the function's name or ARN.
	Function string
	// Endpoint is Lambda's base URL; "" is https://lambda.<Region>.amazonaws.com.
	Endpoint    string
	Region      string
	Credentials aws.CredentialsProvider
	HTTP        Doer
	// Backoff is the wait before try n (1-based) of a throttled invoke.
	Backoff func(n int) time.Duration
	// Log gets a failed invoke's detail (nil: slog.Default()).
	Log *slog.Logger
}

// NewInvoker is an Invoker with cfg's region, credentials and HTTP client;
// endpoint "" is Lambda's public one.
func NewInvoker(cfg aws.Config, function, endpoint string) *Invoker {
	inv := &Invoker{Function: function, Endpoint: endpoint, Region: cfg.Region, Credentials: cfg.Credentials, HTTP: http.DefaultClient}
	if cfg.HTTPClient != nil {
		inv.HTTP = cfg.HTTPClient
	}
	return inv
}

// InvokeError is a failed invoke. Ran says whether the function may have run
// (a function error, a 5xx, a broken connection): a create may then have been
// made.
type InvokeError struct {
	Function string
	Status   int    // HTTP status; 0 when no answer came
	Type     string // Lambda's error type (x-amzn-ErrorType) or the function's errorType
	Message  string
	Ran      bool
	// Throttled: Lambda refused with 429 (the function did not run).
	Throttled bool
	// Err is the transport's own error (a context deadline, a reset).
	Err error
	// Ours: Message is this package's own (it names nothing of the account),
	// so callers see it.
	Ours bool
}

func (e *InvokeError) Unwrap() error { return e.Err }

// Error is what callers may see (a dry run's warnings, a part's message):
// the status and error type only. Lambda's message and the function's own
// name the account, its roles and functions; Detail keeps them for the log.
func (e *InvokeError) Error() string {
	s := "invoke the providers function"
	if e.Status != 0 {
		s += fmt.Sprintf(": HTTP %d", e.Status)
	}
	if e.Type != "" {
		s += ": " + e.Type
	}
	switch {
	case e.Ours:
		return s + ": " + e.Message
	case e.Status == 0 && e.Type == "":
		s += ": no answer"
	}
	return s + " (the detail is in the log)"
}

// Detail is the whole failure, for the operator's log.
func (e *InvokeError) Detail() string {
	s := fmt.Sprintf("invoke %s", e.Function)
	if e.Status != 0 {
		s += fmt.Sprintf(": HTTP %d", e.Status)
	}
	if e.Type != "" {
		s += ": " + e.Type
	}
	return s + ": " + e.Message
}

// Call sends req and decodes the answer into resp. A failed invoke is
// logged whole; the error returned is caller-safe (InvokeError.Error).
func (inv *Invoker) Call(ctx context.Context, req Request, resp *Response) error {
	err := inv.call(ctx, req, resp)
	if ie := (*InvokeError)(nil); errors.As(err, &ie) {
		log := inv.Log
		if log == nil {
			log = slog.Default()
		}
		log.WarnContext(ctx, "invoke failed", "op", req.Op, "detail", ie.Detail())
	}
	return err
}

func (inv *Invoker) call(ctx context.Context, req Request, resp *Response) error {
	if d, ok := ctx.Deadline(); ok && req.Deadline.IsZero() {
		req.Deadline = d
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s: %w", req.Op, err)
	}
	if len(body) > MaxPayload {
		return &InvokeError{Function: inv.Function, Type: "RequestTooLarge", Ours: true,
			Message: fmt.Sprintf("%s: the request is %d bytes; a synchronous invocation takes at most %d", req.Op, len(body), MaxPayload)}
	}
	for n := 1; ; n++ {
		out, err := inv.invoke(ctx, body)
		var ie *InvokeError
		if errors.As(err, &ie) && ie.Throttled && n < invokeAttempts {
			wait := time.Duration(n) * 200 * time.Millisecond
			if inv.Backoff != nil {
				wait = inv.Backoff(n)
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(wait):
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(out, resp); err != nil {
			return &InvokeError{Function: inv.Function, Status: http.StatusOK, Ran: true, Message: fmt.Sprintf("%s: unreadable answer: %v", req.Op, err)}
		}
		return nil
	}
}

func (inv *Invoker) invoke(ctx context.Context, body []byte) ([]byte, error) {
	base := inv.Endpoint
	if base == "" {
		base = "https://lambda." + inv.Region + ".amazonaws.com"
	}
	u := strings.TrimSuffix(base, "/") + "/2015-03-31/functions/" + url.PathEscape(inv.Function) + "/invocations"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, &InvokeError{Function: inv.Function, Message: err.Error()}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("X-Amz-Invocation-Type", "RequestResponse")
	if inv.Credentials == nil {
		return nil, &InvokeError{Function: inv.Function, Message: "no AWS credentials to sign the invoke"}
	}
	creds, err := inv.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, &InvokeError{Function: inv.Function, Message: "AWS credentials: " + err.Error(), Err: err}
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, hr, hex.EncodeToString(sum[:]), "lambda", inv.Region, time.Now()); err != nil {
		return nil, &InvokeError{Function: inv.Function, Message: "sign: " + err.Error()}
	}
	res, err := inv.HTTP.Do(hr)
	if err != nil {
		// Sent or not, the function may have run.
		return nil, &InvokeError{Function: inv.Function, Ran: true, Message: err.Error(), Err: err}
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, MaxPayload+1<<20))
	if err != nil {
		return nil, &InvokeError{Function: inv.Function, Status: res.StatusCode, Ran: true, Message: "read the answer: " + err.Error()}
	}
	if res.StatusCode/100 != 2 {
		// Lambda's own refusal: {"Type":"User","message":"..."} and x-amzn-ErrorType.
		var e struct {
			Message  string `json:"message"`
			MessageC string `json:"Message"`
		}
		_ = json.Unmarshal(out, &e)
		msg := e.Message + e.MessageC
		if msg == "" {
			msg = strings.TrimSpace(string(out))
		}
		typ, _, _ := strings.Cut(res.Header.Get("X-Amzn-Errortype"), ":")
		return nil, &InvokeError{Function: inv.Function, Status: res.StatusCode, Type: typ, Message: msg,
			Throttled: res.StatusCode == http.StatusTooManyRequests, Ran: res.StatusCode >= 500}
	}
	if fe := res.Header.Get("X-Amz-Function-Error"); fe != "" {
		// The function failed (a crash, a timeout): it ran, maybe part way.
		var e struct {
			Message string `json:"errorMessage"`
			Type    string `json:"errorType"`
		}
		_ = json.Unmarshal(out, &e)
		if e.Message == "" {
			e.Message = strings.TrimSpace(string(out))
		}
		return nil, &InvokeError{Function: inv.Function, Status: res.StatusCode, Type: fe + " " + e.Type, Message: e.Message, Ran: true}
	}
	return out, nil
}
