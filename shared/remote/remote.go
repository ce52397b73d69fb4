// Package remote carries the provider calls the mcp function does not link to
// the providers function, over a synchronous Lambda Invoke: the Anthropic
// Message Batches calls (the official SDK registers every one of its types at
// init, about 6 MB) and the SageMaker endpoint control plane (about 2.7 MB,
// mostly SageMaker's schema of 300+ operations). Without them the mcp
// bootstrap fits the suite's 20 MB limit.
//
// Each call is one JSON request naming its op; the answer holds the result or
// the error, with the kinds the service tells apart (busy, may have created,
// an endpoint's refusal) and the error's own text, so the service behaves as
// if the call were made in process.
package remote

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// The ops the providers function answers.
const (
	OpSubmit        = "anthropic.submit"
	OpGet           = "anthropic.get"
	OpStop          = "anthropic.stop"
	OpFindSubmitted = "anthropic.find_submitted"
	OpCountTokens   = "anthropic.count_tokens"
	OpDescribe      = "sagemaker.describe_endpoint"
	OpUpdateWeights = "sagemaker.update_weights"
)

// Request is one call; only the fields of its op are set.
type Request struct {
	Op string `json:"op"`
	// Deadline is when the caller stops waiting (its context\'s deadline).
	Deadline time.Time             `json:"deadline,omitzero"`
	Submit   *service.BatchSubmit  `json:"submit,omitempty"`
	Ref      string                `json:"ref,omitempty"`
	Since    time.Time             `json:"since,omitzero"`
	Model    string                `json:"model,omitempty"`
	Input    *job.Input            `json:"input,omitempty"`
	Params   *job.Params           `json:"params,omitempty"`
	Endpoint string                `json:"endpoint,omitempty"`
	Weights  []smsvc.VariantWeight `json:"weights,omitempty"`
}

// Response is a call's answer: its result, or Error.
type Response struct {
	Ref           string               `json:"ref,omitempty"`
	State         *service.BatchState  `json:"state,omitempty"`
	Found         *service.Found       `json:"found,omitempty"`
	Tokens        int64                `json:"tokens,omitempty"`
	EndpointState *smsvc.EndpointState `json:"endpoint_state,omitempty"`
	Error         *Error               `json:"error,omitempty"`
}

// Error is a failed call as it travels.
type Error struct {
	Message string `json:"message"`
	// Busy: service.ErrProviderBusy (try later; a part stays queued).
	Busy bool `json:"busy,omitempty"`
	// MaybeCreated: service.ErrSubmitUnknown (look for the batch before creating another).
	MaybeCreated bool `json:"maybe_created,omitempty"`
	// Deadline: the call ran out of time (context.DeadlineExceeded).
	Deadline bool `json:"deadline,omitempty"`
	// Endpoint is a SageMaker refusal the tools word.
	Endpoint *smsvc.EndpointError `json:"endpoint,omitempty"`
}

// encodeError is err as it travels (nil for nil).
func encodeError(err error) *Error {
	if err == nil {
		return nil
	}
	e := &Error{Message: err.Error(), Busy: errors.Is(err, service.ErrProviderBusy), MaybeCreated: errors.Is(err, service.ErrSubmitUnknown),
		Deadline: errors.Is(err, context.DeadlineExceeded)}
	var ee *smsvc.EndpointError
	if errors.As(err, &ee) {
		e.Endpoint = ee
	}
	return e
}

// err is the error the caller sees: the same text, and errors.Is and
// errors.As answer as they did where it was made.
func (e *Error) err() error {
	if e == nil {
		return nil
	}
	if e.Endpoint != nil {
		return e.Endpoint
	}
	var kinds []error
	if e.Busy {
		kinds = append(kinds, service.ErrProviderBusy)
	}
	if e.MaybeCreated {
		kinds = append(kinds, service.ErrSubmitUnknown)
	}
	if e.Deadline {
		kinds = append(kinds, context.DeadlineExceeded)
	}
	return &wireError{msg: e.Message, kinds: kinds}
}

// wireError is an error made in the providers function.
type wireError struct {
	msg   string
	kinds []error
}

func (e *wireError) Error() string { return e.msg }

func (e *wireError) Is(target error) bool { return slices.Contains(e.kinds, target) }
