package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// resolveMode settles req.Mode to batch or on_demand (auto: batch when the
// provider allows it, on demand under its minimum when that is available).
func (s *Service) resolveMode(req *SubmitRequest, prov service.BatchProvider) error {
	n := len(req.Records)
	lim := prov.Limits()
	if !lim.OnDemand {
		// Without a minimum size (or a runtime API here) there is nothing to run on demand.
		if req.Mode == job.ModeOnDemand {
			return job.Fieldf("mode", "on_demand is not available for provider %s; its jobs run as %s (omit mode)", prov.Name(), lim.Title)
		}
		req.Mode = job.ModeBatch
		return nil
	}
	switch req.Mode {
	case "", job.ModeAuto:
		req.Mode = job.ModeBatch
		if n > 0 && n < lim.MinRecords && s.OnDemand != nil {
			req.Mode = job.ModeOnDemand
		}
	case job.ModeBatch:
	case job.ModeOnDemand:
		if s.OnDemand == nil {
			return job.Fieldf("mode", "on_demand is not available in this deployment; use batch with at least %d records", lim.MinRecords)
		}
	default:
		return job.Fieldf("mode", "must be auto, batch or on_demand (got %q)", req.Mode)
	}
	if req.Mode == job.ModeOnDemand && n > job.MaxOnDemandRecords {
		return job.Fieldf("records", "%d records is over the on-demand maximum of %d; use mode batch (about half the price)", n, job.MaxOnDemandRecords)
	}
	return nil
}

// checkRunID refuses a caller-chosen job id that is taken, before anything is written.
func (s *Service) checkRunID(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	if !job.ValidID(id) {
		return fmt.Errorf("job id %q is not a valid job id", id)
	}
	_, err := s.Store.GetJob(ctx, id)
	switch {
	case err == nil:
		return fmt.Errorf("%w: %s", service.ErrJobExists, id)
	case errors.Is(err, store.ErrNotFound):
		return nil
	default:
		return fmt.Errorf("check job %s: %w", id, err)
	}
}

// pickProvider settles req.Provider and checks the model against that
// provider's list: a named provider must be registered and allow the model; no
// name picks the first provider that allows it.
func (s *Service) pickProvider(req *SubmitRequest) (service.BatchProvider, error) {
	reg := s.Providers
	if req.Provider != "" {
		p, ok := reg.Lookup(req.Provider)
		if !ok {
			return nil, job.Fieldf("provider", "must be %s on this deployment (got %q)", reg.Names(), service.Truncate(req.Provider, 40))
		}
		if req.Model == "" {
			return nil, job.Fieldf("model", "required; allowed models: %v", p.Models())
		}
		if !p.Allows(req.Model) {
			return nil, &service.ModelError{Model: req.Model, Allowed: p.Models()}
		}
		return p, nil
	}
	if req.Model == "" {
		return nil, job.Fieldf("model", "required; allowed models: %v", reg.Models())
	}
	for _, p := range reg.All() {
		if p.Allows(req.Model) {
			req.Provider = p.Name()
			return p, nil
		}
	}
	return nil, &service.ModelError{Model: req.Model, Allowed: reg.Models()}
}
