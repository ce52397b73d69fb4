package batch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// checkModel holds a submit to what the catalog says of its model: the
// provider that serves it, the modes it runs in, its output-token maximum and
// its task. Errors name the field, the model and the allowed values.
func (s *Service) checkModel(req *SubmitRequest, prov service.BatchProvider) (*model.Model, error) {
	m, ok := s.Models.LookupModel(req.Model)
	if !ok {
		// The deployment allows the id, but neither the catalog nor the
		// account's model list (refreshed daily) knows it.
		return nil, job.Fieldf("model", "%q has no entry in the model catalog of this deployment and the account's model list does not offer it; an operator adds it with MCPBATCH_MODELS_JSON (see list_models)", req.Model)
	}
	if m.Provider != prov.Name() {
		return nil, job.Fieldf("provider", "model %s is served by %s, not %s", m.ID, m.Provider, prov.Name())
	}
	warning, err := m.Usable(s.Clock.Now())
	if err != nil {
		return nil, job.Fieldf("model", "%v; nothing was submitted", err)
	}
	if warning != "" && !slices.Contains(req.Warnings, warning) {
		req.Warnings = append(req.Warnings, warning)
	}
	if req.Params.Temperature != nil && !m.AcceptsSampling(model.SamplingTemperature) {
		return nil, job.Fieldf("temperature", "model %s (%s) does not accept temperature%s; leave it out", m.ID, m.Name, acceptedSampling(m))
	}
	switch {
	case req.Params.MaxTokens == 0:
		req.Params.MaxTokens = job.DefaultMaxTokens
		if m.MaxOutputTokens > 0 {
			req.Params.MaxTokens = min(job.DefaultMaxTokens, m.MaxOutputTokens)
		}
	case m.Task == model.TaskText && m.MaxOutputTokens == 0 && req.Params.MaxTokens < job.MinMaxTokens: // a model only the account knows: its limit is the provider's to enforce
		return nil, job.Fieldf("max_tokens", "must be at least %d for model %s (got %d)", job.MinMaxTokens, m.ID, req.Params.MaxTokens)
	case m.Task == model.TaskText && m.MaxOutputTokens > 0:
		// Batch (or a mode still to settle) may reach the batch maximum;
		// resolveMode holds the settled mode to its own limit.
		if err := checkMaxTokens(m, req.Params.MaxTokens, req.Mode); err != nil {
			return nil, err
		}
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

// checkMaxTokens holds max_tokens to the model's limit in mode, as a field
// error naming the limit (and the batch maximum where there is one).
func checkMaxTokens(m *model.Model, n int, mode string) error {
	if err := m.CheckMaxTokens(n, model.Mode(mode)); err != nil {
		return job.Fieldf("max_tokens", "%s", strings.TrimPrefix(err.Error(), "max_tokens: "))
	}
	return nil
}

// modeFor settles auto and checks an explicit mode against the modes the
// catalog lists for the model; onDemand: the provider's jobs may run on
// demand in this deployment.
func modeFor(m *model.Model, mode string, n int, lim service.BatchLimits, onDemand bool) (string, error) {
	batchOK, odOK := m.Supports(model.ModeBatch), m.Supports(model.ModeOnDemand) && onDemand
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
			why := ""
			if m.Account != nil && m.Account.Batch != "" {
				why = " (" + m.Account.Batch + ")"
			}
			return "", job.Fieldf("mode", "model %s does not run as a batch job%s; its modes: %s", m.ID, why, modes(m))
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

func acceptedSampling(m *model.Model) string {
	if len(m.Sampling) == 0 {
		return " (it takes no sampling parameters)"
	}
	return " (it takes only " + strings.Join(m.Sampling, ", ") + ")"
}

// samplingKeys are where a native or Converse body carries sampling
// parameters: top level (Anthropic Messages, Bedrock Claude), Converse's
// inferenceConfig, and additionalModelRequestFields (top_k on Converse).
var samplingKeys = []struct{ path, param string }{
	{"temperature", model.SamplingTemperature}, {"top_p", model.SamplingTopP}, {"top_k", model.SamplingTopK},
	{"inferenceConfig.temperature", model.SamplingTemperature}, {"inferenceConfig.topP", model.SamplingTopP},
	{"additionalModelRequestFields.top_k", model.SamplingTopK},
}

// outputCapKeys are where a native or Converse body sets its own output
// cap, which the provider honours over the job's max_tokens: the Anthropic
// Messages API and Bedrock's Claude and Mistral bodies (max_tokens),
// Converse and Nova (inferenceConfig.maxTokens), Llama (max_gen_len) and
// Titan Text (textGenerationConfig.maxTokenCount). Source: the Anthropic
// Messages API reference and Amazon Bedrock's "Inference request
// parameters" pages of those families, read 2026-12-03.
var outputCapKeys = []string{"max_tokens", "inferenceConfig.maxTokens", "max_gen_len", "textGenerationConfig.maxTokenCount"}

// recordOutputCap is the most output record r can produce: its model_input's
// own cap when it sets one, else the job's max_tokens.
func recordOutputCap(r *job.Input, jobMax int) int64 {
	if len(r.ModelInput) == 0 {
		return int64(jobMax)
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(r.ModelInput, &body) != nil {
		return int64(jobMax) // the encoder names a malformed body
	}
	for _, k := range outputCapKeys {
		if v, ok := pathValue(body, k); ok {
			var n int64
			if json.Unmarshal(v, &n) == nil && n > 0 {
				return n
			}
		}
	}
	return int64(jobMax)
}

// outputTokens is the most output records [from, to) can produce: what
// budgets, dry runs and deadlines price.
func (r *SubmitRequest) outputTokens(from, to int) int64 {
	var n int64
	for i := from; i < to; i++ {
		n += recordOutputCap(&r.Records[i], r.Params.MaxTokens)
	}
	return n
}

// serverToolPrefixes are the type names of Anthropic's server tools, which
// Anthropic runs and bills per use on top of tokens (web search, web fetch,
// code execution): no estimate can hold them. Source: the Anthropic tool use
// documentation, "Server tools", read 2026-12-03.
var serverToolPrefixes = []string{"web_search_", "web_fetch_", "code_execution_"}

// checkServerTools refuses a record whose model_input asks for a server tool
// (or an MCP server, whose calls Anthropic makes): budgets, dry runs and
// deadlines price tokens only.
func checkServerTools(req *SubmitRequest) error {
	for i, r := range req.Records {
		if len(r.ModelInput) == 0 {
			continue
		}
		var body struct {
			Tools      []struct{ Type string } `json:"tools"`
			MCPServers json.RawMessage         `json:"mcp_servers"`
		}
		if json.Unmarshal(r.ModelInput, &body) != nil {
			continue // the encoder names a malformed body
		}
		if len(body.MCPServers) > 0 && string(body.MCPServers) != "null" {
			return job.Fieldf(fmt.Sprintf("records[%d].model_input.mcp_servers", i), "MCP servers are called by Anthropic and billed beyond the tokens this suite prices; leave them out")
		}
		for k, tl := range body.Tools {
			for _, p := range serverToolPrefixes {
				if strings.HasPrefix(tl.Type, p) {
					return job.Fieldf(fmt.Sprintf("records[%d].model_input.tools[%d]", i, k), "%s is a server tool, billed per use beyond the tokens budgets and dry runs price; leave it out of batch records", tl.Type)
				}
			}
		}
	}
	return nil
}

// checkRecordSampling refuses a record whose model_input sets a sampling
// parameter the model refuses. Models that take every parameter (most) skip
// the scan.
func checkRecordSampling(req *SubmitRequest, m *model.Model) error {
	if m == nil || m.Sampling == nil {
		return nil
	}
	for i, r := range req.Records {
		if len(r.ModelInput) == 0 {
			continue
		}
		var body map[string]json.RawMessage
		if json.Unmarshal(r.ModelInput, &body) != nil {
			continue // the encoder names a malformed body
		}
		for _, k := range samplingKeys {
			if m.AcceptsSampling(k.param) || !hasPath(body, k.path) {
				continue
			}
			return job.Fieldf(fmt.Sprintf("records[%d].model_input.%s", i, k.path), "model %s (%s) does not accept %s%s; leave it out", m.ID, m.Name, k.param, acceptedSampling(m))
		}
	}
	return nil
}

func hasPath(body map[string]json.RawMessage, path string) bool {
	_, ok := pathValue(body, path)
	return ok
}

// pathValue is the value at a dotted path of a body (ok false: absent or null).
func pathValue(body map[string]json.RawMessage, path string) (json.RawMessage, bool) {
	head, rest, nested := strings.Cut(path, ".")
	v, ok := body[head]
	if !ok || string(v) == "null" {
		return nil, false
	}
	if !nested {
		return v, true
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(v, &inner) != nil {
		return nil, false
	}
	return pathValue(inner, rest)
}
