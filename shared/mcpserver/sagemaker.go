package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/job"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// SageMakerService is what the SageMaker tools need from the use-case layer.
type SageMakerService interface {
	InvokeAsync(ctx context.Context, req smsvc.AsyncRequest) (*job.Job, error)
	Invoke(ctx context.Context, req smsvc.InvokeRequest) (smsvc.InvokeResult, error)
	DescribeEndpoint(ctx context.Context, owner, name string) (smsvc.EndpointState, error)
	ShiftTraffic(ctx context.Context, req smsvc.ShiftRequest) (smsvc.EndpointState, error)
}

// InvokeAsyncIn is the input of invoke_endpoint_async.
type InvokeAsyncIn struct {
	EndpointName      string    `json:"endpoint_name" jsonschema:"SageMaker async endpoint name from the allowed list"`
	Notify            *NotifyIn `json:"notify,omitempty" jsonschema:"announce the invocation's end: a signed webhook POST and/or the stack's SNS topic"`
	Body              any       `json:"body,omitempty" jsonschema:"the request payload: a JSON value (sent as JSON) or a string (sent as is); give body or input_uri"`
	InputURI          string    `json:"input_uri,omitempty" jsonschema:"s3://bucket/key of a payload already in S3 (up to 1024 characters); give body or input_uri"`
	ContentType       string    `json:"content_type" jsonschema:"MIME type of the payload, e.g. application/json"`
	Accept            string    `json:"accept,omitempty" jsonschema:"desired MIME type of the output"`
	InferenceTimeoutS int       `json:"inference_timeout_s,omitempty" jsonschema:"seconds the model may work on it once dequeued, 1..3600 (endpoint default when absent)"`
	RequestTTLS       int       `json:"request_ttl_s,omitempty" jsonschema:"seconds the request may wait in the queue, 60..21600 (default 21600)"`
	CustomAttributes  string    `json:"custom_attributes,omitempty" jsonschema:"passed to the model container as is, up to 1024 visible ASCII characters"`
	TTLDays           int       `json:"ttl_days,omitempty" jsonschema:"days the job and its result are kept, 1..365, default 7"`
}

// AsyncHandle is what invoke_endpoint_async returns.
type AsyncHandle struct {
	JobID           string `json:"job_id" jsonschema:"also the SageMaker InferenceId"`
	Status          string `json:"status"`
	Provider        string `json:"provider"`
	EndpointName    string `json:"endpoint_name"`
	OutputLocation  string `json:"output_location,omitempty"`
	FailureLocation string `json:"failure_location,omitempty"`
	InputLocation   string `json:"input_location,omitempty" jsonschema:"where a body over 128,000 bytes was streamed to"`
	ExpiresAt       string `json:"expires_at" jsonschema:"while the inference runs: a hold kept ahead of the run, not the final expiry (see expires_at_final)"`
	// ExpiresFinal / TTLDays say what expires_at is, as for submit_batch's answer.
	ExpiresFinal bool `json:"expires_at_final" jsonschema:"false while the inference runs: expires_at then moves, and once it ends becomes ttl_days after its end (get_job shows it)"`
	TTLDays      int  `json:"ttl_days,omitempty" jsonschema:"the job and its result are kept this many days after the inference ends"`
	// Warnings say, e.g., that the endpoint is at zero instances and the first result waits for one to start.
	Warnings []string `json:"warnings,omitempty"`
}

// InvokeIn is the input of invoke_endpoint.
type InvokeIn struct {
	EndpointName  string `json:"endpoint_name" jsonschema:"SageMaker real-time endpoint name from the allowed list"`
	Body          any    `json:"body" jsonschema:"the request payload: a JSON value (sent as JSON) or a string (sent as is)"`
	ContentType   string `json:"content_type" jsonschema:"MIME type of the payload, e.g. application/json"`
	Accept        string `json:"accept,omitempty"`
	TargetModel   string `json:"target_model,omitempty" jsonschema:"model of a multi-model endpoint"`
	TargetVariant string `json:"target_variant,omitempty" jsonschema:"production variant to route to"`
}

// InvokeOut is what invoke_endpoint returns.
type InvokeOut struct {
	Body           any    `json:"body" jsonschema:"the response: JSON when it is JSON, else text, else base64 (see body_encoding)"`
	BodyEncoding   string `json:"body_encoding,omitempty" jsonschema:"base64 when the response is binary"`
	Note           string `json:"note,omitempty"`
	ContentType    string `json:"content_type"`
	InvokedVariant string `json:"invoked_variant,omitempty" jsonschema:"the production variant that answered (InvokedProductionVariant)"`
	Attempts       int    `json:"attempts" jsonschema:"calls made, retries included"`
	LatencyMS      int64  `json:"latency_ms" jsonschema:"wall time of the call, retries and backoff included"`
}

// addSageMakerTools registers invoke_endpoint_async and invoke_endpoint.
func (s *Server) addSageMakerTools(srv *mcp.Server) {
	yes, no := true, false
	addTool(srv, &mcp.Tool{
		Name:  "invoke_endpoint_async",
		Title: "Invoke a SageMaker async endpoint",
		Description: "Queue one inference on a SageMaker asynchronous endpoint and get a job_id at once (it is also the InferenceId). " +
			"Bodies up to 128,000 bytes go inline, bigger ones are staged in S3; or pass input_uri. " +
			"Poll get_job until terminal, then get_job_results returns the one result (or the failure reason).",
		Annotations: &mcp.ToolAnnotations{Title: "Invoke async endpoint", DestructiveHint: &no, OpenWorldHint: &yes},
		Meta:        appToolMeta(appJobURI),
	}, s.invokeAsync)
	addTool(srv, &mcp.Tool{
		Name:  "invoke_endpoint",
		Title: "Invoke a SageMaker real-time endpoint",
		Description: "Call a SageMaker real-time endpoint and return its answer. Transient faults (model not ready, 5xx, throttling) are " +
			"retried with backoff inside a deadline; a model error is returned at once with the container's status, message and log stream.",
		Annotations: &mcp.ToolAnnotations{Title: "Invoke endpoint", DestructiveHint: &no, OpenWorldHint: &yes},
	}, s.invokeEndpoint)
}

// payload turns a tool's body argument into bytes: a string as is, any other JSON value encoded.
func payload(field string, v any) ([]byte, bool, error) {
	switch b := v.(type) {
	case nil:
		return nil, false, nil
	case string:
		return []byte(b), true, nil
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, false, job.Fieldf(field, "not encodable as JSON: %v", err)
		}
		return raw, true, nil
	}
}

func (s *Server) invokeAsync(ctx context.Context, req *mcp.CallToolRequest, in InvokeAsyncIn) (*mcp.CallToolResult, AsyncHandle, error) {
	return call(s, ctx, req, "invoke_endpoint_async", "", func(owner string) (AsyncHandle, string, string, error) {
		body, has, err := payload("body", in.Body)
		if err != nil {
			return AsyncHandle{}, "", "", err
		}
		n, err := s.checkNotify(ctx, in.Notify)
		if err != nil {
			return AsyncHandle{}, "", "", err
		}
		j, err := s.SageMaker.InvokeAsync(ctx, smsvc.AsyncRequest{
			Owner: owner, Endpoint: in.EndpointName, Body: body, HasBody: has, InputURI: in.InputURI,
			ContentType: in.ContentType, Accept: in.Accept, CustomAttributes: in.CustomAttributes,
			InvocationTimeoutS: in.InferenceTimeoutS, RequestTTLS: in.RequestTTLS, TTLDays: in.TTLDays, Notify: n,
		})
		if err != nil {
			return AsyncHandle{}, "", "", err
		}
		h := AsyncHandle{JobID: j.ID, Status: string(j.Status), Provider: j.Provider, EndpointName: j.Model,
			OutputLocation: j.OutputURI, FailureLocation: j.FailureURI, InputLocation: j.InputURI, ExpiresAt: ts(j.ExpiresAt),
			ExpiresFinal: expiresFinal(j), TTLDays: ttlOf(j), Warnings: j.Warnings}
		summary := fmt.Sprintf("Queued inference %s on endpoint %s, status %s. Poll get_job; then get_job_results.", j.ID, j.Model, j.Status)
		for _, w := range j.Warnings {
			summary += " Note: " + w + "."
		}
		return h, summary, j.ID, nil
	})
}

func (s *Server) invokeEndpoint(ctx context.Context, req *mcp.CallToolRequest, in InvokeIn) (*mcp.CallToolResult, InvokeOut, error) {
	return call(s, ctx, req, "invoke_endpoint", "", func(owner string) (InvokeOut, string, string, error) {
		body, _, err := payload("body", in.Body)
		if err != nil {
			return InvokeOut{}, "", "", err
		}
		res, err := s.SageMaker.Invoke(ctx, smsvc.InvokeRequest{
			Owner: owner, Endpoint: in.EndpointName, Body: body, ContentType: in.ContentType, Accept: in.Accept,
			TargetModel: in.TargetModel, TargetVariant: in.TargetVariant,
		})
		if err != nil {
			return InvokeOut{}, "", "", err
		}
		out := InvokeOut{ContentType: res.ContentType, InvokedVariant: res.InvokedVariant, Attempts: res.Attempts, LatencyMS: res.Latency.Milliseconds()}
		switch {
		case !utf8.Valid(res.Body):
			out.Body, out.BodyEncoding = base64.StdEncoding.EncodeToString(res.Body), "base64"
		case smsvc.IsJSONType(res.ContentType) && json.Valid(res.Body):
			out.Body = json.RawMessage(res.Body)
		case smsvc.IsJSONType(res.ContentType):
			out.Body, out.Note = string(res.Body), "the response is not valid JSON although its content type is "+res.ContentType+"; returned as text"
		default:
			out.Body = string(res.Body)
		}
		return out, fmt.Sprintf("Endpoint %s (variant %s) answered %d bytes (%s) in %d ms after %d attempt(s).",
			in.EndpointName, res.InvokedVariant, len(res.Body), res.ContentType, out.LatencyMS, res.Attempts), "", nil
	})
}

// endpointToolError is the text of a SageMaker endpoint failure (called from toolError).
func endpointToolError(tool string, e *smsvc.EndpointError) *toolErr {
	var b strings.Builder
	switch e.Kind {
	case smsvc.KindModelError:
		fmt.Fprintf(&b, "%s: endpoint %s: the model container returned an error (ModelError, not retried): original status %d: %s",
			tool, e.Endpoint, e.OriginalStatusCode, e.OriginalMessage)
		if e.LogStreamARN != "" {
			fmt.Fprintf(&b, "; logs: %s", e.LogStreamARN)
		}
		b.WriteString("; fix the input or the model, then call again")
	case smsvc.KindValidation:
		fmt.Fprintf(&b, "invalid input: endpoint %s: SageMaker refused the request (ValidationError, not retried): %s", e.Endpoint, e.Message)
	case smsvc.KindRetryable:
		fmt.Fprintf(&b, "%s: endpoint %s is still failing after %d attempts (last: %s: %s); nothing was lost; retry later", tool, e.Endpoint, e.Attempts, e.Code, e.Message)
	case smsvc.KindDeadline:
		fmt.Fprintf(&b, "%s: endpoint %s did not answer within the tool's deadline (%d attempts, last: %s); retry, or use invoke_endpoint_async for slow models",
			tool, e.Endpoint, e.Attempts, e.Code)
	case smsvc.KindTooLarge:
		fmt.Fprintf(&b, "%s: endpoint %s: the response of %d bytes is over this server's cap of %d bytes (sagemakerMaxResponseBytes); "+
			"use invoke_endpoint_async, whose results are paged and linked", tool, e.Endpoint, e.Size, e.Limit)
	default:
		fmt.Fprintf(&b, "%s: endpoint %s: %s: %s", tool, e.Endpoint, e.Code, e.Message)
	}
	return &toolErr{msg: b.String()}
}
