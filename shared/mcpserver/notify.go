package mcpserver

import (
	"context"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// NotifyIn is the notify argument of the submitting tools.
type NotifyIn struct {
	Webhook string `json:"webhook,omitempty" jsonschema:"https URL POSTed once per terminal state with the job summary, signed (X-Mcpbatch-Signature: HMAC-SHA256 over timestamp.body); at most 2,048 characters, no private or loopback addresses"`
	SNS     bool   `json:"sns,omitempty" jsonschema:"also publish the summary to this stack's notification topic"`
}

// NotifyChecker checks notification settings at submit time.
type NotifyChecker interface {
	CheckNotify(ctx context.Context, n job.Notify) error
}

// checkNotify validates in (nil: none asked) into what the job stores.
func (s *Server) checkNotify(ctx context.Context, in *NotifyIn) (*job.Notify, error) {
	if in == nil || (in.Webhook == "" && !in.SNS) {
		return nil, nil
	}
	if s.Notify == nil {
		return nil, job.Fieldf("notify", "this deployment sends no completion notifications; poll get_job instead")
	}
	n := job.Notify{Webhook: in.Webhook, SNS: in.SNS}
	if err := s.Notify.CheckNotify(ctx, n); err != nil {
		return nil, err
	}
	return &n, nil
}
