package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// DefaultQuota is the default quota of submitted + in-progress batch jobs per
// model for a quota-limited provider (Bedrock's documented default is 20).
const DefaultQuota = 20

// QuotaOf is the quota of a model: the operator's per-model setting (a
// deliberate share of the account's quota), else the account's Service Quota
// for the model as the refresh read it, else the operator's default, else
// DefaultQuota.
func (s *Service) QuotaOf(model string) int {
	if q, ok := s.Quota[model]; ok && q > 0 {
		return q
	}
	if q := s.accountQuota(model); q > 0 {
		return q
	}
	if s.DefaultQuota > 0 {
		return s.DefaultQuota
	}
	return DefaultQuota
}

// roomAtSubmit is how many parts of a new job may start now: all for providers
// without a quota; for the others, what the model's quota leaves, and none
// while older jobs of the model wait, so queued jobs start in the order they came.
func (s *Service) roomAtSubmit(ctx context.Context, prov service.BatchProvider, j *job.Job) (int, error) {
	if !s.abilities(prov).QuotaLimited {
		return -1, nil
	}
	inflight, err := s.Store.ListInFlight(ctx, prov.Name(), s.Clock.Now().Add(1), job.MaxPageSize)
	if err != nil {
		return 0, fmt.Errorf("count in-flight %s jobs: %w", prov.Name(), err)
	}
	active, waiting := 0, false
	for _, o := range inflight {
		if o.Model != j.Model || o.ID == j.ID {
			continue
		}
		for _, p := range o.Parts {
			switch {
			case OccupiesQuota(p):
				active++
			case p.Status == job.StatusQueued && !p.Held: // a held part waits for its job, not for room
				waiting = true
			}
		}
	}
	if waiting {
		return 0, nil
	}
	return max(0, s.QuotaOf(j.Model)-active), nil
}

// OccupiesQuota: submitted and running jobs count against the quota.
func OccupiesQuota(p job.Part) bool {
	return p.Ref != "" && p.Status.Rank() >= job.StatusSubmitted.Rank() && p.Status.Rank() <= job.StatusCancelling.Rank()
}

// WaitingForQuota is the provider_status of a part queued behind the quota.
const WaitingForQuota = "WaitingForQuota"

// markWaiting records on a queued part that it waits for room at the provider.
func (s *Service) markWaiting(ctx context.Context, id string, idx int) (*job.Job, error) {
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		p := &j.Parts[idx]
		if p.Status != job.StatusQueued || p.ProviderStatus == WaitingForQuota || p.Held {
			return store.ErrNoChange
		}
		p.ProviderStatus = WaitingForQuota
		service.Settle(s.Providers.Get(j.Provider), j, s.Clock.Now())
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return nil, fmt.Errorf("mark job %s part %d waiting: %w", id, idx, err)
	}
	return j, nil
}

func busy(err error) bool {
	return errors.Is(err, service.ErrQuotaFull) || errors.Is(err, service.ErrProviderBusy)
}
