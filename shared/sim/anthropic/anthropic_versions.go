package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// anthropicVersion is what one anthropic-version header value refuses in a
// Messages request. The simulator's own table, copied from
// https://platform.claude.com/docs/en/api/versioning (checked 2026-12-01),
// not the product's: 2026-10-21 removed the sampling parameters (refused
// even at their defaults: "temperature: Extra inputs are not permitted") and
// refuses a document block in an assistant turn and non-empty citations on a
// user text block; 2023-06-01 allows all of them.
type anthropicVersion struct {
	noSampling, noAssistantDocument, noUserCitations bool
}

var anthropicVersions = map[string]anthropicVersion{
	"2023-01-01": {},
	"2023-06-01": {},
	"2026-10-21": {noSampling: true, noAssistantDocument: true, noUserCitations: true},
}

// versionRefusal says why params break the rules of version v ("" when they
// do not), in the API's wording, each field's path prefixed with at (e.g.
// "requests.3.params.", or "" for a body that is the params).
func (v anthropicVersion) versionRefusal(at string, wp *wireParams) string {
	if v.noSampling {
		for _, f := range []struct {
			name string
			v    json.RawMessage
		}{{"temperature", wp.Temperature}, {"top_p", wp.TopP}, {"top_k", wp.TopK}} {
			if len(f.v) > 0 { // present, even as null or the default value
				return fmt.Sprintf("%s%s: Extra inputs are not permitted", at, f.name)
			}
		}
	}
	msgsRaw := wp.Messages
	if !(v.noAssistantDocument && bytes.Contains(msgsRaw, []byte(`"document"`))) && !(v.noUserCitations && bytes.Contains(msgsRaw, []byte(`"citations"`))) {
		return "" // nothing the rules could refuse; skip the decode
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(msgsRaw, &msgs) != nil {
		return ""
	}
	for j, m := range msgs {
		var blocks []struct {
			Type      string            `json:"type"`
			Citations []json.RawMessage `json:"citations"`
		}
		if len(m.Content) == 0 || m.Content[0] != '[' || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for k, b := range blocks {
			switch {
			case v.noAssistantDocument && m.Role == "assistant" && b.Type == "document":
				return fmt.Sprintf("%smessages.%d.content.%d: document blocks are not permitted in assistant messages", at, j, k)
			case v.noUserCitations && m.Role == "user" && b.Type == "text" && len(b.Citations) > 0:
				return fmt.Sprintf("%smessages.%d.content.%d.citations: citations are not permitted on text blocks in user messages", at, j, k)
			}
		}
	}
	return ""
}

// nonDefaultSampling names the first sampling parameter a request sets to
// other than its default (temperature 1; top_p and top_k have none), or "".
func nonDefaultSampling(wp *wireParams) string {
	if t := wp.Temperature; len(t) > 0 && string(t) != "null" {
		var v float64
		if json.Unmarshal(t, &v) != nil || v != 1 {
			return "temperature"
		}
	}
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"top_p", wp.TopP}, {"top_k", wp.TopK}} {
		if len(f.v) > 0 && string(f.v) != "null" {
			return f.name
		}
	}
	return ""
}
