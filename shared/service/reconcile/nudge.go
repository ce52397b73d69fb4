package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// nudgeIngest re-announces "Job Output Ready" for a job ingesting with no
// progress (no write: checkpoint, failure record) for StaleAfter, doubling the
// wait with each try; after MaxRetries tries the job fails with the last
// ingest error. It also covers an announcement that never went out.
func (s *Service) nudgeIngest(ctx context.Context, j *job.Job, rep *ReconcileReport) error {
	cur, err := s.Jobs.GetJob(ctx, j.ID)
	if err != nil {
		return nil // gone or unreadable now; the next run sees it again
	}
	if cur.Status != job.StatusIngesting || !s.due(cur) {
		return nil
	}
	nj, again, err := s.nudge(ctx, cur, "ingest")
	if err != nil || !again {
		return err
	}
	rep.OutputReady++
	if err := s.Bus.Publish(ctx, config.DetailJobOutputReady, service.OutputReady{JobID: nj.ID, Provider: nj.Provider}); err != nil {
		return fmt.Errorf("republish output ready for %s: %w", nj.ID, err)
	}
	return nil
}

// nudgeOnDemand re-requests the run of an on-demand job that made no progress
// (each checkpoint writes the job) for StaleAfter, with the same backoff and
// bound as ingests. On-demand jobs are never submitted as batch jobs here.
func (s *Service) nudgeOnDemand(ctx context.Context, j *job.Job, rep *ReconcileReport) error {
	if s.OnDemand == nil || !s.due(j) {
		return nil
	}
	switch {
	case j.Status == job.StatusQueued, j.Status == job.StatusInProgress, j.Status == job.StatusCancelling:
	case j.Redriving(): // a deadline re-drive runs within its ingesting batch job
	default:
		return nil
	}
	nj, again, err := s.nudge(ctx, j, "on-demand run")
	if err != nil || !again {
		return err
	}
	rep.Resumed++
	return s.OnDemand.ContinueOnDemand(ctx, nj.ID)
}

// due: a stalled job is due a nudge once it has gone StaleAfter × 2^Retries without a write.
func (s *Service) due(j *job.Job) bool {
	wait := cmp.Or(s.StaleAfter, DefaultStaleAfter) << min(j.Retries, 16)
	return s.Clock.Now().Sub(j.UpdatedAt) >= wait
}

// nudge counts one more try on a stalled job, conditionally (a job that moved
// or was written meanwhile is left alone, so overlapping runs nudge once), or
// fails it when MaxRetries tries made no progress. again: the caller retries.
func (s *Service) nudge(ctx context.Context, j *job.Job, what string) (*job.Job, bool, error) {
	var failed bool
	now := s.Clock.Now()
	nj, err := s.Jobs.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
		failed = false
		if cur.Status != j.Status || !s.due(cur) {
			return store.ErrNoChange
		}
		if cur.Retries < MaxRetries {
			cur.Retries++
			return nil
		}
		cause := cur.LastError
		if cause == "" {
			cause = "none was recorded (the request may have been lost)"
		}
		msg := fmt.Sprintf("%s made no progress after %d retries; last error: %s", what, MaxRetries, cause)
		for i := range cur.Parts {
			if p := &cur.Parts[i]; !p.Status.Terminal() {
				p.Status, p.Message = job.StatusFailed, msg
			}
		}
		cur.Status, cur.Error, cur.CompletedAt, cur.Checkpoint = job.StatusFailed, msg, now, nil
		cur.Retain()
		failed = true
		return nil
	})
	switch {
	case errors.Is(err, store.ErrNoChange), errors.Is(err, store.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("nudge stalled job %s: %w", j.ID, err)
	case failed:
		s.Telemetry.PublishCompleted(ctx, nj)
		return nj, false, nil
	}
	service.Logger(s.Log).WarnContext(ctx, "stalled job nudged", "job_id", j.ID, "what", what, "retry", nj.Retries, "last_error", nj.LastError)
	return nj, true, nil
}
