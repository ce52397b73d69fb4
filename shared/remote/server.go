package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/service"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// Server answers the calls in the providers function.
type Server struct {
	// Anthropic makes the Anthropic calls; nil when no API key is configured.
	Anthropic anthropicbatch.Calls
	// Control reads and steers SageMaker endpoints.
	Control smsvc.EndpointControl
	Log     *slog.Logger
}

// errNoAnthropic answers Anthropic calls of a deployment without a key. It
// is busy: a part stays queued for the reconciler, which reads the key itself.
var errNoAnthropic = errors.Join(service.ErrProviderBusy,
	errors.New("the Anthropic provider is not configured: put the API key in the AnthropicKeySecretArn secret (aws secretsmanager put-secret-value)"))

// Handle answers one call. Every failure travels in the answer, so the
// function itself fails only when Lambda cannot run it.
func (s *Server) Handle(ctx context.Context, req Request) (Response, error) {
	start := time.Now()
	if !req.Deadline.IsZero() {
		// The caller stops waiting then: so does the call.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, req.Deadline)
		defer cancel()
	}
	resp, err := s.handle(ctx, req)
	resp.Error = encodeError(err)
	if s.Log != nil {
		attrs := []any{"op", req.Op, "ms", time.Since(start).Milliseconds()}
		if err != nil {
			s.Log.WarnContext(ctx, "provider call failed", append(attrs, "error", err)...)
		} else {
			s.Log.InfoContext(ctx, "provider call", attrs...)
		}
	}
	return resp, nil
}

// Call answers req in process (tests, and what an Invoker does over Lambda).
func (s *Server) Call(ctx context.Context, req Request, resp *Response) error {
	r, err := s.Handle(ctx, req)
	*resp = r
	return err
}

func (s *Server) handle(ctx context.Context, req Request) (Response, error) {
	var r Response
	var err error
	switch req.Op {
	case OpSubmit, OpGet, OpStop, OpFindSubmitted, OpCountTokens:
		if s.Anthropic == nil {
			return r, errNoAnthropic
		}
	case OpDescribe, OpUpdateWeights:
		if s.Control == nil {
			return r, errors.New("the providers function has no SageMaker control-plane client")
		}
	}
	switch req.Op {
	case OpSubmit:
		if req.Submit == nil {
			return r, missing(req.Op, "submit")
		}
		r.Ref, err = s.Anthropic.Submit(ctx, *req.Submit)
	case OpGet:
		var st service.BatchState
		st, err = s.Anthropic.Get(ctx, req.Ref)
		r.State = &st
	case OpStop:
		err = s.Anthropic.Stop(ctx, req.Ref)
	case OpFindSubmitted:
		if req.Submit == nil {
			return r, missing(req.Op, "submit")
		}
		var f service.Found
		f, err = s.Anthropic.FindSubmitted(ctx, *req.Submit, req.Since)
		r.Found = &f
	case OpCountTokens:
		if req.Input == nil || req.Params == nil {
			return r, missing(req.Op, "input and params")
		}
		r.Tokens, err = s.Anthropic.CountTokens(ctx, req.Model, *req.Input, *req.Params)
	case OpDescribe:
		var st smsvc.EndpointState
		st, err = s.Control.DescribeEndpoint(ctx, req.Endpoint)
		r.EndpointState = &st
	case OpUpdateWeights:
		err = s.Control.UpdateWeights(ctx, req.Endpoint, req.Weights)
	default:
		return r, fmt.Errorf("unknown op %q", req.Op)
	}
	return r, err
}

func missing(op, field string) error { return fmt.Errorf("%s: the request has no %s", op, field) }
