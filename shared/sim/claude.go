package sim

// What both Claude simulators (Bedrock's Claude bodies and Anthropic's
// Messages API) read and answer alike: text blocks, the token estimate, the
// output beta flag, and the warning for an id served without rules.

import (
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
)

// Output128k is the beta flag that lifts Claude 3.7 Sonnet's output to 128K
// (anthropic_beta on Bedrock, the anthropic-beta header on Anthropic's API).
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html
const Output128k = "output-128k-2025-02-19"

// Permissive logs, once per simulator and id, that an id is served without rules.
type Permissive struct{ seen sync.Map }

func (p *Permissive) Warn(log *slog.Logger, sim, id, why string) {
	if _, dup := p.seen.LoadOrStore(id, true); dup || log == nil {
		return
	}
	log.Warn(sim+": [simulated] no documented rules for this model id; the simulator is permissive for it", "modelId", id, "why", why)
}

// Tokens estimates the token count of a text deterministically: one token per
// 4 bytes, rounded up ("1 token is about 4 characters", Cohere's and
// Anthropic's rule of thumb), at least 1 for a non-empty text.
func Tokens(s string) int64 {
	return int64((len(s) + 3) / 4)
}

// Cut bounds a reply to limit tokens, saying whether it had to.
func Cut(text string, limit int) (string, int64, bool) {
	out := Tokens(text)
	if limit > 0 && out > int64(limit) {
		return strings.ToValidUTF8(text[:min(len(text), limit*4)], ""), int64(limit), true
	}
	return text, out, false
}

// TextBlock is a text block of a Claude content or system value.
type TextBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// Blocks reads a Claude content or system value: a string or text blocks.
func Blocks(c json.RawMessage) []TextBlock {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return []TextBlock{{Type: "text", Text: s}}
	}
	var bs []TextBlock
	_ = json.Unmarshal(c, &bs)
	return bs
}

// ContentText is the text of a message content: a string, or its first text block.
func ContentText(c json.RawMessage) string {
	for _, b := range Blocks(c) {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

// SystemText joins a system value's text and returns the cacheable prefix: the
// text up to the last block marked cache_control.
func SystemText(c json.RawMessage) (all, prefix string) {
	var sb strings.Builder
	for _, b := range Blocks(c) {
		sb.WriteString(b.Text)
		if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
			prefix = sb.String()
		}
	}
	return sb.String(), prefix
}
