package batch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// StartNew starts the parts of a job just stored, as many as the provider's
// quota leaves room for.
func (s *Service) StartNew(ctx context.Context, prov service.BatchProvider, j *job.Job) (*job.Job, error) {
	room, err := s.roomAtSubmit(ctx, prov, j)
	if err != nil {
		return nil, err
	}
	j, _, err = s.StartParts(ctx, j.ID, room)
	return j, err
}

// StartParts submits up to room queued parts (room < 0: all). A full provider
// quota leaves a part queued for the reconciler; any other provider error fails
// the job with the provider's message. A job's budget may hold parts (see
// budget.go); when the held parts stop, the job moves to ingesting here.
//
// Each part is claimed first with a submitting lease (a conditional write), so
// a reconciler run that overlaps a slow create leaves the part alone. A Ref
// never overwrites another: a second provider job made for a part that has one,
// or one that arrives for a part cancelled meanwhile, is stopped at once.
func (s *Service) StartParts(ctx context.Context, id string, room int) (*job.Job, int, error) {
	j, err := s.Store.GetJob(ctx, id)
	if err != nil {
		return nil, 0, fmt.Errorf("reload job %s: %w", id, err)
	}
	if j.BudgetUSD > 0 && StartPending(j) {
		j = s.recordSpent(ctx, j)
	}
	prov := s.Providers.Get(j.Provider)
	before := j.Status
	run := newRunID()
	started := 0
	var errs []error
	for _, p := range j.Parts {
		if !startable(p) {
			continue
		}
		if room >= 0 && started >= room && p.Status == job.StatusQueued {
			j, err = s.markWaiting(ctx, id, p.Index)
			if err != nil {
				return nil, started, err
			}
			continue
		}
		if s.abilities(prov).FindSubmitted != nil && p.Status == job.StatusQueued {
			// Read first, so a part waiting for the slot writes nothing.
			taken, err := s.slotTaken(ctx, j, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if taken {
				continue
			}
		}
		idx := p.Index
		claimed, cj, err := s.claimPart(ctx, id, idx, run)
		if err != nil {
			return nil, started, err
		}
		j = cj
		if claimed == nil {
			continue // another run is submitting it, or it moved on
		}
		in := service.BatchSubmit{
			Name: p.Name, ClientToken: p.Name, Model: j.Model, InputURI: p.InputURI, OutputURI: p.OutputURI,
			TimeoutHrs: s.TimeoutHours, Tags: map[string]string{"mcpbatch:job": j.ID, "mcpbatch:owner-hash": service.OwnerTag(j.Owner)},
			Records: p.RecordCount, InvocationType: p.InvocationType, BetaHeaders: s.betaHeaders(j),
		}
		var ref string
		if claimed.Status == job.StatusCancelling {
			ref, err = s.lookFor(ctx, prov, j, *claimed, in)
		} else {
			ref, err = s.create(ctx, prov, j, *claimed, in)
		}
		now := s.Clock.Now()
		var unknown *unknownOutcome
		if errors.Is(err, service.ErrSubmitUnproven) {
			// A provider job that may be the part's (or another part's whose
			// Ref is not written yet, or another system's) cannot be told
			// apart yet: keep the lease and look again once it runs out.
			service.Logger(s.Log).WarnContext(ctx, "provider jobs may be the part's and cannot be proved so yet; part stays leased", "job_id", id, "part", idx, "error", err)
			continue
		}
		if errors.As(err, &unknown) {
			// The create may have made a job we cannot see yet: keep the lease;
			// after it runs out the next run looks for the job before creating.
			service.Logger(s.Log).WarnContext(ctx, "provider job of part unknown; part stays leased", "job_id", id, "part", idx, "error", err)
			errs = append(errs, err)
			continue
		}
		if s.abilities(prov).FindSubmitted != nil {
			// The outcome is known (and written below): others may create.
			defer s.giveSlot(ctx, j, *claimed)
		}
		if busy(err) {
			// The provider cannot take it now: stay queued; the reconciler retries.
			service.Logger(s.Log).InfoContext(ctx, "provider busy; part stays queued", "job_id", id, "part", idx, "error", err)
			if j, err = s.releasePart(ctx, id, idx, run); err != nil {
				return nil, started, err
			}
			if j, err = s.markWaiting(ctx, id, idx); err != nil {
				return nil, started, err
			}
			room = started // no more tries this time: the quota is full
			continue
		}
		if err == nil {
			started++
		}
		var stop string
		j, err = s.updatePart(ctx, id, idx, func(part *job.Part) {
			stop = ""
			part.SubmitLease, part.SubmitLeaseUntil = "", time.Time{}
			switch {
			case err != nil && part.Status == job.StatusQueued:
				part.Status = job.StatusFailed
				part.ProviderStatus = "SubmitFailed"
				part.Message = prov.Limits().Title + " refused the job: " + err.Error()
			case err != nil && part.Status == job.StatusCancelling && part.Ref == "":
				part.Status = job.StatusCancelled // no provider job of it can be adopted
			case err != nil:
			case ref == "":
				if part.Status == job.StatusCancelling && part.Ref == "" {
					part.Status = job.StatusCancelled // its create made nothing
				}
			case part.Ref != "" && part.Ref != ref:
				stop = ref // a second job for the part: the first one stays
			case part.Status.Terminal() || part.Status == job.StatusCancelling:
				// Cancelled while the create was on the wire.
				part.Ref = ref
				stop = ref
			default:
				part.Ref = ref
				if job.CanMove(part.Status, job.StatusSubmitted) {
					part.Status = job.StatusSubmitted
					part.ProviderStatus = prov.SubmittedStatus()
				}
			}
		}, now)
		if err != nil {
			return nil, started, err
		}
		if stop != "" {
			service.Logger(s.Log).WarnContext(ctx, "stopping a provider job that arrived for a part cancelled or already started", "job_id", id, "part", idx, "ref", stop)
			if serr := prov.Stop(ctx, stop); serr != nil {
				errs = append(errs, fmt.Errorf("stop provider job %s of job %s part %d: %w", stop, id, idx, serr))
			}
		}
		if j.SubmittedAt.IsZero() && ref != "" && stop == "" {
			j, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error { j.SubmittedAt = now; j.LastEventAt = now; return nil })
			if err != nil {
				return nil, started, fmt.Errorf("stamp submit of %s: %w", id, err)
			}
		}
	}
	if j.Status == job.StatusFailed || (j.Status == job.StatusCancelled && before != job.StatusCancelled) {
		s.Telemetry.PublishCompleted(ctx, j)
	}
	if j.Status == job.StatusIngesting && before != job.StatusIngesting {
		// The held parts stopped at the budget and nothing else runs: the
		// parts that ran are ingested.
		if err := s.AfterStatus(ctx, j); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		service.Logger(s.Log).ErrorContext(ctx, "start parts", "job_id", id, "error", errors.Join(errs...))
	}
	return j, started, nil
}

func (s *Service) updatePart(ctx context.Context, id string, idx int, fn func(*job.Part), now time.Time) (*job.Job, error) {
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		if idx < 0 || idx >= len(j.Parts) {
			return fmt.Errorf("job %s has no part %d", id, idx)
		}
		fn(&j.Parts[idx])
		service.Settle(s.Providers.Get(j.Provider), j, now)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update job %s part %d: %w", id, idx, err)
	}
	return j, nil
}

// betaHeaders are the beta flags a job's provider creates must send: the
// catalog's batch-output beta when max_tokens is above the normal maximum
// (submit allowed it for batch mode only).
func (s *Service) betaHeaders(j *job.Job) []string {
	if j.Params == nil {
		return nil
	}
	m, ok := s.Models.LookupModel(j.Model)
	if !ok {
		return nil
	}
	if b := m.BatchBeta(j.Params.MaxTokens); b != "" {
		return []string{b}
	}
	return nil
}
