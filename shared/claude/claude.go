// Package claude builds and checks the Anthropic Messages request shape that both
// Bedrock's native Claude body and the Anthropic Message Batches API carry, so the
// two providers validate a record the same way and name the same fields.
package claude

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Messages is the messages array of a record: its prompt as one user turn, or its
// messages checked for the shape Claude needs. f names a field in errors (e.g.
// "records[3].messages").
func Messages(f func(string) string, in job.Input) (json.RawMessage, error) {
	switch {
	case in.Prompt != "":
		msgs, err := Marshal([]message{{Role: "user", Content: String(in.Prompt)}})
		if err != nil {
			return nil, job.Fieldf(f("prompt"), "cannot encode: %v", err)
		}
		return msgs, nil
	case len(in.Messages) > 0:
		if err := validate(f, in.Messages); err != nil {
			return nil, err
		}
		return in.Messages, nil
	default:
		return nil, job.Fieldf(f("prompt"), "one of prompt, messages or model_input is required")
	}
}

// validate checks a non-empty array of {role: user|assistant, content: non-empty
// string or array}, starting with user.
func validate(f func(string) string, raw json.RawMessage) error {
	var items []json.RawMessage
	if FirstByte(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		return job.Fieldf(f("messages"), "must be a JSON array of {role, content}")
	}
	if len(items) == 0 {
		return job.Fieldf(f("messages"), "must not be empty")
	}
	for j, item := range items {
		name := fmt.Sprintf("messages[%d]", j)
		var m message
		if FirstByte(item) != '{' || json.Unmarshal(item, &m) != nil {
			return job.Fieldf(f(name), "must be an object {role, content}")
		}
		if m.Role != job.RoleUser && m.Role != job.RoleAssistant {
			return job.Fieldf(f(name+".role"), `must be "user" or "assistant", got %q`, m.Role)
		}
		if j == 0 && m.Role != job.RoleUser {
			return job.Fieldf(f(name+".role"), `the first message must be from "user"`)
		}
		if !nonEmptyContent(m.Content) {
			return job.Fieldf(f(name+".content"), "must be a non-empty string or array of content blocks")
		}
	}
	return nil
}

func nonEmptyContent(c json.RawMessage) bool {
	c = bytes.TrimSpace(c)
	switch {
	case len(c) == 0:
		return false
	case c[0] == '"':
		var s string
		return json.Unmarshal(c, &s) == nil && s != ""
	case c[0] == '[':
		var blocks []json.RawMessage
		return json.Unmarshal(c, &blocks) == nil && len(blocks) > 0
	}
	return false
}

// Marshal is json.Marshal without HTML escaping: prompts are full of <tags> and
// &s, and \u003c would only make the input bigger and harder to read.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// String is s as a JSON string.
func String(s string) json.RawMessage {
	b, _ := Marshal(s) // a Go string always encodes
	return b
}

// FirstByte is the first non-space byte of b (0 when there is none).
func FirstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}
