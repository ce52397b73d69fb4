package bedrock

// The simulators' own table of documented service rules, per model. It is
// copied from AWS and Anthropic documentation (sources beside each fact,
// checked 2026-11-30) and deliberately not shared with the product: a
// simulator that read the product's rules could never catch the product
// getting them wrong. A model id missing here is served permissively, with a
// warning in the log saying so.

import (
	"hash/fnv"
	"math"
	"slices"
	"strings"
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

// KnownBedrockModels lists the ids the simulators hold rules for, so the
// product's catalogue can be checked against them.
func KnownBedrockModels() []string {
	var ids []string
	for _, m := range bedrockCatalog {
		if m.fam != famUnknown {
			ids = append(ids, m.id)
		}
	}
	return slices.Sorted(slices.Values(ids))
}

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
