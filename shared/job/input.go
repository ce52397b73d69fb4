package job

import "encoding/json"

// The roles of a Messages conversation turn (Anthropic Messages API, and
// Bedrock Converse's ConversationRole, as of 2026-12).
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ResultsAll is the results filter that keeps every record (the others are
// the RecordStatus values).
const ResultsAll = "all"

// Input is one record as a user submits it. Exactly one of Prompt, Messages,
// ModelInput or Text (embedding models) is set; ID is filled in (r00001...) when the user gave none.
type Input struct {
	ID string `json:"id,omitempty"`
	// Prompt is a single user turn.
	Prompt string `json:"prompt,omitempty"`
	// Messages is an Anthropic Messages-style conversation: [{"role":"user","content":...}].
	Messages json.RawMessage `json:"messages,omitempty"`
	// System overrides the job-level system prompt for this record.
	System string `json:"system,omitempty"`
	// ModelInput is a raw native request body, passed through as is (non-Claude families).
	ModelInput json.RawMessage `json:"model_input,omitempty"`
	// Text is the text an embedding model embeds.
	Text string `json:"text,omitempty"`
	// Metadata goes with the record's vector into a vector index.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Params are the job-level generation settings.
type Params struct {
	System      string   `json:"system,omitempty"`
	MaxTokens   int      `json:"maxTokens"`
	Temperature *float64 `json:"temperature,omitempty"`
	// Tier is the Bedrock service tier on-demand calls use ("flex",
	// "priority"; "" is standard), settled at submit and priced in the cost.
	Tier string `json:"tier,omitempty"`
	// Embed holds the settings of embedding models (nil for text models).
	Embed *EmbedParams `json:"embed,omitempty"`
	// OutputSchema is the JSON Schema (2020-12) every output must conform
	// to (nil: outputs are text), checked at submit (shared/outschema). Each
	// provider encoder constrains the output natively where the catalog says
	// its API does (model.NativeOutput), else puts the schema in the prompt.
	// JSON text, so Params stay comparable.
	OutputSchema string `json:"outputSchema,omitempty"`
}

// OutputSchema is the output schema j's records are checked against (nil:
// none): a batch job's Params, or an on-demand job's.
func (j *Job) OutputSchema() string {
	switch {
	case j.Params != nil && len(j.Params.OutputSchema) > 0:
		return j.Params.OutputSchema
	case j.OnDemand != nil:
		return j.OnDemand.Params.OutputSchema
	}
	return ""
}
