package wire

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/claude"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// countFields are the body fields the Token Count API
// (POST /v1/messages/count_tokens) takes: a Messages request without
// max_tokens and the sampling parameters, which it refuses ("Extra inputs are
// not permitted"). Source: the API reference
// (https://platform.claude.com/docs/en/api/messages-count-tokens) and the Go
// SDK v2.15's MessageCountTokensParams, as of 2026-12-01.
var countFields = []string{"cache_control", "messages", "model", "output_config", "speed", "system", "thinking", "tool_choice", "tools"}

// CountBody is record in's batch params cut to the fields count_tokens takes.
func CountBody(model string, in job.Input, p job.Params) ([]byte, error) {
	f := func(name string) string { return fmt.Sprintf("records[id=%s].%s", in.ID, name) }
	body, err := paramsBody(f, model, in, p)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("count tokens of record %s: %w", in.ID, err)
	}
	if storedSource(m["messages"]) {
		// The submit inlines s3:// images and documents as it writes the
		// batch; count_tokens would refuse the reference.
		return nil, fmt.Errorf("count tokens of record %s: it holds s3:// images or documents, which are inlined only at submit; count_tokens takes them inline", in.ID)
	}
	for k := range m {
		if !slices.Contains(countFields, k) {
			delete(m, k)
		}
	}
	return claude.Marshal(m)
}

// storedSource reports whether a messages array holds an image or document
// whose source is an s3:// reference (the suite's own source type).
func storedSource(messages json.RawMessage) bool {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(messages, &msgs) != nil {
		return false
	}
	for _, msg := range msgs {
		var blocks []struct {
			Source *struct {
				Type string `json:"type"`
			} `json:"source"`
		}
		if claude.FirstByte(msg.Content) != '[' || json.Unmarshal(msg.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Source != nil && b.Source.Type == "s3" {
				return true
			}
		}
	}
	return false
}
