package bedrock

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/claude"
)

// AnthropicVersion is the Messages API version Bedrock's Claude models take.
const AnthropicVersion = "bedrock-2023-05-31"

// IsClaude reports whether a model id (base id, cross-region inference profile id,
// or either's ARN) names an Anthropic Claude model, whose modelInput is an
// Anthropic Messages body.
func IsClaude(model string) bool {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:] // foundation-model/... or inference-profile/... ARN
	}
	base, _ := config.BaseModel(model)
	return strings.HasPrefix(base, "anthropic.")
}

// inputLine is one line of Bedrock's input JSONL.
type inputLine struct {
	RecordID   string          `json:"recordId"`
	ModelInput json.RawMessage `json:"modelInput"`
}

// claudeBody is Claude's native InvokeModel body (Anthropic Messages format).
type claudeBody struct {
	AnthropicVersion string          `json:"anthropic_version"`
	MaxTokens        int             `json:"max_tokens"`
	System           string          `json:"system,omitempty"`
	Messages         json.RawMessage `json:"messages"`
	Temperature      *float64        `json:"temperature,omitempty"`
}

// EncodeRecord encodes one record as a line of Bedrock input JSONL (without the
// trailing newline): {"recordId": ..., "modelInput": {...}}. Bad input is a
// *job.FieldError whose Field is relative to the record ("messages[1].role");
// EncodeRecordAt names the record too.
func EncodeRecord(model string, in job.Input, p job.Params) ([]byte, error) {
	return EncodeRecordAt(-1, model, in, p)
}

// EncodeRecordAt is EncodeRecord for record i of a submission: field names in
// errors read "records[i].messages".
func EncodeRecordAt(i int, model string, in job.Input, p job.Params) ([]byte, error) {
	f := func(name string) string {
		if i < 0 {
			return name
		}
		return fmt.Sprintf("records[%d].%s", i, name)
	}
	if !job.ValidRecordID(in.ID) {
		return nil, job.Fieldf(f("id"), "must match %s, got %q", job.RecordIDPattern, in.ID)
	}
	set := 0
	for _, ok := range []bool{in.Prompt != "", len(in.Messages) > 0, len(in.ModelInput) > 0, in.Text != ""} {
		if ok {
			set++
		}
	}
	if set > 1 {
		return nil, job.Fieldf(f("prompt"), "set only one of prompt, messages, model_input or text")
	}
	var body []byte
	switch {
	case in.Text != "":
		var err error
		if body, err = EmbeddingBody(model, []string{in.Text}, p.Embed); err != nil {
			var fe *job.FieldError
			if errors.As(err, &fe) {
				fe.Field = f(fe.Field)
			}
			return nil, err
		}
	case len(in.ModelInput) > 0:
		if in.System != "" {
			return nil, job.Fieldf(f("system"), "system applies to prompt or messages; put it inside model_input")
		}
		if !isObject(in.ModelInput) {
			return nil, job.Fieldf(f("model_input"), "must be a JSON object (the model's native request body)")
		}
		body = in.ModelInput // passed through as given; the encoder only compacts it
	case !IsClaude(model):
		return nil, job.Fieldf(f("model_input"), "model %s is not an Anthropic Claude model: give its native request body in model_input", model)
	default:
		var err error
		if body, err = claudeInput(f, in, p); err != nil {
			return nil, err
		}
	}
	line, err := claude.Marshal(inputLine{RecordID: in.ID, ModelInput: body})
	if err != nil {
		return nil, job.Fieldf(f("model_input"), "not valid JSON: %v", err)
	}
	return line, nil
}

func claudeInput(f func(string) string, in job.Input, p job.Params) ([]byte, error) {
	body := claudeBody{AnthropicVersion: AnthropicVersion, MaxTokens: p.MaxTokens, System: p.System, Temperature: p.Temperature}
	if body.MaxTokens == 0 {
		body.MaxTokens = job.DefaultMaxTokens
	}
	if body.MaxTokens < 0 {
		return nil, job.Fieldf("maxTokens", "must be positive, got %d", body.MaxTokens)
	}
	if t := body.Temperature; t != nil && (*t < 0 || *t > 1) {
		return nil, job.Fieldf("temperature", "must be 0..1 for Claude, got %g", *t)
	}
	if in.System != "" {
		body.System = in.System
	}
	msgs, err := claude.Messages(f, in)
	if err != nil {
		return nil, err
	}
	body.Messages = msgs
	b, err := claude.Marshal(body)
	if err != nil {
		return nil, job.Fieldf(f("messages"), "cannot encode: %v", err)
	}
	return b, nil
}

func isObject(b []byte) bool { return claude.FirstByte(b) == '{' && json.Valid(b) }
