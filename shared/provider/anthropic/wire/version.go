package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// APIVersion is the anthropic-version header this suite sends: the default of
// the Go SDK in go.mod (anthropic-sdk-go v2.15.0 sets it in
// internal/requestconfig/requestconfig.go; checked 2026-12-01).
const APIVersion = "2026-10-21"

// VersionRules are what one anthropic-version refuses in a Messages request,
// whatever the model.
type VersionRules struct {
	// Sampling parameters refused even at their default values.
	RefusesSampling []string
	// A document block in an assistant turn.
	RefusesAssistantDocument bool
	// A non-empty citations array on a user text block.
	RefusesUserCitations bool
}

// versionRules, from https://platform.claude.com/docs/en/api/versioning and
// https://platform.claude.com/docs/en/about-claude/model-deprecations (API
// parameter retirements), as of 2026-12-01. 2023-06-01 allows all three.
var versionRules = map[string]VersionRules{
	"2023-06-01": {},
	"2026-10-21": {
		RefusesSampling:          []string{"temperature", "top_p", "top_k"},
		RefusesAssistantDocument: true,
		RefusesUserCitations:     true,
	},
}

// Rules returns the rules of an API version; an unknown version has none
// known here (the API is the judge).
func Rules(version string) VersionRules { return versionRules[version] }

// CheckParams refuses job-level settings the API version this suite sends
// refuses, before anything is stored: a temperature, even 1.0 (the default).
func CheckParams(model string, p job.Params) error {
	r := Rules(APIVersion)
	if p.Temperature != nil && slices.Contains(r.RefusesSampling, "temperature") {
		return job.Fieldf("temperature", "the Anthropic API version %s that this deployment sends refuses temperature for every model, even at its default (model %s); leave it out", APIVersion, model)
	}
	return nil
}

// contentBlock is what checkBody reads of a message content block.
type contentBlock struct {
	Type      string          `json:"type"`
	Citations json.RawMessage `json:"citations"`
}

// checkBody refuses what the API version refuses inside one request's
// params: sampling fields (model_input), an assistant document block, a
// user text block with citations. Bodies that cannot hold any of them skip
// the decode.
func checkBody(f func(string) string, model string, body []byte, fromModelInput bool) error {
	r := Rules(APIVersion)
	mayHold := fromModelInput || bytes.Contains(body, []byte(`"document"`)) || bytes.Contains(body, []byte(`"citations"`))
	if !mayHold {
		return nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil // the caller already encoded it; nothing to add
	}
	for _, k := range r.RefusesSampling {
		if _, ok := top[k]; ok {
			return job.Fieldf(f("model_input."+k), "the Anthropic API version %s that this deployment sends refuses %s for every model, even at its default (model %s); leave it out", APIVersion, k, model)
		}
	}
	if !r.RefusesAssistantDocument && !r.RefusesUserCitations {
		return nil
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(top["messages"], &msgs) != nil {
		return nil
	}
	prefix := "messages"
	if fromModelInput {
		prefix = "model_input.messages"
	}
	for i, m := range msgs {
		if len(m.Content) == 0 || m.Content[0] != '[' {
			continue
		}
		var blocks []contentBlock
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for j, b := range blocks {
			switch {
			case r.RefusesAssistantDocument && m.Role == "assistant" && b.Type == "document":
				return job.Fieldf(f(fmt.Sprintf("%s[%d].content[%d]", prefix, i, j)), "the Anthropic API version %s that this deployment sends refuses a document block in an assistant turn (model %s); move the document into a user turn", APIVersion, model)
			case r.RefusesUserCitations && m.Role == "user" && b.Type == "text" && nonEmptyArray(b.Citations):
				return job.Fieldf(f(fmt.Sprintf("%s[%d].content[%d].citations", prefix, i, j)), "the Anthropic API version %s that this deployment sends refuses citations on a user text block (model %s); leave them out", APIVersion, model)
			}
		}
	}
	return nil
}

func nonEmptyArray(raw json.RawMessage) bool {
	var items []json.RawMessage
	return json.Unmarshal(raw, &items) == nil && len(items) > 0
}
