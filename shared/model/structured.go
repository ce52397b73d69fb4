package model

// Structured outputs: which model constrains its output to a JSON schema on
// which API, and which part of JSON Schema that constraint takes. A job with
// an output schema uses the native constraint where this table has the
// model and API; elsewhere the schema goes into the prompt. Every output is
// checked against the schema either way (shared/outschema).

// The APIs a native output constraint is documented for.
const (
	// APIAnthropicBatch is an Anthropic Message Batches request's params:
	// output_config.format {type: json_schema, schema}. The Message Batches
	// API takes every Messages API feature
	// (https://platform.claude.com/docs/en/build-with-claude/batch-processing).
	APIAnthropicBatch = "anthropic_batch"
	// APIBedrockConverse is bedrock-runtime Converse on demand:
	// outputConfig.textFormat {type: json_schema, structure: {jsonSchema:
	// {schema: <JSON text>, name}}}
	// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_OutputConfig.html).
	APIBedrockConverse = "bedrock_converse"
	// APIBedrockConverseBatch is the same request as a line of a batch job
	// of modelInvocationType Converse: "Structured outputs are supported with
	// both invocation types"
	// (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference.html,
	// read 2026-12-03; an older copy of that page said batch jobs took no
	// structured output).
	APIBedrockConverseBatch = "bedrock_converse_batch"
)

// StructuredSource and StructuredAsOf source and date the table below.
const (
	StructuredSource = "https://platform.claude.com/docs/en/build-with-claude/structured-outputs ; https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html"
	StructuredAsOf   = "2026-12-03"
)

// SchemaDialect is the part of JSON Schema 2020-12 a native constraint
// compiles; a schema outside it is refused by the provider (400), so the
// suite refuses it at submit, naming the schema path.
type SchemaDialect struct {
	Name string
	// Unsupported are keywords the constraint refuses anywhere in a schema.
	Unsupported []string
	// ObjectsClosed: every object schema must say additionalProperties: false.
	ObjectsClosed bool
	// MaxMinItems is the largest minItems taken (-1: any).
	MaxMinItems int
	// Formats are the string formats taken (nil: any).
	Formats []string
	// NoRecursion: a $ref may not point at a schema that contains it.
	NoRecursion bool
	// NoExternalRefs: a $ref must point inside the schema ("#...").
	NoExternalRefs bool
}

// claudeDialect is Claude's structured-outputs grammar, as the Claude API
// documents its JSON Schema limitations (structured-outputs page, "JSON
// Schema limitations", read 2026-12-03) and Bedrock applies it to Claude
// ("validates the JSON schema format against a supported subset of JSON
// Schema Draft 2020-12 ... returns a 400 error", structured-output.html).
var claudeDialect = SchemaDialect{
	Name: "Claude structured outputs",
	Unsupported: []string{
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
		"minLength", "maxLength", "maxItems", "minProperties", "maxProperties",
		"uniqueItems", "contains", "minContains", "maxContains", "patternProperties",
		"propertyNames", "dependentSchemas", "dependentRequired", "if", "then", "else", "not",
		"unevaluatedProperties", "unevaluatedItems",
	},
	ObjectsClosed:  true,
	MaxMinItems:    1,
	Formats:        []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"},
	NoRecursion:    true,
	NoExternalRefs: true,
}

// structuredOutputs maps a catalog model id to the APIs that constrain its
// output natively. Claude API: generally available for Claude Opus 4.6,
// Sonnet 4.6, Sonnet 4.5, Opus 4.5 and Haiku 4.5; the same models on
// Amazon Bedrock (both pages above). Models not listed are prompted.
var structuredOutputs = map[string][]string{
	"claude-opus-4-6":   {APIAnthropicBatch},
	"claude-sonnet-4-6": {APIAnthropicBatch},
	"claude-sonnet-4-5": {APIAnthropicBatch},
	"claude-opus-4-5":   {APIAnthropicBatch},
	"claude-haiku-4-5":  {APIAnthropicBatch},

	"anthropic.claude-opus-4-6-v1":              {APIBedrockConverse, APIBedrockConverseBatch},
	"anthropic.claude-sonnet-4-6":               {APIBedrockConverse, APIBedrockConverseBatch},
	"anthropic.claude-sonnet-4-5-20250929-v1:0": {APIBedrockConverse, APIBedrockConverseBatch},
	"anthropic.claude-opus-4-5-20251101-v1:0":   {APIBedrockConverse, APIBedrockConverseBatch},
	"anthropic.claude-haiku-4-5-20251001-v1:0":  {APIBedrockConverse, APIBedrockConverseBatch},
}

// NativeOutput is the dialect of the native output constraint of model m on
// api; false when the model is prompted there (m nil: unknown, prompted).
func NativeOutput(m *Model, api string) (SchemaDialect, bool) {
	if m == nil {
		return SchemaDialect{}, false
	}
	for _, a := range structuredOutputs[m.ID] {
		if a == api {
			return claudeDialect, true
		}
	}
	return SchemaDialect{}, false
}

// NativeAPIs are the APIs of the list that constrain m's output natively.
func NativeAPIs(m *Model, apis ...string) []string {
	var out []string
	for _, a := range apis {
		if _, ok := NativeOutput(m, a); ok {
			out = append(out, a)
		}
	}
	return out
}
