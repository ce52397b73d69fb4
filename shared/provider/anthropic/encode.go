// Package anthropic is the Anthropic Message Batches provider: the request
// encoder, the results parser and a client over the official SDK
// (github.com/anthropics/anthropic-sdk-go), which option.WithBaseURL points at the
// simulator in make dev and tests.
package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// requestLine is one request of a Message Batch, as a line of the input JSONL
// kept in object storage: {"custom_id": ..., "params": {...}}.
type requestLine struct {
	CustomID string          `json:"custom_id"`
	Params   json.RawMessage `json:"params"`
}

type params struct {
	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	System      []systemBlock   `json:"system,omitempty"`
	Messages    json.RawMessage `json:"messages"`
	Temperature *float64        `json:"temperature,omitempty"`
}

type systemBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// EncodeRecordAt encodes record i as one request line (no trailing newline). The
// job-level system prompt is the same for every request, so it carries
// cache_control: prompt caching then stacks with the batch discount. A
// record's own system prompt differs per record and is sent uncached.
func EncodeRecordAt(i int, model string, in job.Input, p job.Params) ([]byte, error) {
	f := func(name string) string { return fmt.Sprintf("records[%d].%s", i, name) }
	if !job.ValidRecordID(in.ID) {
		return nil, job.Fieldf(f("id"), "must match %s (Anthropic custom_id), got %q", job.RecordIDPattern, in.ID)
	}
	var body []byte
	var err error
	switch {
	case len(in.ModelInput) > 0:
		body, err = passThrough(f, model, in, p)
	default:
		body, err = messagesBody(f, model, in, p)
	}
	if err != nil {
		return nil, err
	}
	return marshal(requestLine{CustomID: in.ID, Params: body})
}

func messagesBody(f func(string) string, model string, in job.Input, p job.Params) ([]byte, error) {
	body := params{Model: model, MaxTokens: p.MaxTokens, Temperature: p.Temperature}
	if body.MaxTokens <= 0 {
		body.MaxTokens = job.DefaultMaxTokens
	}
	switch {
	case in.System != "":
		body.System = []systemBlock{{Type: "text", Text: in.System}}
	case p.System != "":
		body.System = []systemBlock{{Type: "text", Text: p.System, CacheControl: &cacheControl{Type: "ephemeral"}}}
	}
	switch {
	case in.Prompt != "" && len(in.Messages) > 0:
		return nil, job.Fieldf(f("prompt"), "set only one of prompt, messages or model_input")
	case in.Prompt != "":
		msgs, err := marshal([]message{{Role: "user", Content: mustString(in.Prompt)}})
		if err != nil {
			return nil, job.Fieldf(f("prompt"), "cannot encode: %v", err)
		}
		body.Messages = msgs
	case len(in.Messages) > 0:
		if err := validateMessages(f, in.Messages); err != nil {
			return nil, err
		}
		body.Messages = in.Messages
	default:
		return nil, job.Fieldf(f("prompt"), "one of prompt, messages or model_input is required")
	}
	return marshal(body)
}

// passThrough sends model_input as the request params, with the job's model:
// the allowed-model list must hold whatever the caller writes.
func passThrough(f func(string) string, model string, in job.Input, p job.Params) ([]byte, error) {
	if in.Prompt != "" || len(in.Messages) > 0 {
		return nil, job.Fieldf(f("model_input"), "set only one of prompt, messages or model_input")
	}
	if in.System != "" {
		return nil, job.Fieldf(f("system"), "system applies to prompt or messages; put it inside model_input")
	}
	var m map[string]json.RawMessage
	if firstByte(in.ModelInput) != '{' || json.Unmarshal(in.ModelInput, &m) != nil {
		return nil, job.Fieldf(f("model_input"), "must be a JSON object (Messages API params)")
	}
	if _, ok := m["messages"]; !ok {
		return nil, job.Fieldf(f("model_input.messages"), "required by the Messages API")
	}
	m["model"] = mustString(model)
	if _, ok := m["max_tokens"]; !ok {
		mt := p.MaxTokens
		if mt <= 0 {
			mt = job.DefaultMaxTokens
		}
		m["max_tokens"] = json.RawMessage(fmt.Sprint(mt))
	}
	return marshal(m)
}

// validateMessages checks what the Messages API needs: a non-empty array of
// {role: user|assistant, content: non-empty string or array}, starting with user.
func validateMessages(f func(string) string, raw json.RawMessage) error {
	var items []json.RawMessage
	if firstByte(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		return job.Fieldf(f("messages"), "must be a JSON array of {role, content}")
	}
	if len(items) == 0 {
		return job.Fieldf(f("messages"), "must not be empty")
	}
	for j, item := range items {
		name := fmt.Sprintf("messages[%d]", j)
		var m message
		if firstByte(item) != '{' || json.Unmarshal(item, &m) != nil {
			return job.Fieldf(f(name), "must be an object {role, content}")
		}
		if m.Role != "user" && m.Role != "assistant" {
			return job.Fieldf(f(name+".role"), `must be "user" or "assistant", got %q`, m.Role)
		}
		if j == 0 && m.Role != "user" {
			return job.Fieldf(f(name+".role"), `the first message must be from "user"`)
		}
		c := bytes.TrimSpace(m.Content)
		var s string
		var blocks []json.RawMessage
		ok := len(c) > 0 && ((c[0] == '"' && json.Unmarshal(c, &s) == nil && s != "") ||
			(c[0] == '[' && json.Unmarshal(c, &blocks) == nil && len(blocks) > 0))
		if !ok {
			return job.Fieldf(f(name+".content"), "must be a non-empty string or array of content blocks")
		}
	}
	return nil
}

// marshal is json.Marshal without HTML escaping (prompts are full of <tags>).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

func mustString(s string) json.RawMessage {
	b, _ := marshal(s)
	return b
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}
