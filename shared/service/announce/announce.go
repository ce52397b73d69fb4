// Package announce tells the outside world that a job ended: a consumer of
// the "Job Completed" event that POSTs the job summary to the job's webhook
// (signed, retried with backoff by shared/notify) and/or publishes it to the
// stack's notification topic, once per terminal state.
//
// It runs in the function that consumes "Job Completed" (nightly-report in
// AWS, the in-process bus in make dev), never in the job's own flow, so a slow
// or failing receiver cannot hold a job back. The job's NotifiedStatus records
// the terminal state announced, so a redelivered event sends nothing twice;
// a delivery that failed for good is logged ("webhook delivery failed"),
// noted in the job's warnings and not retried again.
//
// Two deliveries of one event may run at once (EventBridge delivers at least
// once): the first claims the announcement on the job (NotifyingUntil, a
// lease longer than one webhook send) and the other fails, to be retried
// after the claim ended. A notifier stopped mid-send (its context cancelled)
// gives its claim back and fails, so the event's retry sends again with the
// same delivery id; one that died without a word is taken over once its
// claim expired.
package announce

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

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
	// Claim is how long one notifier holds a job's announcement (0: DefaultClaim).
	Claim time.Duration
	Now   func() time.Time // time.Now when nil
}

// DefaultClaim outlasts one webhook send with notify's defaults (5 attempts
// of at most 10 s and their backoff, about 65 s) and is shorter than
// Lambda's retries of an async event (about 1 and 2 minutes apart), so a
// notifier that died mid-send is taken over by the event's second retry.
const DefaultClaim = 2 * time.Minute

// claimWriteTimeout bounds the claim's write once the caller's context no
// longer does (a conditional update takes milliseconds).
const claimWriteTimeout = 10 * time.Second

// ErrBusy is returned while another delivery of the event announces the job.
var ErrBusy = errors.New("another delivery of this event is announcing the job")

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
	st := j.Status
	if j, err = s.claim(ctx, j.ID, st); j == nil || err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return errors.Join(fmt.Errorf("announce job %s stopped after its claim: %w", j.ID, err), s.release(ctx, j))
	}
	body, err := json.Marshal(Body{Type: "job.completed", Job: service.CompletedOf(j)})
	if err != nil {
		return errors.Join(fmt.Errorf("encode summary of %s: %w", j.ID, err), s.release(ctx, j))
	}
	log := s.log().With("job_id", j.ID, "status", j.Status)
	var failed string // why the webhook was not delivered, noted on the job
	if j.Notify.Webhook != "" && j.WebhookSent != st {
		if s.Webhooks == nil {
			failed = "this deployment delivers no webhooks"
		} else if err := s.Webhooks.Send(ctx, j.Owner, j.Notify.Webhook, body); err != nil {
			if ctx.Err() != nil {
				// Stopped mid-send, not refused: the event's retry sends again
				// (same delivery id, which receivers deduplicate on).
				return errors.Join(fmt.Errorf("webhook of job %s cut short: %w", j.ID, err), s.release(ctx, j))
			}
			// Send already retried with backoff; a receiver that keeps failing is
			// its owner's to fix, and retrying the event would only resend.
			failed = err.Error()
		} else {
			log.InfoContext(ctx, "webhook delivered")
		}
		if failed != "" {
			log.ErrorContext(ctx, "webhook delivery failed", "error", failed)
		}
		if j.Notify.SNS {
			// SNS may fail and retry the event: the webhook's outcome is kept
			// first, so the retry neither sends it again nor loses its warning.
			if err := s.record(ctx, j.ID, st, failed, false); err != nil {
				return errors.Join(err, s.release(ctx, j))
			}
			failed = ""
		}
	}
	if j.Notify.SNS {
		if s.Topic == nil || s.TopicARN == "" {
			log.ErrorContext(ctx, "sns notification failed", "error", "no notification topic")
		} else if err := s.Topic.NotifyOwner(ctx, s.TopicARN, j.Owner, fmt.Sprintf("mcpbatch job %s %s", j.ID, j.Status), string(body)); err != nil {
			// SNS errors are transient: fail the event so it is delivered again.
			return errors.Join(fmt.Errorf("notify topic of job %s: %w", j.ID, err), s.release(ctx, j))
		}
	}
	return s.record(ctx, j.ID, st, failed, true)
}

// record notes on job id that status st's webhook step is done (failed: why
// it was not delivered, kept as a warning) and, when all, that st is
// announced, which ends the claim. It is written even when the notifier is
// being stopped now: recording what was sent keeps a retry from sending it again.
func (s *Service) record(ctx context.Context, id string, st job.Status, failed string, all bool) error {
	_, err := s.Jobs.UpdateJob(context.WithoutCancel(ctx), id, func(j *job.Job) error {
		if j.NotifiedStatus == st || (!all && j.WebhookSent == st) {
			return store.ErrNoChange
		}
		if j.Notify != nil && j.Notify.Webhook != "" {
			j.WebhookSent = st
		}
		if all {
			j.NotifiedStatus, j.NotifyingUntil = st, time.Time{}
		}
		if failed != "" {
			j.AddWarning(fmt.Sprintf("notify.webhook: the %s notification was not delivered (%s); it is not sent again", st, failed))
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return fmt.Errorf("mark job %s notified: %w", id, err)
	}
	return nil
}

// claim takes the announcement of job id's status st for s.Claim. It
// returns the claimed job, nil when there is nothing to announce any more,
// or ErrBusy (wrapped) while another notifier's claim runs. The write is
// not cut short by the caller's context: a claim written but not known to
// be would be held, unsent, until it expires (the caller releases it when
// it was stopped meanwhile).
func (s *Service) claim(ctx context.Context, id string, st job.Status) (*job.Job, error) {
	now := s.now()
	var until time.Time
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimWriteTimeout)
	defer cancel()
	j, err := s.Jobs.UpdateJob(ctx, id, func(cur *job.Job) error {
		if cur.Status != st || cur.NotifiedStatus == st {
			return store.ErrNoChange
		}
		if now.Before(cur.NotifyingUntil) {
			until = cur.NotifyingUntil
			return ErrBusy
		}
		cur.NotifyingUntil = now.Add(cmp.Or(s.Claim, DefaultClaim))
		return nil
	})
	switch {
	case errors.Is(err, store.ErrNoChange), errors.Is(err, store.ErrNotFound):
		return nil, nil
	case errors.Is(err, ErrBusy):
		return nil, fmt.Errorf("job %s (%s): %w until %s; retry later", id, st, ErrBusy, until.UTC().Format(time.RFC3339))
	case err != nil:
		return nil, fmt.Errorf("claim the announcement of job %s: %w", id, err)
	}
	return j, nil
}

// release gives back the claim this notifier took on j (j as claim returned
// it), so the event's retry need not wait for it to expire. A claim another
// notifier took once this one expired is theirs, and stays.
func (s *Service) release(ctx context.Context, j *job.Job) error {
	id, st, mine := j.ID, j.Status, j.NotifyingUntil
	_, err := s.Jobs.UpdateJob(context.WithoutCancel(ctx), id, func(cur *job.Job) error {
		if cur.NotifiedStatus == st || !cur.NotifyingUntil.Equal(mine) {
			return store.ErrNoChange
		}
		cur.NotifyingUntil = time.Time{}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("release the announcement of job %s: %w", id, err)
	}
	return nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
