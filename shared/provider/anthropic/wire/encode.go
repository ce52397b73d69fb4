// Package anthropic is the Anthropic Message Batches provider: the request
// encoder, the results parser and a client over the official SDK
// (github.com/anthropics/anthropic-sdk-go), which option.WithBaseURL points at the
// simulator in make dev and tests.
package wire

import (
	"encoding/json"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/claude"
	"github.com/mcpbatch/mcpbatch/shared/job"
	modelpkg "github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
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
	// OutputConfig constrains the answer to the job's output schema, for
	// models the catalog lists as taking it (model.NativeOutput).
	OutputConfig *outputConfig `json:"output_config,omitempty"`
}

// outputConfig is the Messages API's output_config: format {type:
// json_schema, schema} (structured outputs, generally available without a
// beta header; https://platform.claude.com/docs/en/build-with-claude/structured-outputs,
// read 2026-12-03).
type outputConfig struct {
	Format outputFormat `json:"format"`
}

type outputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

type systemBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
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
	body, err := paramsBody(f, model, in, p)
	if err != nil {
		return nil, err
	}
	return claude.Marshal(requestLine{CustomID: in.ID, Params: body})
}

// paramsBody is the Messages params a record sends, checked against the API
// version this suite speaks.
func paramsBody(f func(string) string, model string, in job.Input, p job.Params) ([]byte, error) {
	if err := CheckParams(model, p); err != nil {
		return nil, err
	}
	var body []byte
	var err error
	switch {
	case len(in.ModelInput) > 0:
		body, err = passThrough(f, model, in, p)
	default:
		body, err = messagesBody(f, model, in, p)
	}
	if err == nil {
		err = checkBody(f, model, body, len(in.ModelInput) > 0)
	}
	if err != nil {
		return nil, err
	}
	return body, nil
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
	if in.Prompt != "" && len(in.Messages) > 0 {
		return nil, job.Fieldf(f("prompt"), "set only one of prompt, messages or model_input")
	}
	msgs, err := claude.Messages(f, in)
	if err != nil {
		return nil, err
	}
	body.Messages = msgs
	if len(p.OutputSchema) > 0 {
		sch, err := outschema.For(p.OutputSchema)
		if err != nil {
			return nil, err
		}
		row, _ := modelpkg.Default().Lookup(model)
		if _, native := modelpkg.NativeOutput(row, modelpkg.APIAnthropicBatch); native {
			body.OutputConfig = &outputConfig{Format: outputFormat{Type: "json_schema", Schema: sch.Raw()}}
		} else if len(body.System) > 0 {
			body.System[0].Text = sch.WithInstruction(body.System[0].Text)
		} else {
			body.System = []systemBlock{{Type: "text", Text: sch.Instruction(), CacheControl: &cacheControl{Type: "ephemeral"}}}
		}
	}
	return claude.Marshal(body)
}

// passThrough sends model_input as the request params, with the job's model:
// the allowed-model list must hold whatever the caller writes.
func passThrough(f func(string) string, model string, in job.Input, p job.Params) ([]byte, error) {
	if in.Prompt != "" || len(in.Messages) > 0 {
		return nil, job.Fieldf(f("model_input"), "set only one of prompt, messages or model_input")
	}
	if len(p.OutputSchema) > 0 {
		return nil, outschema.ModelInputRefused(f("model_input"))
	}
	if in.System != "" {
		return nil, job.Fieldf(f("system"), "system applies to prompt or messages; put it inside model_input")
	}
	var m map[string]json.RawMessage
	if claude.FirstByte(in.ModelInput) != '{' || json.Unmarshal(in.ModelInput, &m) != nil {
		return nil, job.Fieldf(f("model_input"), "must be a JSON object (Messages API params)")
	}
	if _, ok := m["messages"]; !ok {
		return nil, job.Fieldf(f("model_input.messages"), "required by the Messages API")
	}
	m["model"] = claude.String(model)
	if _, ok := m["max_tokens"]; !ok {
		mt := p.MaxTokens
		if mt <= 0 {
			mt = job.DefaultMaxTokens
		}
		m["max_tokens"] = json.RawMessage(fmt.Sprint(mt))
	}
	return claude.Marshal(m)
}
