package ondemand

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// claimRun makes run me the job's only runner, unless another run's claim
// still holds (errOtherRun). A terminal job is returned as it is.
func (s *Service) claimRun(ctx context.Context, id, me string) (*job.Job, error) {
	now := s.Clock.Now()
	j, err := s.Jobs.UpdateJob(ctx, id, func(j *job.Job) error {
		o := j.OnDemand
		if j.Status.Terminal() || o == nil {
			return store.ErrNoChange
		}
		if o.Runner != "" && o.Runner != me && now.Before(o.RunnerUntil) {
			return errOtherRun
		}
		o.Runner, o.RunnerUntil = me, now.Add(job.RunClaim)
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return j, nil
	}
	if err != nil && !errors.Is(err, errOtherRun) {
		return nil, fmt.Errorf("claim on-demand run of %s: %w", id, err)
	}
	return j, err
}

// releaseRun gives up run me's claim when it stops, so the next run (a
// redelivered event, the reconciler's nudge) need not wait for it to lapse.
func (s *Service) releaseRun(ctx context.Context, id, me string) {
	_, err := s.Jobs.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.OnDemand == nil || j.OnDemand.Runner != me || j.Status.Terminal() {
			return store.ErrNoChange // an ended job is run no more: its claim need not go
		}
		j.OnDemand.Runner, j.OnDemand.RunnerUntil = "", time.Time{}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) && !errors.Is(err, store.ErrNotFound) {
		service.Logger(s.Log).WarnContext(ctx, "release of an on-demand run's claim failed; it lapses by itself", "job_id", id, "error", err)
	}
}
