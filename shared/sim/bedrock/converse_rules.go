package bedrock

// Converse's request rules, from the simulator's own table (never the
// product's): conversation structure, system prompts per model, documents
// beside text, per-model PDF caps, and what batch jobs of the Converse type
// refuse. Wording is the service's where a stored source recorded it; facts
// checked 2026-12-01 at the pages named beside them.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

var errNoSystem = errors.New("This model doesn't support system messages. Try again without a system message or use a model that supports system messages.")

// docCapExempt: "For Claude 4 and subsequent versions, the 4.5 MB document
// size restriction doesn't apply to PDF format. For Nova models, the 4.5 MB
// document size restriction doesn't apply to PDF and DOCX formats."
// (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-api-restrictions.html)
func docCapExempt(base, format string) bool {
	switch {
	case strings.HasPrefix(base, "amazon.nova-"):
		return format == "pdf" || format == "docx"
	case format != "pdf":
		return false
	case strings.HasPrefix(base, "anthropic.claude-"):
		rest := strings.TrimPrefix(base, "anthropic.claude-")
		return !strings.HasPrefix(rest, "3") && !strings.HasPrefix(rest, "v2") && !strings.HasPrefix(rest, "instant")
	}
	return false
}

// errBatchToolConfig: "Batch inference doesn't support tool calling
// (function calling) for jobs that use the Converse invocation type. Records
// that include toolConfig fail with a 400 error."
// (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference.html)
var errBatchToolConfig = errors.New("toolConfig is not supported for batch inference jobs of the Converse invocation type; create the job with the InvokeModel invocation type to use tools")

// checkConverseTurns applies Converse's message rules: at least one message,
// the first from the user, roles alternating, no empty content, and a text
// block beside every document (API_runtime_Message.html,
// API_runtime_DocumentBlock.html; the empty-content wording is recorded in
// vercel/ai packages/amazon-bedrock/src/__fixtures__/amazon-bedrock-empty-message-validation-error.json).
func checkConverseTurns(req converseRequest) error {
	if len(req.Messages) == 0 {
		return errors.New("messages: at least one message is required")
	}
	for i, m := range req.Messages {
		switch {
		case m.Role != "user" && m.Role != "assistant":
			return fmt.Errorf("1 validation error detected: Value '%s' at 'messages.%d.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]", m.Role, i+1)
		case i == 0 && m.Role != "user":
			return errors.New("A conversation must start with a user message. Try again with a conversation that starts with a user message.")
		case i > 0 && m.Role == req.Messages[i-1].Role:
			return errors.New("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.")
		case len(m.Content) == 0:
			return fmt.Errorf("The content field in the Message object at messages.%d is empty. Add a ContentBlock object to the content field and try again.", i)
		}
		doc, text := false, false
		for _, b := range m.Content {
			doc = doc || b.Document != nil
			text = text || b.Text != nil && *b.Text != ""
		}
		if doc && !text {
			return fmt.Errorf("messages.%d: a message with a document must also include a text block; add a text block and try again.", i)
		}
	}
	return nil
}

// converseSystemAllowed refuses a system prompt the model does not take.
func converseSystemAllowed(inv invocation, req converseRequest) error {
	if len(req.System) > 0 && inv.known && inv.m.noSystem {
		return errNoSystem
	}
	return nil
}

// Sampling: recorded Bedrock answers for Opus 5: "The model returned the
// following errors: `temperature` is deprecated for this model." and the same
// for `top_p`, top_k accepted
// (https://github.com/vercel/ai/blob/main/packages/amazon-bedrock/src/__fixtures__/amazon-bedrock-opus-5-deprecated-sampling-parameter.json
// and the -top-p fixture beside it, as of 2026-12-01). Anthropic documents
// fixed sampling from Opus 4.7 on; every later Claude is held to the same
// rule (the stricter reading): the rows marked noSampling (bedrock_models.go).

// converseSamplingAllowed refuses inferenceConfig.temperature and topP for
// the rows marked noSampling, in Bedrock's wording.
func converseSamplingAllowed(inv invocation, req converseRequest) error {
	if !inv.known || !inv.m.noSampling {
		return nil
	}
	for _, p := range []struct {
		name string
		set  bool
	}{{"temperature", req.InferenceConfig.Temperature != nil}, {"top_p", req.InferenceConfig.TopP != nil}} {
		if p.set {
			return fmt.Errorf("The model returned the following errors: `%s` is deprecated for this model.", p.name)
		}
	}
	return nil
}

// batchConverseLine is one Converse job record's modelInput as the batch
// simulator reads it: the request plus the members batch refuses.
type batchConverseLine struct {
	converseRequest
	ToolConfig json.RawMessage `json:"toolConfig"`
}
