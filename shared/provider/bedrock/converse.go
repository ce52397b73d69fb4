package bedrock

// Converse is the one request shape of every Bedrock text and vision model,
// on demand (bedrock-runtime Converse) and in batch (a job created with
// modelInvocationType Converse, each line {"recordId", "modelInput": <Converse
// request body>}, https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html,
// checked 2026-12-01). Request is built once here, with the model's quirks
// from the catalog applied, and rendered as JSON for a batch line or as SDK
// types by the runtime adapter (bedrockrt). Native InvokeModel bodies remain
// for embeddings and for model_input bodies a caller writes in a model's own
// format.

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
)

// The two modelInvocationType values of CreateModelInvocationJob. A part
// stored without one predates Converse jobs and is InvokeModel.
const (
	InvocationInvokeModel = "InvokeModel"
	InvocationConverse    = "Converse"
)

// nativeKeys are top-level members only a native InvokeModel body has
// (Claude, Llama/Mistral completion, Titan, Cohere, Nova's schemaVersion and
// Nova Multimodal Embeddings' taskType); a Converse request has none.
var nativeKeys = map[string]bool{
	"anthropic_version": true, "prompt": true, "inputText": true, "texts": true, "inputs": true,
	"images": true, "schemaVersion": true, "taskType": true, "max_gen_len": true, "max_tokens": true,
}

// IsNativeBody reports whether a model_input object is a native InvokeModel
// body rather than a Converse request.
func IsNativeBody(b []byte) bool {
	native := false
	_, _ = eachMember(b, skipWS(b, 0), func(key []byte, i int) (int, error) {
		native = native || nativeKeys[string(key)]
		return skipValue(b, i)
	})
	return native
}

// InvocationFor is the batch invocation type record in needs: InvokeModel for
// embeddings and native model_input bodies, Converse for everything else.
func InvocationFor(in job.Input) string {
	if in.Text != "" || len(in.ModelInput) > 0 && IsNativeBody(in.ModelInput) {
		return InvocationInvokeModel
	}
	return InvocationConverse
}

// Request is a Converse request before rendering.
type Request struct {
	System      string
	Messages    []content.Message
	MaxTokens   int
	Temperature *float64
	// Folded: the model takes no system prompt, so the system text was put
	// first in the first user turn.
	Folded bool
	// TextAdded: a message held a document and no text; a text block was added.
	TextAdded bool
	// OutputSchema is the job's output schema (compact JSON) when the model
	// constrains its output natively on the request's API
	// (outputConfig.textFormat); a prompted model has it in System instead.
	OutputSchema string
}

// OutputSchemaName names the output schema in a request (Converse's
// JsonSchemaDefinition.name).
const OutputSchemaName = "output"

// FoldedWarning is the job warning (job.Warnings) when a system prompt was
// folded into the first user turn for a model that takes none.
func FoldedWarning(modelID string) string {
	return fmt.Sprintf("model %s takes no system prompt: the system prompt was sent as the first text of the first user turn", modelID)
}

// NewRequest builds the Converse request of a prompt or messages record for
// a model whose catalog row is rules (nil: no quirks known), as bedrock-runtime
// Converse takes it on demand. index names the record in errors
// (records[index].messages...); -1 for none.
func NewRequest(index int, in job.Input, p job.Params, rules *model.Model) (*Request, error) {
	return NewRequestFor(index, in, p, rules, model.APIBedrockConverse)
}

// NewRequestFor is NewRequest for api (model.APIBedrockConverse on demand,
// model.APIBedrockConverseBatch for a batch line), which decides whether an
// output schema constrains the output natively or goes into the prompt.
func NewRequestFor(index int, in job.Input, p job.Params, rules *model.Model, api string) (*Request, error) {
	f := fieldNamer(index)
	var r *Request
	if in.Prompt != "" {
		// A prompt's request, its one turn and its one block in one
		// allocation: a file's validation builds one for every record.
		pr := &promptRequest{}
		pr.block[0] = content.Block{Kind: content.KindText, Text: in.Prompt}
		pr.turn[0] = content.Message{Role: "user", Blocks: pr.block[:]}
		pr.Messages = pr.turn[:]
		r = &pr.Request
	} else {
		r = &Request{}
	}
	r.System, r.MaxTokens, r.Temperature = p.System, p.MaxTokens, p.Temperature
	if in.System != "" {
		r.System = in.System
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = job.DefaultMaxTokens
	}
	if r.MaxTokens < 0 {
		return nil, job.Fieldf("maxTokens", "must be positive, got %d", r.MaxTokens)
	}
	if t := r.Temperature; t != nil && (*t < job.MinTemperature || *t > job.MaxTemperature) {
		return nil, job.Fieldf("temperature", "must be %g..%g for Converse (inferenceConfig.temperature), got %g", job.MinTemperature, job.MaxTemperature, *t)
	}
	switch {
	case in.Prompt != "": // r.Messages is set above
	case len(in.Messages) > 0:
		rec, err := content.Parse(max(index, 0), in.ID, in.Messages)
		if err != nil {
			return nil, asField(err, f("messages"))
		}
		if err := checkTurns(f, rec.Messages); err != nil {
			return nil, err
		}
		r.Messages = rec.Messages
	default:
		return nil, job.Fieldf(f("prompt"), "one of prompt, messages or model_input is required")
	}
	if len(p.OutputSchema) > 0 {
		sch, err := outschema.For(p.OutputSchema)
		if err != nil {
			return nil, err
		}
		if _, native := model.NativeOutput(rules, api); native {
			r.OutputSchema = string(sch.Raw())
		} else {
			r.System = sch.WithInstruction(r.System)
		}
	}
	if rules != nil && rules.NoSystemPrompt && r.System != "" {
		first := &r.Messages[0]
		first.Blocks = append([]content.Block{{Kind: content.KindText, Text: r.System}}, first.Blocks...)
		r.System, r.Folded = "", true
	}
	r.TextAdded = content.EnsureDocumentText(r.Messages)
	return r, nil
}

// promptRequest is a prompt's Request with room for its one turn.
type promptRequest struct {
	Request
	turn  [1]content.Message
	block [1]content.Block
}

// checkTurns applies Converse's conversation rules: roles user or assistant,
// alternating, starting with user, each turn non-empty, only text, image and
// document blocks (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html,
// checked 2026-12-01; tool blocks need a toolConfig, which batch jobs refuse).
func checkTurns(f func(string) string, msgs []content.Message) error {
	if len(msgs) == 0 {
		return job.Fieldf(f("messages"), "must not be empty")
	}
	for m, msg := range msgs {
		name := fmt.Sprintf("messages[%d]", m)
		switch {
		case msg.Role != job.RoleUser && msg.Role != job.RoleAssistant:
			return job.Fieldf(f(name+".role"), `must be "user" or "assistant", got %q`, msg.Role)
		case m == 0 && msg.Role != job.RoleUser:
			return job.Fieldf(f(name+".role"), `the first message must be from "user"`)
		case m > 0 && msg.Role == msgs[m-1].Role:
			return job.Fieldf(f(name+".role"), `roles must alternate between "user" and "assistant" (Converse); messages[%d] is also %q`, m-1, msg.Role)
		case len(msg.Blocks) == 0:
			return job.Fieldf(f(name+".content"), "must be a non-empty string or array of content blocks")
		}
		for b, blk := range msg.Blocks {
			switch {
			case blk.Kind == content.KindOther:
				return job.Fieldf(f(fmt.Sprintf("%s.content[%d]", name, b)), "Converse takes text, image and document blocks only")
			case blk.Kind == content.KindText && blk.Text == "":
				return job.Fieldf(f(fmt.Sprintf("%s.content[%d].text", name, b)), "must not be empty (Converse refuses a blank text block)")
			}
		}
	}
	return nil
}

// asField turns a content.Problem into a field error naming the same place.
func asField(err error, field string) error {
	if p, ok := err.(*content.Problem); ok {
		return job.Fieldf(p.Where, "%s", p.Message)
	}
	return job.Fieldf(field, "%v", err)
}

func fieldNamer(i int) func(string) string {
	return func(name string) string {
		if i < 0 {
			return name
		}
		return "records[" + strconv.Itoa(i) + "]." + name
	}
}

// AppendJSON appends r as a Converse request body. Batch records carry text
// only here (their images and documents are rendered later in place of a
// placeholder, see the batch service's media path): text is written
// directly; anything else goes through content's Converse renderer, which
// needs the blocks checked.
func (r *Request) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"messages":`...)
	if textOnly(r.Messages) {
		dst = append(dst, '[')
		for m, msg := range r.Messages {
			if m > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"role":`...)
			dst = jsonl.AppendString(dst, msg.Role)
			dst = append(dst, `,"content":[`...)
			for b, blk := range msg.Blocks {
				if b > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"text":`...)
				dst = jsonl.AppendString(dst, blk.Text)
				dst = append(dst, '}')
			}
			dst = append(dst, "]}"...)
		}
		dst = append(dst, ']')
	} else {
		buf := bytes.NewBuffer(dst)
		if err := (&content.Renderer{Path: content.PathBedrockConverse}).WriteMessages(context.Background(), buf, r.Messages); err != nil {
			return nil, err
		}
		dst = buf.Bytes()
	}
	if r.System != "" {
		dst = append(dst, `,"system":[{"text":`...)
		dst = jsonl.AppendString(dst, r.System)
		dst = append(dst, "}]"...)
	}
	dst = append(dst, `,"inferenceConfig":{"maxTokens":`...)
	dst = strconv.AppendInt(dst, int64(r.MaxTokens), 10)
	if r.Temperature != nil {
		dst = append(dst, `,"temperature":`...)
		dst = strconv.AppendFloat(dst, *r.Temperature, 'g', -1, 64)
	}
	dst = append(dst, '}')
	if r.OutputSchema != "" {
		// The schema is a JSON string inside the request (JsonSchemaDefinition.schema).
		dst = append(dst, `,"outputConfig":{"textFormat":{"type":"json_schema","structure":{"jsonSchema":{"name":`...)
		dst = jsonl.AppendString(dst, OutputSchemaName)
		dst = append(dst, `,"schema":`...)
		dst = jsonl.AppendString(dst, r.OutputSchema)
		dst = append(dst, "}}}}"...)
	}
	return append(dst, '}'), nil
}

func textOnly(msgs []content.Message) bool {
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Kind != content.KindText {
				return false
			}
		}
	}
	return true
}

// checkConverseBody checks a caller's own Converse request (model_input of a
// Converse job): an object with messages, and no toolConfig, which Converse
// batch jobs refuse ("Records that include toolConfig fail with a 400 error",
// https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference.html,
// checked 2026-12-01).
func checkConverseBody(f func(string) string, b []byte) error {
	var hasMessages bool
	_, err := eachMember(b, skipWS(b, 0), func(key []byte, i int) (int, error) {
		switch string(key) {
		case "toolConfig":
			return i, job.Fieldf(f("model_input.toolConfig"), "Bedrock batch jobs of the Converse type refuse toolConfig (tool use); run tools on demand, or give the model's native InvokeModel body")
		case "messages":
			hasMessages = true
		}
		return skipValue(b, i)
	})
	if err != nil {
		if fe, ok := err.(*job.FieldError); ok {
			return fe
		}
		return job.Fieldf(f("model_input"), "not valid JSON: %v", err)
	}
	if !hasMessages {
		return job.Fieldf(f("model_input"), "a Converse request body needs messages (or give the model's native InvokeModel body, e.g. with anthropic_version for Claude)")
	}
	return nil
}

// JobWarnings are the warnings a job's records earn from the model's rules
// (rules nil: none): a system prompt folded into the first user turn. recs nil
// means records not at hand (file inputs): the job-level settings decide.
func JobWarnings(modelID string, rules *model.Model, recs []job.Input, p job.Params) []string {
	if rules == nil || !rules.NoSystemPrompt {
		return nil
	}
	folds := recs == nil && p.System != ""
	for _, r := range recs {
		if (r.Prompt != "" || len(r.Messages) > 0) && (r.System != "" || p.System != "") {
			folds = true
			break
		}
	}
	if folds {
		return []string{FoldedWarning(modelID)}
	}
	return nil
}
