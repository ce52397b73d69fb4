package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/service"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// Caller makes one call (an Invoker; a Server in tests).
type Caller interface {
	Call(ctx context.Context, req Request, resp *Response) error
}

// call makes req and returns the answer, or the error as the service expects
// it: a throttled invoke is busy. For a create, an invoke that may have run
// may have made the batch or be making it still (the part keeps its lease and
// is looked for before another create);
// one that did not run (throttled, refused, never sent) leaves the part
// queued, and the reconciler, which calls Anthropic itself, submits it.
func call(ctx context.Context, c Caller, req Request) (Response, error) {
	var resp Response
	err := c.Call(ctx, req, &resp)
	var ie *InvokeError
	switch {
	case errors.As(err, &ie) && req.Op == OpSubmit && ie.Ran:
		// The providers function may have made the batch, or may still be
		// making it: Lambda runs a synchronous invoke on after its caller hangs up.
		return resp, errors.Join(service.ErrSubmitUnknown, service.ErrSubmitInFlight, err)
	case errors.As(err, &ie) && (ie.Throttled || req.Op == OpSubmit):
		return resp, errors.Join(service.ErrProviderBusy, err)
	case err != nil:
		return resp, err
	}
	return resp, resp.Error.err()
}

// AnthropicCalls are the Anthropic provider's calls, made by the providers
// function. They carry no results fetch: ingest and the reconciler fetch
// results themselves, and the providers function may not write output/.
type AnthropicCalls struct{ Caller Caller }

var _ anthropicbatch.Calls = AnthropicCalls{}

// Submit creates one Message Batch from the part's request lines.
func (a AnthropicCalls) Submit(ctx context.Context, in service.BatchSubmit) (string, error) {
	r, err := call(ctx, a.Caller, Request{Op: OpSubmit, Submit: &in})
	return r.Ref, err
}

// Get reads a batch's processing_status.
func (a AnthropicCalls) Get(ctx context.Context, ref string) (service.BatchState, error) {
	r, err := call(ctx, a.Caller, Request{Op: OpGet, Ref: ref})
	if err != nil {
		return service.BatchState{}, err
	}
	if r.State == nil {
		return service.BatchState{}, fmt.Errorf("%s %s: the answer holds no state", OpGet, ref)
	}
	return *r.State, nil
}

// Stop cancels a batch.
func (a AnthropicCalls) Stop(ctx context.Context, ref string) error {
	_, err := call(ctx, a.Caller, Request{Op: OpStop, Ref: ref})
	return err
}

// FindSubmitted lists the batches a create with an unknown outcome may have made.
func (a AnthropicCalls) FindSubmitted(ctx context.Context, in service.BatchSubmit, since time.Time) (service.Found, error) {
	r, err := call(ctx, a.Caller, Request{Op: OpFindSubmitted, Submit: &in, Since: since})
	if err != nil || r.Found == nil {
		return service.Found{}, err
	}
	return *r.Found, nil
}

// CountTokens counts a record's input tokens with Anthropic's Token Count API.
func (a AnthropicCalls) CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error) {
	r, err := call(ctx, a.Caller, Request{Op: OpCountTokens, Model: model, Input: &in, Params: &p})
	var ie *InvokeError
	if errors.As(err, &ie) {
		// The provider's own errors name the record already.
		return 0, fmt.Errorf("count tokens of record %s: %w", in.ID, err)
	}
	return r.Tokens, err
}

// EndpointControl reads and steers SageMaker endpoints through the providers function.
type EndpointControl struct{ Caller Caller }

var _ smsvc.EndpointControl = EndpointControl{}

// DescribeEndpoint reads an endpoint, its scaling and, when async, its backlog.
func (c EndpointControl) DescribeEndpoint(ctx context.Context, name string) (smsvc.EndpointState, error) {
	r, err := call(ctx, c.Caller, Request{Op: OpDescribe, Endpoint: name})
	if err != nil {
		return smsvc.EndpointState{}, err
	}
	if r.EndpointState == nil {
		return smsvc.EndpointState{}, fmt.Errorf("%s %s: the answer holds no state", OpDescribe, name)
	}
	return *r.EndpointState, nil
}

// UpdateWeights sets the variants' weights.
func (c EndpointControl) UpdateWeights(ctx context.Context, name string, weights []smsvc.VariantWeight) error {
	_, err := call(ctx, c.Caller, Request{Op: OpUpdateWeights, Endpoint: name, Weights: weights})
	return err
}
