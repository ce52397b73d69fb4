// Package announce tells the outside world that a job ended: a consumer of
// the "Job Completed" event that POSTs the job summary to the job's webhook
// (signed, retried with backoff by shared/notify) and/or publishes it to the
// stack's notification topic, once per terminal state.
//
// It runs in the function that consumes "Job Completed" (nightly-report in
// AWS, the in-process bus in make dev), never in the job's own flow, so a slow
// or failing receiver cannot hold a job back. The job's NotifiedStatus records
// the terminal state announced, so a redelivered event sends nothing twice;
// a delivery that failed for good is logged ("webhook delivery failed") and
// not retried again.
package announce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Webhooks checks and delivers webhooks (shared/notify.Webhook).
type Webhooks interface {
	Validate(ctx context.Context, raw string) error
	Send(ctx context.Context, owner, raw string, body []byte) error
	// OwnerSecrets are the secrets owner's receivers verify with, current first.
	OwnerSecrets(ctx context.Context, owner string) ([]string, error)
}

// Topic publishes to a notification topic (SNS in AWS, a file in make dev),
// with the owner as a message attribute subscribers filter on.
type Topic interface {
	NotifyOwner(ctx context.Context, topic, owner, subject, message string) error
}

// Jobs is the part of the store announcing needs.
type Jobs interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
}

// Service announces job ends. Its fields are its dependencies.
type Service struct {
	Jobs Jobs
	Log  *slog.Logger
	// Webhooks delivers notify.webhook (nil: webhooks are refused at submit).
	Webhooks Webhooks
	// Topic and TopicARN take notify.sns (either empty: refused at submit).
	Topic    Topic
	TopicARN string
}

// Body is what a webhook receives and what the topic carries: the "Job
// Completed" detail (events/project/job-completed.schema.json) under a type.
type Body struct {
	Type string            `json:"type"` // "job.completed"
	Job  service.Completed `json:"job"`
}

// CheckNotify validates notification settings at submit: the webhook URL
// (https, length, no private addresses in AWS) and that the deployment can
// deliver what is asked. Errors name the field.
func (s *Service) CheckNotify(ctx context.Context, n job.Notify) error {
	if n.Webhook != "" {
		if s.Webhooks == nil {
			return job.Fieldf("notify.webhook", "this deployment delivers no webhooks")
		}
		if err := s.Webhooks.Validate(ctx, n.Webhook); err != nil {
			return err
		}
	}
	if n.SNS && (s.Topic == nil || s.TopicARN == "") {
		return job.Fieldf("notify.sns", "this deployment has no notification topic")
	}
	return nil
}

// WebhookSecret returns the secret owner's receivers verify deliveries with
// and, while the deployment rotates its signing secret, the previous ones.
func (s *Service) WebhookSecret(ctx context.Context, owner string) (string, []string, error) {
	if s.Webhooks == nil {
		return "", nil, job.Fieldf("notify.webhook", "this deployment delivers no webhooks")
	}
	all, err := s.Webhooks.OwnerSecrets(ctx, owner)
	if err != nil {
		return "", nil, fmt.Errorf("webhook secret of %s: %w", owner, err)
	}
	return all[0], all[1:], nil
}

// OnJobCompleted announces the job's end if it asked for it and this
// terminal state was not announced yet.
func (s *Service) OnJobCompleted(ctx context.Context, jobID string) error {
	j, err := s.Jobs.GetJob(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load job %s: %w", jobID, err)
	}
	if j.Notify.Empty() || !j.Status.Terminal() || j.NotifiedStatus == j.Status {
		return nil
	}
	body, err := json.Marshal(Body{Type: "job.completed", Job: service.CompletedOf(j)})
	if err != nil {
		return fmt.Errorf("encode summary of %s: %w", j.ID, err)
	}
	log := s.log().With("job_id", j.ID, "status", j.Status)
	if j.Notify.Webhook != "" {
		if s.Webhooks == nil {
			log.ErrorContext(ctx, "webhook delivery failed", "error", "this deployment delivers no webhooks")
		} else if err := s.Webhooks.Send(ctx, j.Owner, j.Notify.Webhook, body); err != nil {
			// Send already retried with backoff; a receiver that keeps failing is
			// its owner's to fix, and retrying the event would only resend.
			log.ErrorContext(ctx, "webhook delivery failed", "error", err)
		} else {
			log.InfoContext(ctx, "webhook delivered")
		}
	}
	if j.Notify.SNS {
		if s.Topic == nil || s.TopicARN == "" {
			log.ErrorContext(ctx, "sns notification failed", "error", "no notification topic")
		} else if err := s.Topic.NotifyOwner(ctx, s.TopicARN, j.Owner, fmt.Sprintf("mcpbatch job %s %s", j.ID, j.Status), string(body)); err != nil {
			// SNS errors are transient: fail the event so it is delivered again.
			return fmt.Errorf("notify topic of job %s: %w", j.ID, err)
		}
	}
	st := j.Status
	_, err = s.Jobs.UpdateJob(ctx, j.ID, func(j *job.Job) error {
		if j.NotifiedStatus == st {
			return store.ErrNoChange
		}
		j.NotifiedStatus = st
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return fmt.Errorf("mark job %s notified: %w", j.ID, err)
	}
	return nil
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
