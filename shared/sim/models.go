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

// bedrockModel is what Bedrock documents about one foundation model.
type bedrockModel struct {
	fam family
	// maxOut is the largest max_tokens / maxTokens / max_gen_len accepted.
	maxOut int
	// maxOutBeta, when set, is the larger limit unlocked by the anthropic_beta
	// flag output128k (Claude 3.7 Sonnet only).
	maxOutBeta int
	// inRegion lists the regions where the base model id may be invoked on
	// demand; nil means only through an inference profile; "*" means every
	// region that offers the model.
	inRegion []string
	// profiles says whether cross-region inference profiles (us., eu., ...) exist.
	profiles bool
	// tiers lists the on-demand service tiers beyond standard the model
	// takes ("flex", "priority"), per the models-and-regions table of
	// https://docs.aws.amazon.com/bedrock/latest/userguide/service-tiers-inference.html
	// (read 2026-12-01).
	tiers []string
}

// output128k is the anthropic_beta flag that lifts Claude 3.7 Sonnet's output to 128K.
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html
const output128k = "output-128k-2025-02-19"

// Regions a model is documented as served in-Region (on demand with the base id).
var (
	usEastWest = []string{"us-east-1", "us-west-2"}
	usWest     = []string{"us-west-2"}
	everywhere = []string{"*"}
)

// bedrockModels are the Bedrock foundation models the simulators know.
//
// Profile-only models answer a base-id call with the on-demand ValidationException;
// seen for 3.5 Sonnet v2 (https://github.com/danny-avila/LibreChat/issues/4570),
// 3.5 Haiku (https://github.com/strands-agents/samples/issues/145), 3.7 Sonnet
// (https://github.com/cline/cline/issues/2482), Sonnet 4.5
// (https://github.com/Laisky/one-api/issues/245); the model cards list the
// "Geo inference ID" / "Global inference ID" to use instead
// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-cards.html).
var bedrockModels = map[string]bedrockModel{
	// Claude: max output per https://platform.claude.com/docs/en/about-claude/models/overview
	// and the Bedrock model cards. Bedrock caps 3.5 Sonnet v1 at 4096
	// (https://github.com/boto/boto3/issues/4279); v1 is refused on demand in
	// us-east-2 (https://github.com/aws-samples/bedrock-access-gateway/issues/73).
	"anthropic.claude-3-haiku-20240307-v1:0":    {fam: famClaude, maxOut: 4096, inRegion: usEastWest, profiles: true},
	"anthropic.claude-3-5-sonnet-20240620-v1:0": {fam: famClaude, maxOut: 4096, inRegion: usEastWest, profiles: true},
	"anthropic.claude-3-5-sonnet-20241022-v2:0": {fam: famClaude, maxOut: 8192, profiles: true},
	"anthropic.claude-3-5-haiku-20241022-v1:0":  {fam: famClaude, maxOut: 8192, profiles: true},
	"anthropic.claude-3-7-sonnet-20250219-v1:0": {fam: famClaude, maxOut: 64000, maxOutBeta: 128000, profiles: true},
	"anthropic.claude-sonnet-4-20250514-v1:0":   {fam: famClaude, maxOut: 64000, profiles: true},
	"anthropic.claude-opus-4-20250514-v1:0":     {fam: famClaude, maxOut: 32000, profiles: true},
	"anthropic.claude-opus-4-1-20250805-v1:0":   {fam: famClaude, maxOut: 32000, profiles: true},
	"anthropic.claude-sonnet-4-5-20250929-v1:0": {fam: famClaude, maxOut: 64000, profiles: true},
	// "Max output tokens: 64K" (Bedrock model card, Claude Haiku 4.5).
	"anthropic.claude-haiku-4-5-20251001-v1:0": {fam: famClaude, maxOut: 64000, profiles: true},
	"anthropic.claude-opus-4-5-20251101-v1:0":  {fam: famClaude, maxOut: 64000, profiles: true},
	// Claude 4.6 and later: ids without a date suffix, served on demand
	// through profiles only; max output from the Anthropic models overview
	// and the Bedrock model cards (Haiku 5.5: 128K), 64K where not found.
	"anthropic.claude-opus-4-6-v1": {fam: famClaude, maxOut: 128000, profiles: true},
	"anthropic.claude-sonnet-4-6":  {fam: famClaude, maxOut: 64000, profiles: true},
	"anthropic.claude-opus-4-7":    {fam: famClaude, maxOut: 128000, profiles: true}, // "Max output tokens: 128K" (Bedrock model card)
	"anthropic.claude-opus-4-8":    {fam: famClaude, maxOut: 64000, profiles: true},
	"anthropic.claude-opus-5":      {fam: famClaude, maxOut: 128000, profiles: true},
	"anthropic.claude-opus-5-5":    {fam: famClaude, maxOut: 128000, profiles: true},
	"anthropic.claude-sonnet-5":    {fam: famClaude, maxOut: 128000, profiles: true},
	"anthropic.claude-sonnet-5-5":  {fam: famClaude, maxOut: 128000, profiles: true},
	"anthropic.claude-haiku-5-5":   {fam: famClaude, maxOut: 128000, profiles: true},
	"anthropic.claude-fable-5":     {fam: famClaude, maxOut: 64000, profiles: true},
	"anthropic.claude-fable-5-1":   {fam: famClaude, maxOut: 128000, profiles: true}, // Anthropic's model page: Bedrock id, 128K output

	// Nova understanding models: maxTokens "greater than 0, equal or less than 5k"
	// (https://docs.aws.amazon.com/nova/latest/userguide/complete-request-schema.html);
	// the Nova Lite card lists amazon.nova-lite-v1:0 at the in-Region endpoint and
	// us./eu. geo profiles (https://docs.aws.amazon.com/bedrock/latest/userguide/model-card-amazon-nova-lite.html).
	"amazon.nova-micro-v1:0": {fam: famNova, maxOut: 5000, inRegion: []string{"us-east-1"}, profiles: true},
	"amazon.nova-lite-v1:0":  {fam: famNova, maxOut: 5000, inRegion: []string{"us-east-1"}, profiles: true},
	"amazon.nova-pro-v1:0":   {fam: famNova, maxOut: 5000, inRegion: []string{"us-east-1"}, profiles: true, tiers: []string{"flex", "priority"}},
	// Nova 2 Lite: 64K output (model card; 65K elsewhere, stricter reading),
	// cross-Region profiles only; flex and priority per AWS's IDP sample
	// (https://aws-solutions-library-samples.github.io/accelerated-intelligent-document-processing-on-aws/service-tiers, read 2026-12-01).
	"amazon.nova-2-lite-v1:0": {fam: famNova, maxOut: 64000, profiles: true, tiers: []string{"flex", "priority"}},

	// Llama: max_gen_len at most 2048
	// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-meta.html;
	// "exceeds the model limit of 2048" for Llama 3.1 70B,
	// https://github.com/aws-samples/bedrock-access-gateway/issues/41). Llama 3.2
	// and 3.3 are served through inference profiles only (geofenced, same page).
	"meta.llama3-8b-instruct-v1:0":    {fam: famLlama, maxOut: 2048, inRegion: usEastWest},
	"meta.llama3-70b-instruct-v1:0":   {fam: famLlama, maxOut: 2048, inRegion: usEastWest},
	"meta.llama3-1-8b-instruct-v1:0":  {fam: famLlama, maxOut: 2048, inRegion: usWest, profiles: true},
	"meta.llama3-1-70b-instruct-v1:0": {fam: famLlama, maxOut: 2048, inRegion: usWest, profiles: true},
	"meta.llama3-2-1b-instruct-v1:0":  {fam: famLlama, maxOut: 2048, profiles: true},
	"meta.llama3-2-3b-instruct-v1:0":  {fam: famLlama, maxOut: 2048, profiles: true},
	"meta.llama3-2-11b-instruct-v1:0": {fam: famLlama, maxOut: 2048, profiles: true},
	"meta.llama3-2-90b-instruct-v1:0": {fam: famLlama, maxOut: 2048, profiles: true},
	"meta.llama3-3-70b-instruct-v1:0": {fam: famLlama, maxOut: 2048, profiles: true},

	// Mistral text completion: max_tokens maximum 8,192 (7B, Large, Small) and
	// 4,096 (Mixtral 8x7B)
	// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-mistral-text-completion.html).
	"mistral.mistral-7b-instruct-v0:2":   {fam: famMistral, maxOut: 8192, inRegion: usEastWest},
	"mistral.mixtral-8x7b-instruct-v0:1": {fam: famMistral, maxOut: 4096, inRegion: usEastWest},
	"mistral.mistral-large-2402-v1:0":    {fam: famMistral, maxOut: 8192, inRegion: usEastWest},
	"mistral.mistral-small-2402-v1:0":    {fam: famMistral, maxOut: 8192, inRegion: []string{"us-east-1"}},

	// Embeddings, served in-Region wherever offered.
	// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html
	"amazon.titan-embed-text-v2:0": {fam: famTitanEmbed, inRegion: everywhere},
	// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html
	"cohere.embed-english-v3":      {fam: famCohereEmbed, inRegion: everywhere},
	"cohere.embed-multilingual-v3": {fam: famCohereEmbed, inRegion: everywhere},
	// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed-v4.html
	"cohere.embed-v4:0": {fam: famCohereEmbedV4, inRegion: everywhere},
	// https://docs.aws.amazon.com/nova/latest/userguide/embeddings-schema.html
	"amazon.nova-2-multimodal-embeddings-v1:0": {fam: famNovaEmbed, inRegion: everywhere},
}

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
}

// anthropicModels: max output from
// https://platform.claude.com/docs/en/about-claude/models/overview; minimum
// cacheable lengths from https://platform.claude.com/docs/en/build-with-claude/prompt-caching
// ("4096 tokens for Claude Opus 4.6, Claude Opus 4.5 ... 1024 tokens for Claude
// Sonnet 4.5, Claude Opus 4.1, Claude Opus 4, Claude Sonnet 4, and Claude Sonnet
// 3.7 ... 4096 tokens for Claude Haiku 4.5 ... 2048 tokens for Claude Haiku 3.5
// and Claude Haiku 3", as quoted in
// https://github.com/anthropics/anthropic-sdk-python/issues/1194).
var anthropicModels = map[string]anthropicModel{
	"claude-3-haiku-20240307":    {maxOut: 4096, cacheMin: 2048},
	"claude-3-5-haiku-20241022":  {maxOut: 8192, cacheMin: 2048},
	"claude-3-5-haiku-latest":    {maxOut: 8192, cacheMin: 2048},
	"claude-3-5-sonnet-20240620": {maxOut: 8192, cacheMin: 1024},
	"claude-3-5-sonnet-20241022": {maxOut: 8192, cacheMin: 1024},
	"claude-3-7-sonnet-20250219": {maxOut: 64000, maxOutBeta: 128000, cacheMin: 1024},
	"claude-3-7-sonnet-latest":   {maxOut: 64000, maxOutBeta: 128000, cacheMin: 1024},
	"claude-sonnet-4-20250514":   {maxOut: 64000, cacheMin: 1024},
	"claude-sonnet-4-0":          {maxOut: 64000, cacheMin: 1024},
	"claude-opus-4-20250514":     {maxOut: 32000, cacheMin: 1024},
	"claude-opus-4-0":            {maxOut: 32000, cacheMin: 1024},
	"claude-opus-4-1-20250805":   {maxOut: 32000, cacheMin: 1024},
	"claude-opus-4-1":            {maxOut: 32000, cacheMin: 1024},
	"claude-sonnet-4-5-20250929": {maxOut: 64000, cacheMin: 1024},
	"claude-sonnet-4-5":          {maxOut: 64000, cacheMin: 1024},
	"claude-haiku-4-5-20251001":  {maxOut: 64000, cacheMin: 4096},
	"claude-haiku-4-5":           {maxOut: 64000, cacheMin: 4096},
	"claude-opus-4-5-20251101":   {maxOut: 64000, cacheMin: 4096},
	"claude-opus-4-5":            {maxOut: 64000, cacheMin: 4096},
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
func KnownBedrockModels() []string   { return sortedKeys(bedrockModels) }
func KnownAnthropicModels() []string { return sortedKeys(anthropicModels) }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// familyOf guesses a family from a model id's provider prefix, for ids the
// table does not hold.
func familyOf(base string) family {
	switch {
	case strings.HasPrefix(base, "anthropic."):
		return famClaude
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
	case strings.HasPrefix(base, "amazon.nova-2-multimodal-embeddings"):
		return famNovaEmbed
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
