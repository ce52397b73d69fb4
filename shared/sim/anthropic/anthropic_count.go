package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// POST /v1/messages/count_tokens of the Anthropic simulator, as the Token
// Count API documents it (https://platform.claude.com/docs/en/api/messages-count-tokens
// and https://platform.claude.com/docs/en/build-with-claude/token-counting,
// checked 2026-12-01):
//   - the body is a Messages request without max_tokens: model and messages
//     required; system, tools, tool_choice, thinking, cache_control,
//     output_config and speed optional (the fields of the Go SDK v2.15's
//     MessageCountTokensParams). Any other field (max_tokens, temperature,
//     stream, ...) is refused: "max_tokens: Extra inputs are not permitted",
//     as the API answers (seen by API proxies that had to strip max_tokens,
//     e.g. Wei-Shaw/sub2api#4913, 2026-07-26).
//   - the answer is {"input_tokens": N}, from the same tokenizer that bills
//     the simulator's batch results (billedInput), so a count and a billed
//     usage of the same request agree: N = input_tokens +
//     cache_creation_input_tokens + cache_read_input_tokens of the result.
//   - no anthropic-beta header is needed (the token-counting-2024-11-01 beta
//     has ended; the header is accepted and ignored); anthropic-version and
//     the key are checked as for every call (ServeHTTP).
//   - bodies over 32 MB get 413 request_too_large; a malformed or incomplete
//     body 400 invalid_request_error naming the field; images and documents
//     are checked as in a batch request; a model the provider has retired
//     404 not_found_error ("all active models support token counting").
//   - counting is free but rate limited per minute, apart from message
//     creation: CountBusy answers 429 rate_limit_error while it returns true.

// countTokensMaxBytes is the Token Counting API's request size limit (32 MB,
// as the Messages API's: https://platform.claude.com/docs/en/api/errors).
const countTokensMaxBytes = 32 << 20

// countTokensFields are the body fields the Token Count API takes.
var countTokensFields = []string{"cache_control", "messages", "model", "output_config", "speed", "system", "thinking", "tool_choice", "tools"}

// billedInput is the tokenizer of the simulated Messages API: a request's
// input tokens (text, tool definitions, and images and documents by their
// seenPart sizes), its cacheable system prefix, and what its image and
// document blocks held; err refuses one of those blocks.
func billedInput(p *wireParams) (in int64, prefix string, seen []sim.SeenPart, err error) {
	in, prefix = requestTokens(p.System, p.Messages, p.Tools)
	seen, err = sim.ClaudeMedia(sim.MessageContents(p.Messages), anthropicModal(p.Model), false)
	return in + sim.SeenTokens(seen), prefix, seen, err
}

func (s *AnthropicSim) countTokens(w http.ResponseWriter, r *http.Request) {
	s.count("count_tokens")
	if s.CountBusy != nil && s.CountBusy() {
		w.Header().Set("retry-after", "1") // the API says when to retry a 429
		anthropicError(w, http.StatusTooManyRequests, "rate_limit_error", "token counting rate limit exceeded (requests per minute); retry after the retry-after header")
		return
	}
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, countTokensMaxBytes)).Decode(&raw); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			anthropicError(w, http.StatusRequestEntityTooLarge, "request_too_large", "Request exceeds the maximum allowed number of bytes.")
			return
		}
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "malformed JSON body: "+err.Error())
		return
	}
	if msg := checkCountBody(raw); msg != "" {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	var p wireParams
	_ = json.Unmarshal(raw["model"], &p.Model) // checked a string above
	p.Messages, p.System, p.Tools = raw["messages"], raw["system"], raw["tools"]
	if why := anthropicVersions[r.Header.Get("anthropic-version")].versionRefusal("", &p); why != "" {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", why)
		return
	}
	if anthropicModels[p.Model].lifecycle.stage == "retired" {
		anthropicError(w, http.StatusNotFound, "not_found_error", "model: "+p.Model)
		return
	}
	if _, known := anthropicModels[p.Model]; !known {
		s.permissive.Warn(s.Log, "anthropic sim", p.Model, "model id not in the simulator's table")
	}
	in, _, _, err := billedInput(&p)
	if err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	writeAnthropicJSON(w, map[string]int64{"input_tokens": max(1, in)})
}

// checkCountBody says what is wrong with a count_tokens body ("" if nothing),
// in the API's wording: unknown fields first (in name order, so the answer
// does not depend on map order), then model, then the messages' shape.
func checkCountBody(raw map[string]json.RawMessage) string {
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(countTokensFields, k) {
			return k + ": Extra inputs are not permitted"
		}
	}
	var model string
	switch m, ok := raw["model"]; {
	case !ok:
		return "model: Field required"
	case json.Unmarshal(m, &model) != nil:
		return "model: Input should be a valid string"
	case model == "":
		return "model: String should have at least 1 character"
	}
	// Optional fields may be null (absent); otherwise of their type.
	if sys, ok := raw["system"]; ok && sys[0] != '"' && sys[0] != '[' && string(sys) != "null" {
		return "system: Input should be a valid string or a list of text blocks"
	}
	if tools, ok := raw["tools"]; ok && tools[0] != '[' && string(tools) != "null" {
		return "tools: Input should be a valid list"
	}
	msgsRaw, ok := raw["messages"]
	if !ok {
		return "messages: Field required"
	}
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(msgsRaw, &msgs) != nil {
		return "messages: Input should be a valid list of message objects"
	}
	if len(msgs) == 0 {
		return "messages: at least one message is required"
	}
	for i, m := range msgs {
		var role string
		_ = json.Unmarshal(m["role"], &role)
		switch {
		case m["role"] == nil:
			return fmt.Sprintf("messages.%d.role: Field required", i)
		case role != "user" && role != "assistant":
			return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		case m["content"] == nil:
			return fmt.Sprintf("messages.%d.content: Field required", i)
		}
		if c := m["content"]; c[0] != '"' && c[0] != '[' {
			return fmt.Sprintf("messages.%d.content: Input should be a valid string or a list of content blocks", i)
		}
	}
	return ""
}
