package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// ProviderEvent is a provider's state change for one provider job.
type ProviderEvent struct {
	JobName string // provider job name: <prefix>-<job id>[-p<n>]
	Ref     string // provider job ARN
	Status  string // provider's word
	Message string
}

// OnProviderEvent applies a provider's state change for one of its jobs (a
// Bedrock "Batch Inference Job State Change" event, or a poll's answer). It is
// idempotent and order tolerant: a status never moves back, duplicates change
// nothing, and events for jobs we do not know are acknowledged and ignored (the
// default bus carries every batch job in the account).
func (s *Service) OnProviderEvent(ctx context.Context, ev ProviderEvent) error {
	log := service.Logger(s.Log).With("job_name", ev.JobName, "provider_status", ev.Status)
	id, idx, ok := service.ParseJobName(s.JobPrefix, ev.JobName)
	if !ok {
		log.InfoContext(ctx, "event for a job this stack did not create; ignored")
		return nil
	}
	j, _, _, err := s.ApplyState(ctx, id, idx, ev)
	switch {
	case errors.Is(err, store.ErrNotFound):
		log.InfoContext(ctx, "event for an unknown or expired job; ignored", "job_id", id)
		return nil
	case errors.Is(err, errUnknownPart):
		log.WarnContext(ctx, "event for an unknown part; ignored", "error", err)
		return nil
	case errors.Is(err, errUnknownStatus):
		log.WarnContext(ctx, "unknown provider status; ignored", "error", err)
		return nil
	case errors.Is(err, store.ErrNoChange):
		log.InfoContext(ctx, "duplicate or late event; status unchanged", "job_id", id, "status", j.Status)
	case err != nil:
		return fmt.Errorf("apply %s to job %s: %w", ev.Status, id, err)
	default:
		log.InfoContext(ctx, "job status applied", "job_id", id, "status", j.Status)
		s.stopLateRef(ctx, j, idx, ev)
	}
	return s.AfterStatus(ctx, j)
}

// stopLateRef stops a provider job whose Ref first arrived by event for a part
// already cancelled (cancel_job ran while the create was on the wire, and the
// submitting run died before it could stop it).
func (s *Service) stopLateRef(ctx context.Context, j *job.Job, idx int, ev ProviderEvent) {
	if j == nil || idx >= len(j.Parts) {
		return
	}
	p := j.Parts[idx]
	prov := s.Providers.Get(j.Provider)
	outcome, ok := prov.Outcome(ev.Status, p.CancelRequested)
	if p.Status != job.StatusCancelled || p.CancelRequested || ev.Ref == "" || p.Ref != ev.Ref || !ok || outcome.Ended {
		return
	}
	service.Logger(s.Log).WarnContext(ctx, "stopping a provider job that arrived for a cancelled part", "job_id", j.ID, "part", idx, "ref", ev.Ref)
	if err := prov.Stop(ctx, ev.Ref); err != nil {
		service.Logger(s.Log).ErrorContext(ctx, "stop late provider job", "job_id", j.ID, "part", idx, "ref", ev.Ref, "error", err)
	}
}

var (
	errUnknownPart   = errors.New("unknown part")
	errUnknownStatus = errors.New("unknown provider status")
)

// ApplyState moves part idx of job id forward by the provider's word for it:
// to a later neutral status, or to a later provider step within the same one.
// It reports whether this write moved the part and the job's status before it;
// a move that is not forward is store.ErrNoChange.
func (s *Service) ApplyState(ctx context.Context, id string, idx int, ev ProviderEvent) (*job.Job, bool, job.Status, error) {
	now := s.Clock.Now()
	var moved bool
	var was job.Status
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		moved, was = false, j.Status
		if idx >= len(j.Parts) {
			return fmt.Errorf("%w: job %s has %d parts, event names part %d", errUnknownPart, id, len(j.Parts), idx+1)
		}
		prov := s.Providers.Get(j.Provider)
		p := &j.Parts[idx]
		outcome, ok := prov.Outcome(ev.Status, p.CancelRequested)
		if !ok {
			return fmt.Errorf("%w: job %s part %d: %s status %q", errUnknownStatus, id, idx, prov.Name(), ev.Status)
		}
		if p.Ref == "" && ev.Ref != "" {
			p.Ref = ev.Ref
			moved = true
		}
		switch {
		case advancePart(p, outcome.Status, ev.Status, ev.Message):
			moved = true
		case p.Status == outcome.Status && prov.Later(p.ProviderStatus, ev.Status):
			// Same neutral status, later provider step (Validating → Scheduled).
			p.ProviderStatus = ev.Status
			moved = true
		}
		if !moved {
			return store.ErrNoChange
		}
		j.LastEventAt = now
		service.Settle(s.Providers.Get(j.Provider), j, now)
		return nil
	})
	return j, moved, was, err
}

// advancePart moves a part forward to status with the provider's word for it; it
// reports false, changing nothing, for a move that is not forward.
func advancePart(p *job.Part, status job.Status, providerStatus, message string) bool {
	if !job.CanMove(p.Status, status) {
		return false
	}
	p.Status = status
	p.ProviderStatus = providerStatus
	if message != "" {
		p.Message = message
	}
	return true
}

// AfterStatus publishes what a status calls for. Publishing "Job Output Ready" is
// recorded on the job, so a retried event republishes only when the first try failed.
func (s *Service) AfterStatus(ctx context.Context, j *job.Job) error {
	switch {
	case j.Status == job.StatusIngesting && !j.OutputReadyPublished:
		if err := s.Bus.Publish(ctx, config.DetailJobOutputReady, service.OutputReady{JobID: j.ID, Provider: j.Provider}); err != nil {
			return fmt.Errorf("publish output ready for %s: %w", j.ID, err)
		}
		_, err := s.Store.UpdateJob(ctx, j.ID, func(j *job.Job) error {
			if j.OutputReadyPublished {
				return store.ErrNoChange
			}
			j.OutputReadyPublished = true
			return nil
		})
		if err != nil && !errors.Is(err, store.ErrNoChange) {
			return fmt.Errorf("record output ready for %s: %w", j.ID, err)
		}
	case j.Status == job.StatusFailed:
		s.Telemetry.PublishCompleted(ctx, j)
	}
	return nil
}
