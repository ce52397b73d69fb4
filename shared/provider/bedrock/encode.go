package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcpbatch/mcpbatch/shared/claude"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
)

// inputLine is one line of Bedrock's input JSONL.
type inputLine struct {
	RecordID   string          `json:"recordId"`
	ModelInput json.RawMessage `json:"modelInput"`
}

// EncodeRecord encodes one record as a line of Bedrock input JSONL (without the
// trailing newline): {"recordId": ..., "modelInput": {...}}. Bad input is a
// *job.FieldError whose Field is relative to the record ("messages[1].role");
// EncodeRecordAt names the record too.
func EncodeRecord(model string, in job.Input, p job.Params) ([]byte, error) {
	return EncodeRecordAt(-1, model, in, p)
}

// EncodeRecordAt is EncodeRecord for record i of a submission: field names in
// errors read "records[i].messages". The model's quirks come from the
// embedded catalog.
func EncodeRecordAt(i int, modelID string, in job.Input, p job.Params) ([]byte, error) {
	rules, _ := model.Default().Lookup(modelID)
	return EncodeRecordFor(i, modelID, rules, in, p)
}

// EncodeRecordFor is EncodeRecordAt with the model's catalog row given (nil:
// no quirks). Prompts and messages become a Converse request (see
// InvocationFor); text becomes the embedding model's native body; model_input
// is passed through: a native body for an InvokeModel job, or a Converse
// request for a Converse job.
func EncodeRecordFor(i int, modelID string, rules *model.Model, in job.Input, p job.Params) ([]byte, error) {
	f := fieldNamer(i)
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
	line := make([]byte, 0, 256+len(in.Prompt)+len(in.Messages)+len(in.ModelInput)+len(in.Text)+len(p.System))
	line = append(line, `{"recordId":`...)
	line = strconv.AppendQuote(line, in.ID) // ids are [A-Za-z0-9_-]: no escaping differs from JSON
	line = append(line, `,"modelInput":`...)
	switch {
	case in.Text != "":
		body, err := EmbeddingBody(modelID, []string{in.Text}, p.Embed)
		if err != nil {
			var fe *job.FieldError
			if errors.As(err, &fe) {
				fe.Field = f(fe.Field)
			}
			return nil, err
		}
		line = append(line, body...)
	case len(in.ModelInput) > 0:
		if len(p.OutputSchema) > 0 {
			return nil, outschema.ModelInputRefused(f("model_input"))
		}
		if in.System != "" {
			return nil, job.Fieldf(f("system"), "system applies to prompt or messages; put it inside model_input")
		}
		if !isObject(in.ModelInput) {
			return nil, job.Fieldf(f("model_input"), "must be a JSON object (a Converse request, or the model's native request body)")
		}
		if !IsNativeBody(in.ModelInput) {
			if err := checkConverseBody(f, in.ModelInput); err != nil {
				return nil, err
			}
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, in.ModelInput); err != nil {
			return nil, job.Fieldf(f("model_input"), "not valid JSON: %v", err)
		}
		line = append(line, buf.Bytes()...)
	default:
		r, err := NewRequestFor(i, in, p, rules, model.APIBedrockConverseBatch)
		if err != nil {
			return nil, err
		}
		if line, err = r.AppendJSON(line); err != nil {
			return nil, job.Fieldf(f("messages"), "cannot encode: %v", err)
		}
	}
	return append(line, '}'), nil
}

func isObject(b []byte) bool { return claude.FirstByte(b) == '{' && json.Valid(b) }
