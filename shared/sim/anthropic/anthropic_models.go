package anthropic

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// GET /v1/models of the Anthropic simulator: the models of its own table
// (anthropicModels) with their limits, capabilities and lifecycle, paged by
// limit (1..1000, default 20) and after_id as the Models API documents
// (https://docs.claude.com/en/api/models-list, checked 2026-11-30).

// anthropicContextWindow is the input window the simulated models report
// (200K for every model of the table: https://platform.claude.com/docs/en/about-claude/models/overview).
const anthropicContextWindow = 200_000

func (s *AnthropicSim) listModels(w http.ResponseWriter, r *http.Request) {
	s.count("models.list")
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			anthropicError(w, http.StatusBadRequest, "invalid_request_error", "limit: must be an integer from 1 to 1000")
			return
		}
		limit = n
	}
	ids := KnownAnthropicModels()
	start := 0
	if after := q.Get("after_id"); after != "" {
		i := slices.Index(ids, after)
		if i < 0 {
			anthropicError(w, http.StatusBadRequest, "invalid_request_error", "after_id: unknown model id")
			return
		}
		start = i + 1
	}
	end := min(start+limit, len(ids))
	data := make([]map[string]any, 0, end-start)
	epoch := time.Unix(0, 0).UTC().Format(time.RFC3339)
	for _, id := range ids[start:end] {
		m, reads := anthropicModels[id], anthropicModal(id)
		supported := func(b bool) map[string]bool { return map[string]bool{"supported": b} }
		info := map[string]any{
			"type": "model", "id": id, "display_name": "SIMULATED " + id, "created_at": epoch,
			"max_input_tokens": anthropicContextWindow, "max_tokens": m.maxOut,
			"lifecycle": "active", "deprecated_at": nil, "retires_at": nil, "line": nil,
			"capabilities": map[string]any{
				"batch": supported(true), "image_input": supported(reads.Image), "pdf_input": supported(reads.Document),
				"citations": supported(true), "structured_outputs": supported(false), "code_execution": supported(false),
			},
		}
		if lc := m.lifecycle; lc.stage != "" {
			info["lifecycle"] = lc.stage
			info["deprecated_at"] = lc.deprecated + "T00:00:00Z"
			if lc.retire != "" {
				info["retires_at"] = lc.retire + "T00:00:00Z"
			}
		}
		data = append(data, info)
	}
	body := map[string]any{"data": data, "has_more": end < len(ids), "first_id": nil, "last_id": nil}
	if len(data) > 0 {
		body["first_id"], body["last_id"] = data[0]["id"], data[len(data)-1]["id"]
	}
	sim.WriteJSON(w, http.StatusOK, body)
}
