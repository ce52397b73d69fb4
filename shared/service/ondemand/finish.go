package ondemand

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// finishOnDemand settles the final status from the checkpoint counts and announces it.
func (s *Service) finishOnDemand(ctx context.Context, j *job.Job) error {
	var refused *batch.VectorsRefusedError
	if j.Index != nil && s.Vectors != nil && !j.Status.Terminal() {
		// Before the job is final, so a transiently failed write is retried
		// with the run; one that can never succeed ends the job with its reason.
		if err := s.Vectors.WriteJob(ctx, j); err != nil && !errors.As(err, &refused) {
			return fmt.Errorf("write vectors of %s: %w", j.ID, err)
		}
	}
	now := s.Clock.Now()
	var stored *service.StoredCounts
	if cancelled(j) {
		// A chunk stored by a run that died (or was refused) before its
		// checkpoint is not redone once the job is cancelled, yet its results
		// stay readable: the counts are the stored results.
		_, c, err := service.StoredResults(ctx, s.Jobs, j, "")
		if err != nil {
			return err
		}
		stored = &c
	}
	id := j.ID
	j, err := s.Jobs.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.Status.Terminal() {
			return store.ErrNoChange
		}
		j.SyncOnDemandCounts()
		s.Models.PriceJob(j)
		final := job.StatusCompleted
		switch {
		case cancelled(j):
			final = job.StatusCancelled
			// A run killed after storing a chunk and before its checkpoint
			// is never redone once cancelled: count what is stored.
			if stored != nil {
				// The stored results hold the records reused at submit too.
				j.Succeeded, j.Failed = stored.Succeeded-j.Reused, stored.Failed
			}
		case j.Succeeded == 0 && j.Reused == 0 && j.RecordCount > 0:
			// Nothing to read but errors: the job failed, not "partially" completed.
			final = job.StatusFailed
			if j.Error == "" {
				j.Error = fmt.Sprintf("all %d records failed; get_job_results status=failed lists each error", j.RecordCount)
			}
		case j.Failed > 0 || j.Succeeded < j.RecordCount:
			final = job.StatusPartiallyCompleted
		}
		if j.Redrive != nil {
			// A re-drive ends its batch job: every part whose output was read ends with it.
			for i := range j.Parts {
				if !j.Parts[i].Status.Terminal() {
					j.Parts[i].Status = final
				}
			}
		} else {
			j.Parts[0].Status, j.Parts[0].ProviderStatus = final, "OnDemandDone"
		}
		j.Status, j.ProviderStatus = final, "OnDemandDone"
		if refused != nil {
			batch.VectorsRefused(j, refused)
		}
		j.CompletedAt = now
		j.Retain()
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finish on-demand job %s: %w", id, err) // j is nil here
	}
	service.Logger(s.Log).InfoContext(ctx, "on-demand job finished", "job_id", j.ID, "status", j.Status, "succeeded", j.Succeeded, "failed", j.Failed,
		"cache_read_tokens", j.CacheReadTokens, "cache_write_tokens", j.CacheWriteTokens, "throttles", j.OnDemand.Throttles)
	if j.Index != nil && s.Vectors != nil && j.Status == job.StatusCompleted {
		if err := s.Vectors.CommitJob(ctx, j); err != nil {
			service.Logger(s.Log).ErrorContext(ctx, "commit of job to its vector index failed", "job_id", j.ID, "index", j.Index.Name, "error", err)
		}
	}
	s.Telemetry.PublishCompleted(ctx, j)
	return nil
}

// endedByOthers are the ends a run does not set itself: cancel_job, the
// reconciler giving up on a run that made no progress, expiry.
func endedByOthers(st job.Status) bool {
	return st == job.StatusCancelled || st == job.StatusFailed || st == job.StatusExpired
}

// recountEnded sets the counts of an on-demand job ended by others to its
// stored results after a run stored a chunk whose checkpoint the ended job
// refused (a slow run outlived the reconciler's patience, or a cancel).
func (s *Service) recountEnded(ctx context.Context, id string) error {
	j, err := s.Jobs.GetJob(ctx, id)
	if err != nil {
		return fmt.Errorf("recount on-demand job %s: %w", id, err)
	}
	if !endedByOthers(j.Status) {
		return nil
	}
	_, c, err := service.StoredResults(ctx, s.Jobs, j, "")
	if err != nil {
		return err
	}
	_, err = s.Jobs.UpdateJob(ctx, id, func(j *job.Job) error {
		// The stored results hold the records reused at submit too.
		if !endedByOthers(j.Status) || (j.Succeeded == c.Succeeded-j.Reused && j.Failed == c.Failed) {
			return store.ErrNoChange
		}
		j.Succeeded, j.Failed = c.Succeeded-j.Reused, c.Failed
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return fmt.Errorf("recount on-demand job %s: %w", id, err)
	}
	return nil
}
