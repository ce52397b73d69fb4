package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// resolveMode settles req.Mode to batch or on_demand: auto runs a batch job
// when the model runs in batch and the job reaches the provider's minimum, on
// demand below it when the model and this deployment can; explicit modes are
// checked against the model's modes.
func (s *Service) resolveMode(req *SubmitRequest, prov service.BatchProvider, m *model.Model) error {
	n := len(req.Records)
	lim := s.limitsFor(prov, req.Model)
	if req.Mode == job.ModeOnDemand && !s.abilities(prov).OnDemand {
		return job.Fieldf("mode", "on_demand is not available for provider %s; its jobs run as %s (omit mode)", prov.Name(), lim.Title)
	}
	if req.Mode == job.ModeOnDemand && s.OnDemand == nil {
		return job.Fieldf("mode", "on_demand is not available in this deployment; use batch with at least %d records", lim.MinRecords)
	}
	mode, err := modeFor(m, req.Mode, n, lim, s.runsOnDemand(prov))
	if err != nil {
		return err
	}
	req.autoMode = req.Mode == "" || req.Mode == job.ModeAuto
	req.Mode = mode
	if m.Task == model.TaskText && m.MaxOutputTokens > 0 {
		// checkModel allowed the batch maximum before the mode was settled.
		if err := checkMaxTokens(m, req.Params.MaxTokens, req.Mode); err != nil {
			return err
		}
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
			return nil, s.notAllowed(req.Model, p.Models())
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
	return nil, s.notAllowed(req.Model, reg.Models())
}

// notAllowed refuses a model outside the allow-list: for its end of life when
// it has reached it (the user needs the successor, not another deployment).
func (s *Service) notAllowed(id string, allowed []string) error {
	cat := s.Models.Catalog
	if cat == nil {
		cat = model.Default()
	}
	if err := cat.EndOfLife(id, s.Clock.Now()); err != nil {
		return job.Fieldf("model", "%v; nothing was submitted", err)
	}
	return &service.ModelError{Model: id, Allowed: allowed}
}
