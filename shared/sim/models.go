package sim

// The simulators' own table of documented service rules, per model. It is
// copied from AWS and Anthropic documentation (sources beside each fact,
// checked 2026-11-30) and deliberately not shared with the product: a
// simulator that read the product's rules could never catch the product
// getting them wrong. A model id missing here is served permissively, with a
// warning in the log saying so.

import (
	"hash/fnv"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// family is a request/response body shape of InvokeModel.
type family int

const (
	famUnknown family = iota
	famClaude
	famNova
	famLlama
	famMistral
	famTitanEmbed
	famCohereEmbed
	famCohereEmbedV4
	famNovaEmbed
)

func (f family) String() string {
	return [...]string{"unknown", "anthropic-claude", "amazon-nova", "meta-llama", "mistral", "amazon-titan-embed-text-v2", "cohere-embed-v3", "cohere-embed-v4", "amazon-nova-multimodal-embeddings"}[f]
}

// embedding reports whether the family answers vectors rather than text.
func (f family) embedding() bool {
	return f == famTitanEmbed || f == famCohereEmbed || f == famCohereEmbedV4 || f == famNovaEmbed
}

// output128k is the anthropic_beta flag that lifts Claude 3.7 Sonnet's output to 128K.
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html
const output128k = "output-128k-2025-02-19"

// Titan Text Embeddings V2: dimensions 1024 (default), 512 or 256; inputText up
// to 8,192 tokens or 50,000 characters.
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html
const (
	titanDefaultDims = 1024
	titanMaxChars    = 50_000
	titanMaxTokens   = 8192
)

var titanDims = []int{256, 512, 1024}

// Cohere Embed v3: at most 96 texts per call, each at most 2048 characters;
// input_type is required; vectors have 1024 dimensions.
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html
const (
	cohereMaxTexts  = 96
	cohereMaxChars  = 2048
	cohereDims      = 1024
	cohereMaxTokens = 512 // "512 tokens" per text; truncate NONE (the default) fails a longer one
)

// Cohere Embed v4: output_dimension 256, 512, 1024 or 1536 (default 1536),
// up to ~128K tokens, truncate NONE|LEFT|RIGHT, at most 96 texts.
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed-v4.html
const (
	cohereV4DefaultDims = 1536
	cohereV4MaxTokens   = 128_000
)

var cohereV4Dims = []int{256, 512, 1024, 1536}

// Nova Multimodal Embeddings: embeddingDimension 3072 (default), 1024, 384
// or 256; 8K tokens of text; truncationMode START|END|NONE.
// https://docs.aws.amazon.com/nova/latest/userguide/embeddings-schema.html,
// https://docs.aws.amazon.com/nova/latest/userguide/nova-embeddings.html
const (
	novaEmbedDefaultDims = 3072
	novaEmbedMaxTokens   = 8192
)

var (
	novaEmbedDims     = []int{256, 384, 1024, 3072}
	novaEmbedPurposes = []string{"GENERIC_INDEX", "GENERIC_RETRIEVAL", "TEXT_RETRIEVAL", "IMAGE_RETRIEVAL", "VIDEO_RETRIEVAL", "DOCUMENT_RETRIEVAL", "AUDIO_RETRIEVAL", "CLASSIFICATION", "CLUSTERING"}
)

var cohereInputTypes = []string{"search_document", "search_query", "classification", "clustering"}

// profilePrefixes are the geography prefixes of cross-Region (system) inference
// profile ids.
// https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html
var profilePrefixes = []string{"us.", "eu.", "apac.", "global.", "us-gov.", "jp.", "au.", "ca."}

// anthropicModel is what Anthropic documents about one model of its own API.
type anthropicModel struct {
	maxOut     int
	maxOutBeta int // with the anthropic-beta header output128k (3.7 Sonnet)
	// batchMaxOut is the larger limit a Message Batch created with the
	// anthropic-beta header output300k reaches (batches only).
	batchMaxOut int
	// cacheMin is the minimum cacheable prompt length in tokens; a shorter
	// prefix is processed without caching.
	cacheMin int
	// fixedSampling: the model refuses temperature, top_p and top_k at
	// non-default values, whatever the API version (Opus 4.7 and later).
	fixedSampling bool
	// lifecycle is the stage the provider announced ("": active).
	lifecycle anthropicStage
}

// anthropicStage is a lifecycle stage with its dates (YYYY-MM-DD; retire "": none yet).
type anthropicStage struct{ stage, deprecated, retire string }

// anthropicModels: max output from
// https://platform.claude.com/docs/en/about-claude/models/overview; minimum
// cacheable lengths from https://platform.claude.com/docs/en/build-with-claude/prompt-caching
// ("4096 tokens for Claude Opus 4.6, Claude Opus 4.5 ... 1024 tokens for Claude
// Sonnet 4.5, Claude Opus 4.1, Claude Opus 4, Claude Sonnet 4, and Claude Sonnet
// 3.7 ... 4096 tokens for Claude Haiku 4.5 ... 2048 tokens for Claude Haiku 3.5
// and Claude Haiku 3", as quoted in
// https://github.com/anthropics/anthropic-sdk-python/issues/1194). Lifecycle
// stages as the provider announced them
// (https://platform.claude.com/docs/en/about-claude/model-deprecations, as of
// 2026-11-30): Sonnet 4 and Opus 4 retired on 2026-06-15, Opus 4.1 on
// 2026-08-05, Opus 4.5 deprecated on 2026-11-23 (no retirement date yet).
var anthropicModels = map[string]anthropicModel{
	"claude-3-haiku-20240307":    {maxOut: 4096, cacheMin: 2048},
	"claude-3-5-haiku-20241022":  {maxOut: 8192, cacheMin: 2048},
	"claude-3-5-haiku-latest":    {maxOut: 8192, cacheMin: 2048},
	"claude-3-5-sonnet-20240620": {maxOut: 8192, cacheMin: 1024},
	"claude-3-5-sonnet-20241022": {maxOut: 8192, cacheMin: 1024},
	"claude-3-7-sonnet-20250219": {maxOut: 64000, maxOutBeta: 128000, cacheMin: 1024},
	"claude-3-7-sonnet-latest":   {maxOut: 64000, maxOutBeta: 128000, cacheMin: 1024},
	"claude-sonnet-4-20250514":   {maxOut: 64000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-03-15", "2026-06-15"}},
	"claude-sonnet-4-0":          {maxOut: 64000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-03-15", "2026-06-15"}},
	"claude-opus-4-20250514":     {maxOut: 32000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-03-15", "2026-06-15"}},
	"claude-opus-4-0":            {maxOut: 32000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-03-15", "2026-06-15"}},
	"claude-opus-4-1-20250805":   {maxOut: 32000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-05-05", "2026-08-05"}},
	"claude-opus-4-1":            {maxOut: 32000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-05-05", "2026-08-05"}},
	"claude-sonnet-4-5-20250929": {maxOut: 64000, cacheMin: 1024},
	"claude-sonnet-4-5":          {maxOut: 64000, cacheMin: 1024},
	"claude-haiku-4-5-20251001":  {maxOut: 64000, cacheMin: 4096},
	"claude-haiku-4-5":           {maxOut: 64000, cacheMin: 4096},
	"claude-opus-4-5-20251101":   {maxOut: 64000, cacheMin: 4096, lifecycle: anthropicStage{"deprecated", "2026-11-23", ""}},
	"claude-opus-4-5":            {maxOut: 64000, cacheMin: 4096, lifecycle: anthropicStage{"deprecated", "2026-11-23", ""}},
	// Current models (checked 2026-12-01, corrected 2026-12-03): max output
	// 128K for Opus 4.6 and later and the generation-5 models, and the 300K
	// Message Batches output beta for Opus 4.6, Sonnet 4.6, Opus 4.7, 4.8,
	// Opus 5, 5.5, Sonnet 5, 5.5 and Haiku 5.5 ("Max output (Batch API,
	// beta) 300K tokens" on https://platform.claude.com/docs/en/models/<model>/overview;
	// Opus 4.7's 128K also on its Bedrock model card). Minimum cacheable length 4096 as for Opus 4.6,
	// the stricter reading where not documented. Opus 4.7 and later refuse
	// non-default temperature, top_p and top_k
	// ("What's new in Claude Opus 4.7", as reported in
	// https://www.totalum.app/blog/claude-4-deprecation-migration-2026);
	// the generation-5 models are held to the same rule (stricter reading).
	"claude-opus-4-6":   {maxOut: 128000, cacheMin: 4096, batchMaxOut: 300000},
	"claude-sonnet-4-6": {maxOut: 128000, cacheMin: 4096, batchMaxOut: 300000},
	"claude-opus-4-7":   {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-opus-4-8":   {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-opus-5":     {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-opus-5-5":   {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-sonnet-5":   {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-sonnet-5-5": {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-haiku-5-5":  {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-fable-5":    {maxOut: 128000, cacheMin: 4096, fixedSampling: true},
	"claude-fable-5-1":  {maxOut: 128000, cacheMin: 4096, fixedSampling: true},
	"claude-fable-5-2":  {maxOut: 128000, cacheMin: 4096, fixedSampling: true},
}

// output300k is the anthropic-beta header that lifts a Message Batch's
// max_tokens to 300K for the models that allow it (Opus 4.6, Haiku 5.5: "batch
// output up to 300K with the output-300k-2026-03-24 beta header (Message
// Batches only)", https://platform.claude.com/docs/en/about-claude/models/overview
// and https://platform.claude.com/docs/en/models/haiku-5-5/overview, as of 2026-12-01).
const output300k = "output-300k-2026-03-24"

// KnownBedrockModels and KnownAnthropicModels list the ids the simulators hold
// rules for, so the product's catalogue can be checked against them.
func KnownBedrockModels() []string {
	var ids []string
	for _, m := range bedrockCatalog {
		if m.fam != famUnknown {
			ids = append(ids, m.id)
		}
	}
	return slices.Sorted(slices.Values(ids))
}
func KnownAnthropicModels() []string { return sortedKeys(anthropicModels) }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// familyOf guesses a family from a model id's provider prefix, for ids the
// table does not hold.
func familyOf(base string) family {
	switch {
	case strings.HasPrefix(base, "anthropic."):
		return famClaude
	case strings.HasPrefix(base, "amazon.nova-2-multimodal-embeddings"):
		return famNovaEmbed // before the amazon.nova case, which would catch it
	case strings.HasPrefix(base, "amazon.nova"):
		return famNova
	case strings.HasPrefix(base, "meta.llama"):
		return famLlama
	case strings.HasPrefix(base, "mistral."):
		return famMistral
	case strings.HasPrefix(base, "amazon.titan-embed-text-v2"):
		return famTitanEmbed
	case strings.HasPrefix(base, "cohere.embed-v4"):
		return famCohereEmbedV4
	case strings.HasPrefix(base, "cohere.embed"):
		return famCohereEmbed
	}
	return famUnknown
}

// familyOfBody guesses a family from an InvokeModel body, for ids that name no
// model (application inference profiles) or no family the simulator knows.
func familyOfBody(body map[string]any) family {
	has := func(k string) bool { _, ok := body[k]; return ok }
	switch {
	case has("anthropic_version"):
		return famClaude
	case has("inputText"):
		return famTitanEmbed
	case has("texts") && (has("output_dimension") || has("max_tokens")):
		return famCohereEmbedV4
	case has("texts"):
		return famCohereEmbed
	case has("taskType"):
		return famNovaEmbed
	case has("messages"):
		return famNova
	case has("max_gen_len"):
		return famLlama
	case has("prompt"):
		return famMistral
	}
	return famUnknown
}

// permissive logs, once per simulator and id, that an id is served without rules.
type permissive struct{ seen sync.Map }

func (p *permissive) warn(log *slog.Logger, sim, id, why string) {
	if _, dup := p.seen.LoadOrStore(id, true); dup || log == nil {
		return
	}
	log.Warn(sim+": [simulated] no documented rules for this model id; the simulator is permissive for it", "modelId", id, "why", why)
}

// tokens estimates the token count of a text deterministically: one token per
// 4 bytes, rounded up ("1 token is about 4 characters", Cohere's and
// Anthropic's rule of thumb), at least 1 for a non-empty text.
func tokens(s string) int64 {
	return int64((len(s) + 3) / 4)
}

// embed makes a deterministic vector for text: each lower-cased word is hashed
// to a dimension and a sign, so equal texts get equal vectors and texts sharing
// words point in similar directions; normalise scales it to unit length.
func embed(text string, dims int, normalise bool) []float64 {
	v := make([]float64, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dims)] += sign
	}
	if normalise {
		var n float64
		for _, x := range v {
			n += x * x
		}
		if n > 0 {
			n = math.Sqrt(n)
			for i := range v {
				v[i] /= n
			}
		}
	}
	return v
}

// Batch inference quotas (defaults of the Bedrock service quotas "Minimum
// number of records per batch inference job", "Records per input file per batch
// inference job", "Records per batch inference job", "Batch inference input file
// size (in GB)" = 1 and "Batch inference job size (in GB)" = 5; a GB is taken as
// 2^30 bytes). https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html,
// https://docs.aws.amazon.com/general/latest/gr/bedrock.html#limits_bedrock
const (
	batchMinRecords        = 100
	batchMaxRecordsPerFile = 50_000
	batchMaxRecordsPerJob  = 50_000
	DefaultMaxFileBytes    = 1 << 30
	DefaultMaxJobBytes     = 5 << 30
)
