// Package sagemaker adapts the SageMaker runtime API (aws-sdk-go-v2
// sagemakerruntime) to the service's SageMakerRuntime port: InvokeEndpointAsync,
// and InvokeEndpoint with its own retry policy (see endpointError), plus the parser of the
// async inference SNS notifications.
package sagemaker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// API is the part of the SageMaker runtime client the adapter calls.
type API interface {
	InvokeEndpointAsync(ctx context.Context, in *sdk.InvokeEndpointAsyncInput, opts ...func(*sdk.Options)) (*sdk.InvokeEndpointAsyncOutput, error)
	InvokeEndpoint(ctx context.Context, in *sdk.InvokeEndpointInput, opts ...func(*sdk.Options)) (*sdk.InvokeEndpointOutput, error)
}

// Retry is the real-time retry policy: capped exponential backoff with full jitter.
type Retry struct {
	MaxAttempts int           // including the first; default 5
	Base        time.Duration // first backoff ceiling; default 100 ms
	Cap         time.Duration // largest backoff ceiling; default 2 s
}

// Client implements smsvc.SageMakerRuntime.
type Client struct {
	api   API
	Retry Retry
	Log   *slog.Logger
	// jitter returns a value in [0, 1); tests may pin it.
	jitter func() float64
}

var _ smsvc.SageMakerRuntime = (*Client)(nil)

// New wraps a SageMaker runtime client.
func New(api API, log *slog.Logger) *Client {
	if log == nil {
		log = slog.Default()
	}
	return &Client{api: api, Log: log, jitter: rand.Float64}
}

// InvokeAsync queues one async inference. The SDK's standard retryer handles
// transport faults here: a repeated request carries the same InferenceId, and a
// duplicate notification changes nothing.
func (c *Client) InvokeAsync(ctx context.Context, in smsvc.AsyncInvocation) (smsvc.AsyncAccepted, error) {
	req := &sdk.InvokeEndpointAsyncInput{
		EndpointName:     aws.String(in.Endpoint),
		InferenceId:      aws.String(in.InferenceID),
		ContentType:      str(in.ContentType),
		Accept:           str(in.Accept),
		CustomAttributes: str(in.CustomAttributes),
		InputLocation:    str(in.InputLocation),
	}
	if len(in.Body) > 0 {
		req.Body = in.Body
	}
	if in.InvocationTimeoutS > 0 {
		req.InvocationTimeoutSeconds = aws.Int32(int32(in.InvocationTimeoutS))
	}
	if in.RequestTTLS > 0 {
		req.RequestTTLSeconds = aws.Int32(int32(in.RequestTTLS))
	}
	out, err := c.api.InvokeEndpointAsync(ctx, req)
	if err != nil {
		return smsvc.AsyncAccepted{}, endpointError(in.Endpoint, err, 1)
	}
	return smsvc.AsyncAccepted{
		InferenceID:     aws.ToString(out.InferenceId),
		OutputLocation:  aws.ToString(out.OutputLocation),
		FailureLocation: aws.ToString(out.FailureLocation),
	}, nil
}

// noRetry turns the SDK's retryer off for one call: Invoke owns the policy, and
// two nested retry loops would multiply attempts past the deadline.
func noRetry(o *sdk.Options) { o.Retryer = aws.NopRetryer{} }

// Invoke calls a real-time endpoint. ModelNotReadyException, InternalFailure,
// ServiceUnavailable, InternalDependencyException, throttling and transport faults
// are retried with capped exponential backoff and full jitter while ctx allows
// another attempt; ModelError, ValidationError and everything else are not.
// The SDK reads the response body whole and closes it, on success and on error.
func (c *Client) Invoke(ctx context.Context, in smsvc.Invocation) (smsvc.InvocationResult, error) {
	req := &sdk.InvokeEndpointInput{
		EndpointName:  aws.String(in.Endpoint),
		Body:          in.Body,
		ContentType:   str(in.ContentType),
		Accept:        str(in.Accept),
		TargetModel:   str(in.TargetModel),
		TargetVariant: str(in.TargetVariant),
	}
	r := c.policy()
	for attempt := 1; ; attempt++ {
		out, err := c.api.InvokeEndpoint(ctx, req, noRetry)
		if err == nil {
			if in.MaxResponseBytes > 0 && len(out.Body) > in.MaxResponseBytes {
				return smsvc.InvocationResult{}, &smsvc.EndpointError{
					Endpoint: in.Endpoint, Kind: smsvc.KindTooLarge, Code: "ResponseTooLarge", Attempts: attempt,
					Message: fmt.Sprintf("response of %d bytes is over the %d-byte cap", len(out.Body), in.MaxResponseBytes),
					Limit:   in.MaxResponseBytes, Size: len(out.Body),
				}
			}
			return smsvc.InvocationResult{
				Body: out.Body, ContentType: aws.ToString(out.ContentType),
				InvokedVariant: aws.ToString(out.InvokedProductionVariant), Attempts: attempt,
			}, nil
		}
		ee := endpointError(in.Endpoint, err, attempt)
		if ee.Kind != smsvc.KindRetryable || attempt >= r.MaxAttempts {
			return smsvc.InvocationResult{}, ee
		}
		wait := c.backoff(r, attempt)
		// Do not start a wait that the deadline would cut short: report the last error now.
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return smsvc.InvocationResult{}, ee
		}
		c.Log.InfoContext(ctx, "retrying SageMaker invoke", "endpoint", in.Endpoint, "attempt", attempt, "code", ee.Code, "backoff_ms", wait.Milliseconds())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			ee.Kind = smsvc.KindDeadline
			return smsvc.InvocationResult{}, ee
		case <-t.C:
		}
	}
}

func (c *Client) policy() Retry {
	r := c.Retry
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 5
	}
	if r.Base <= 0 {
		r.Base = 100 * time.Millisecond
	}
	if r.Cap <= 0 {
		r.Cap = 2 * time.Second
	}
	return r
}

// backoff is full jitter: uniform in [0, min(cap, base·2^(attempt-1))).
func (c *Client) backoff(r Retry, attempt int) time.Duration {
	ceil := r.Base << min(attempt-1, 30)
	if ceil <= 0 || ceil > r.Cap {
		ceil = r.Cap
	}
	j := c.jitter
	if j == nil {
		j = rand.Float64
	}
	return time.Duration(j() * float64(ceil))
}

// EndpointError classifies an SDK error of any SageMaker API (the control
// plane's adapter words its refusals the same way).
func EndpointError(endpoint string, err error) error { return endpointError(endpoint, err, 1) }

// endpointError classifies an SDK error: throttling and 5xx answers are worth a
// retry; a ModelError (the container's own answer) and validation errors are not.
func endpointError(endpoint string, err error, attempt int) *smsvc.EndpointError {
	ee := &smsvc.EndpointError{Endpoint: endpoint, Kind: smsvc.KindOther, Attempts: attempt, Message: err.Error()}
	var api smithy.APIError
	if errors.As(err, &api) {
		ee.Code, ee.Message = api.ErrorCode(), api.ErrorMessage()
	}
	var me *types.ModelError
	var ve *types.ValidationError
	var nr *types.ModelNotReadyException
	var inf *types.InternalFailure
	var su *types.ServiceUnavailable
	var idep *types.InternalDependencyException
	var re *smithyhttp.ResponseError
	var send *smithyhttp.RequestSendError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		ee.Kind, ee.Code = smsvc.KindDeadline, "DeadlineExceeded"
	case errors.As(err, &me):
		ee.Kind = smsvc.KindModelError
		ee.OriginalStatusCode = int(aws.ToInt32(me.OriginalStatusCode))
		ee.OriginalMessage = aws.ToString(me.OriginalMessage)
		ee.LogStreamARN = aws.ToString(me.LogStreamArn)
	case errors.As(err, &ve):
		ee.Kind = smsvc.KindValidation
	case errors.As(err, &nr), errors.As(err, &inf), errors.As(err, &su), errors.As(err, &idep):
		ee.Kind = smsvc.KindRetryable
	case ee.Code == "ThrottlingException" || ee.Code == "Throttling" || ee.Code == "TooManyRequestsException":
		ee.Kind = smsvc.KindRetryable
	case errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusTooManyRequests || re.HTTPStatusCode() == http.StatusServiceUnavailable):
		ee.Kind = smsvc.KindRetryable
	case errors.As(err, &send):
		ee.Kind, ee.Code = smsvc.KindRetryable, "RequestSendError"
	}
	if ee.Code == "" {
		ee.Code = "Error"
	}
	return ee
}

func str(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
