package batch

import (
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// checkModel holds a submit to what the catalog says of its model: the
// provider that serves it, the modes it runs in, its output-token maximum and
// its task. Errors name the field, the model and the allowed values.
func (s *Service) checkModel(req *SubmitRequest, prov service.BatchProvider) (*model.Model, error) {
	m, ok := s.LookupModel(req.Model)
	if !ok {
		// The deployment allows the id, but neither the catalog nor the
		// account's model list (refreshed daily) knows it.
		return nil, job.Fieldf("model", "%q has no entry in the model catalog of this deployment and the account's model list does not offer it; an operator adds it with MCPBATCH_MODELS_JSON (see list_models)", req.Model)
	}
	if m.Provider != prov.Name() {
		return nil, job.Fieldf("provider", "model %s is served by %s, not %s", m.ID, m.Provider, prov.Name())
	}
	switch {
	case req.Params.MaxTokens == 0:
		req.Params.MaxTokens = job.DefaultMaxTokens
		if m.MaxOutputTokens > 0 {
			req.Params.MaxTokens = min(job.DefaultMaxTokens, m.MaxOutputTokens)
		}
	case m.Task == model.TaskText && m.MaxOutputTokens == 0 && req.Params.MaxTokens < 1: // a model only the account knows: its limit is the provider's to enforce
		return nil, job.Fieldf("max_tokens", "must be at least 1 for model %s (got %d)", m.ID, req.Params.MaxTokens)
	case m.Task == model.TaskText && m.MaxOutputTokens > 0 && (req.Params.MaxTokens < 1 || req.Params.MaxTokens > m.MaxOutputTokens):
		return nil, job.Fieldf("max_tokens", "must be 1..%d for model %s (got %d)", m.MaxOutputTokens, m.ID, req.Params.MaxTokens)
	}
	if m.Task == model.TaskEmbedding {
		if err := checkEmbedding(req, m); err != nil {
			return nil, err
		}
		return m, nil
	}
	if req.Params.Embed != nil {
		return nil, job.Fieldf("dimensions", "model %s is a text model; dimensions, normalize, input_type and truncate are for embedding models", m.ID)
	}
	if req.Index != nil {
		return nil, job.Fieldf("index", "model %s is a text model; only embedding models (task embedding in list_models) write into an index", m.ID)
	}
	for i, r := range req.Records {
		if r.Text != "" {
			return nil, job.Fieldf(fmt.Sprintf("records[%d].text", i), "model %s is a text model: give prompt or messages; text is for embedding models", m.ID)
		}
	}
	return m, nil
}

// modeFor settles auto and checks an explicit mode against the modes the
// catalog lists for the model.
func modeFor(m *model.Model, mode string, n int, lim service.BatchLimits, onDemand bool) (string, error) {
	batchOK, odOK := m.Supports(model.ModeBatch), m.Supports(model.ModeOnDemand) && onDemand && lim.OnDemand
	switch mode {
	case "", job.ModeAuto:
		switch {
		case batchOK && (n == 0 || n >= lim.MinRecords || !odOK): // n == 0: a file, counted later
			return job.ModeBatch, nil
		case odOK:
			return job.ModeOnDemand, nil
		}
		return "", job.Fieldf("mode", "model %s runs %s only, which this deployment cannot run", m.ID, modes(m))
	case job.ModeBatch:
		if !batchOK {
			return "", job.Fieldf("mode", "model %s does not run as a batch job; its modes: %s", m.ID, modes(m))
		}
	case job.ModeOnDemand:
		if !m.Supports(model.ModeOnDemand) {
			return "", job.Fieldf("mode", "model %s does not run on demand; its modes: %s", m.ID, modes(m))
		}
	default:
		return "", job.Fieldf("mode", "must be auto, batch or on_demand (got %q)", mode)
	}
	return mode, nil
}

func modes(m *model.Model) string {
	var out []string
	for _, md := range m.Modes {
		out = append(out, string(md))
	}
	return strings.Join(out, ", ")
}
