// Package sagemaker runs SageMaker endpoints: asynchronous invocations
// (InvokeEndpointAsync) tracked as one-record jobs that SNS notifications settle,
// with a reconciler for notifications that never came, and real-time
// InvokeEndpoint calls with retries inside a deadline. Endpoints are allowed by
// name at deploy time.
package sagemaker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// SageMaker's words for an async invocation's state. The notification's
// invocationStatus is Completed or Failed; Accepted is ours for "InvokeEndpointAsync
// answered 202 and queued the request" (SageMaker has no status API for it).
const (
	SageMakerAccepted  = "Accepted"
	SageMakerCompleted = "Completed"
	SageMakerFailed    = "Failed"
)

var sageMakerOutcomes = map[string]job.ProviderOutcome{
	SageMakerAccepted: {Status: job.StatusSubmitted},
	// One record, stored by the event handler itself: no ingest step.
	SageMakerCompleted: {Status: job.StatusCompleted, Ended: true, Final: job.StatusCompleted},
	SageMakerFailed:    {Status: job.StatusFailed, Ended: true, Final: job.StatusFailed},
}

// SageMakerOutcome maps a SageMaker invocationStatus onto the neutral model.
func SageMakerOutcome(s string) (job.ProviderOutcome, bool) {
	o, ok := sageMakerOutcomes[s]
	return o, ok
}

// Defaults of a Service's zero fields.
const (
	DefaultSageMakerDeadline         = 25 * time.Second
	DefaultSageMakerMaxResponseBytes = 1 << 20
)

// SageMakerRuntime is the SageMaker runtime API (provider/sagemaker implements it).
type SageMakerRuntime interface {
	InvokeAsync(ctx context.Context, in AsyncInvocation) (AsyncAccepted, error)
	// Invoke calls a real-time endpoint, retrying what is worth retrying until ctx ends.
	Invoke(ctx context.Context, in Invocation) (InvocationResult, error)
}

// AsyncInvocation is one InvokeEndpointAsync request.
type AsyncInvocation struct {
	Endpoint           string
	InferenceID        string
	Body               []byte // inline body (≤ job.SageMakerMaxInlineBody), or
	InputLocation      string // s3:// URI of the body
	ContentType        string
	Accept             string
	CustomAttributes   string
	InvocationTimeoutS int // 0: the endpoint's default
	RequestTTLS        int // 0: SageMaker's default (6 h)
}

// AsyncAccepted is InvokeEndpointAsync's answer.
type AsyncAccepted struct {
	InferenceID     string
	OutputLocation  string
	FailureLocation string
}

// Invocation is one real-time InvokeEndpoint request.
type Invocation struct {
	Endpoint      string
	Body          []byte
	ContentType   string
	Accept        string
	TargetModel   string
	TargetVariant string
	// MaxResponseBytes: a bigger response is an EndpointError of kind KindTooLarge.
	MaxResponseBytes int
}

// InvocationResult is a real-time endpoint's answer.
type InvocationResult struct {
	Body           []byte
	ContentType    string
	InvokedVariant string
	Attempts       int
}

// Kinds of EndpointError.
const (
	KindModelError = "model_error" // the model container answered an error: never retried
	KindValidation = "validation"  // SageMaker refused the request: never retried
	KindRetryable  = "retryable"   // still failing when the attempts or the deadline ran out
	KindDeadline   = "deadline"    // the overall deadline ended the call
	KindTooLarge   = "too_large"   // the response is over MaxResponseBytes
	KindOther      = "other"       // anything else (access denied, unknown endpoint...)
)

// EndpointError is a SageMaker endpoint failure in provider-neutral terms; the
// MCP layer turns it into the tool error text.
type EndpointError struct {
	Endpoint string
	Kind     string
	Code     string // SageMaker's error code (service.ModelError, ServiceUnavailable...)
	Message  string
	Attempts int
	// service.ModelError details: the container's own status, message and log stream.
	OriginalStatusCode int
	OriginalMessage    string
	LogStreamARN       string
	// Limit and Size describe a KindTooLarge response.
	Limit, Size int
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("sagemaker endpoint %s: %s: %s: %s (after %d attempts)", e.Endpoint, e.Kind, e.Code, e.Message, e.Attempts)
}

// AsyncRequest is invoke_endpoint_async as a user sends it.
type AsyncRequest struct {
	Owner              string
	Endpoint           string
	Body               []byte
	HasBody            bool
	InputURI           string
	ContentType        string
	Accept             string
	CustomAttributes   string
	InvocationTimeoutS int
	RequestTTLS        int
	TTLDays            int
	// Notify is where the invocation's end is announced (checked by the caller).
	Notify *job.Notify
}

// InvokeRequest is invoke_endpoint as a user sends it.
type InvokeRequest struct {
	Owner         string
	Endpoint      string
	Body          []byte
	ContentType   string
	Accept        string
	TargetModel   string
	TargetVariant string
}

// InvokeResult is what invoke_endpoint returns.
type InvokeResult struct {
	InvocationResult
	Latency time.Duration
}

// InvokeAsync starts an async inference and returns its job at once. The job is
// stored before SageMaker is called, so a notification that overtakes the reply
// still finds it.
func (m *Service) InvokeAsync(ctx context.Context, req AsyncRequest) (*job.Job, error) {
	if err := m.validateAsync(&req); err != nil {
		return nil, err
	}
	now := m.Clock.Now()
	id := job.NewID(now)
	if req.InvocationTimeoutS == 0 {
		req.InvocationTimeoutS = m.InvocationTimeouts[req.Endpoint]
	}
	inv := AsyncInvocation{
		Endpoint: req.Endpoint, InferenceID: id, ContentType: req.ContentType, Accept: req.Accept,
		CustomAttributes: req.CustomAttributes, InvocationTimeoutS: req.InvocationTimeoutS, RequestTTLS: req.RequestTTLS,
		InputLocation: req.InputURI,
	}
	if req.HasBody {
		if len(req.Body) <= job.SageMakerMaxInlineBody {
			inv.Body = req.Body
		} else {
			// Over the inline limit: stream it to S3 and send InputLocation instead of refusing it.
			inv.InputLocation = blob.Join(m.inputPrefix(), id, "body")
			if _, err := m.Blobs.Put(ctx, inv.InputLocation, bytes.NewReader(req.Body), req.ContentType); err != nil {
				return nil, fmt.Errorf("write async input %s: %w", inv.InputLocation, err)
			}
		}
	}
	j := &job.Job{
		ID: id, Owner: req.Owner, Provider: job.ProviderSageMaker, Model: req.Endpoint, Status: job.StatusQueued,
		// One record, ordinal 0, in an item of its own (packed, it would
		// be a page and its companion).
		RecordCount: 1, Shards: 1, InputOrder: true, TTLDays: req.TTLDays, InputURI: inv.InputLocation,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: job.ExpiresAt(now, req.TTLDays), Notify: req.Notify,
	}
	j.ExpiresAt = job.NewExpiresAt(j, now) // held while in flight; TTL counts from the end
	note := m.coldStartNote(ctx, req.Endpoint)
	if note != "" {
		j.Warnings = append(j.Warnings, note)
	}
	if err := m.keepRequest(ctx, inv); err != nil {
		return nil, err
	}
	if err := m.Jobs.CreateJob(ctx, j); err != nil {
		return nil, fmt.Errorf("store job %s: %w", id, err)
	}
	acc, invErr := m.Runtime.InvokeAsync(ctx, inv)
	j, err := m.recordInvocation(ctx, id, acc, invErr)
	if err != nil {
		return nil, err
	}
	if invErr != nil {
		return nil, fmt.Errorf("invoke endpoint %s async (job %s kept as failed): %w", req.Endpoint, id, invErr)
	}
	// The caller hears the note whether or not the store keeps job warnings.
	if note != "" && !slices.Contains(j.Warnings, note) {
		j.Warnings = append(j.Warnings, note)
	}
	return j, nil
}

// recordInvocation writes InvokeEndpointAsync's answer on job id: the output
// and failure locations it was given, or, when it was refused (invErr), the
// failed job with its one failed result.
func (m *Service) recordInvocation(ctx context.Context, id string, acc AsyncAccepted, invErr error) (*job.Job, error) {
	now := m.Clock.Now()
	j, err := m.Jobs.UpdateJob(ctx, id, func(j *job.Job) error {
		if invErr != nil {
			if !job.CanMove(j.Status, job.StatusFailed) {
				return store.ErrNoChange
			}
			j.Status, j.ProviderStatus, j.Failed, j.CompletedAt = job.StatusFailed, SageMakerFailed, 1, now
			j.Retain()
			j.Error = "SageMaker refused the invocation: " + invErr.Error()
			return nil
		}
		// A notification may already have ended the job: keep its status, add the locations.
		j.OutputURI, j.FailureURI, j.SubmittedAt = acc.OutputLocation, acc.FailureLocation, now
		if job.CanMove(j.Status, job.StatusSubmitted) {
			j.Status, j.ProviderStatus = job.StatusSubmitted, SageMakerAccepted
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return nil, errors.Join(fmt.Errorf("record invocation of job %s: %w", id, err), invErr)
	}
	if invErr != nil {
		// The job's one result says why, as a failed inference's would.
		rec := job.Record{JobID: id, ID: id, Status: job.RecordFailed, ErrorCode: "InvocationRefused", ErrorMessage: invErr.Error(), ExpiresAt: job.RecordExpiresAt(j, now)}
		if err := m.Results.Put(ctx, j.RecordSet(), []job.Record{rec}); err != nil {
			service.Logger(m.Log).ErrorContext(ctx, "store refusal of job", "job_id", id, "error", err)
		}
		m.Telemetry.PublishCompleted(ctx, j)
	}
	return j, nil
}

// inputs are where a caller's input_uri may point.
func (m *Service) inputs() service.CallerInputs {
	return service.CallerInputs{Bucket: m.Bucket, Allow: m.InputAllow}
}

func (m *Service) inputPrefix() string {
	if m.InputPrefix != "" {
		return m.InputPrefix
	}
	return blob.Join(m.Bucket, "sagemaker", "input")
}

// Invoke calls a real-time endpoint with retries inside the overall deadline.
func (m *Service) Invoke(ctx context.Context, req InvokeRequest) (InvokeResult, error) {
	if err := m.checkEndpoint(req.Endpoint); err != nil {
		return InvokeResult{}, err
	}
	switch {
	case len(req.Body) == 0:
		return InvokeResult{}, job.Fieldf("body", "required: the request payload for the endpoint")
	case len(req.Body) > job.SageMakerMaxRealtimeBody:
		return InvokeResult{}, job.Fieldf("body", "%d bytes is over InvokeEndpoint's %d-byte limit; use invoke_endpoint_async", len(req.Body), job.SageMakerMaxRealtimeBody)
	case req.ContentType == "":
		return InvokeResult{}, job.Fieldf("content_type", "required: the MIME type of body, e.g. application/json")
	}
	deadline := m.Deadline
	if deadline <= 0 {
		deadline = DefaultSageMakerDeadline
	}
	limit := m.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultSageMakerMaxResponseBytes
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	start := time.Now()
	res, err := m.Runtime.Invoke(ctx, Invocation{
		Endpoint: req.Endpoint, Body: req.Body, ContentType: req.ContentType, Accept: req.Accept,
		TargetModel: req.TargetModel, TargetVariant: req.TargetVariant, MaxResponseBytes: limit,
	})
	if err != nil {
		return InvokeResult{}, fmt.Errorf("invoke endpoint %s: %w", req.Endpoint, err)
	}
	return InvokeResult{InvocationResult: res, Latency: time.Since(start)}, nil
}

func (m *Service) checkEndpoint(name string) error {
	if name == "" {
		return job.Fieldf("endpoint_name", "required; allowed endpoints: %s", m.allowed())
	}
	if !slices.Contains(m.Endpoints, name) {
		return job.Fieldf("endpoint_name", "%q is not allowed here; allowed endpoints: %s", service.Truncate(name, 80), m.allowed())
	}
	return nil
}

func (m *Service) allowed() string {
	if len(m.Endpoints) == 0 {
		return "none (this deployment allows no SageMaker endpoint: deploy with -c sagemakerEndpoints=name1,name2)"
	}
	return strings.Join(m.Endpoints, ", ")
}

func (m *Service) validateAsync(req *AsyncRequest) error {
	if err := m.checkEndpoint(req.Endpoint); err != nil {
		return err
	}
	switch {
	case req.HasBody && req.InputURI != "":
		return job.Fieldf("body", "give body or input_uri, not both")
	case !req.HasBody && req.InputURI == "":
		return job.Fieldf("body", "required: give body (a JSON value or text) or input_uri (s3://bucket/key)")
	case req.HasBody && len(req.Body) == 0:
		return job.Fieldf("body", "empty; give the request payload")
	case req.InputURI != "":
		if len(req.InputURI) > job.SageMakerMaxInputLocation {
			return job.Fieldf("input_uri", "%d characters is over SageMaker's limit of %d", len(req.InputURI), job.SageMakerMaxInputLocation)
		}
		// The endpoint reads it with its own role: only the caller's own files.
		if err := m.inputs().CheckCallerInput("input_uri", req.Owner, req.InputURI); err != nil {
			return err
		}
	}
	if req.ContentType == "" {
		return job.Fieldf("content_type", "required: the MIME type of the body, e.g. application/json")
	}
	if t := req.InvocationTimeoutS; t != 0 && (t < job.SageMakerMinInvocationTimeout || t > job.SageMakerMaxInvocationTimeout) {
		return job.Fieldf("inference_timeout_s", "must be %d..%d seconds (got %d)", job.SageMakerMinInvocationTimeout, job.SageMakerMaxInvocationTimeout, t)
	}
	if t := req.RequestTTLS; t != 0 && (t < job.SageMakerMinRequestTTL || t > job.SageMakerMaxRequestTTL) {
		return job.Fieldf("request_ttl_s", "must be %d..%d seconds (got %d)", job.SageMakerMinRequestTTL, job.SageMakerMaxRequestTTL, t)
	}
	if n := len(req.CustomAttributes); n > job.SageMakerMaxCustomAttributes {
		return job.Fieldf("custom_attributes", "%d characters is over SageMaker's limit of %d", n, job.SageMakerMaxCustomAttributes)
	}
	for _, c := range req.CustomAttributes {
		if c < 0x20 || c > 0x7e {
			return job.Fieldf("custom_attributes", "only visible ASCII characters are allowed (got %q)", c)
		}
	}
	switch {
	case req.TTLDays == 0:
		req.TTLDays = job.DefaultTTLDays
	case req.TTLDays < job.MinTTLDays || req.TTLDays > job.MaxTTLDays:
		return job.Fieldf("ttl_days", "must be %d..%d (got %d)", job.MinTTLDays, job.MaxTTLDays, req.TTLDays)
	}
	return nil
}
