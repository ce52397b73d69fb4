package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/claude"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// EmbedFamily is the request shape of an embedding model.
type EmbedFamily int

const (
	NotEmbedding EmbedFamily = iota
	// TitanEmbed: {"inputText", "dimensions", "normalize"} → {"embedding", "inputTextTokenCount"}.
	TitanEmbed
	// CohereEmbed: {"texts", "input_type", "truncate"} → {"embeddings": [[...]]}.
	CohereEmbed
	// CohereEmbedV4: {"texts", "input_type", "embedding_types", "output_dimension",
	// "truncate" NONE|LEFT|RIGHT} → {"embeddings": {"float": [[...]]}}.
	CohereEmbedV4
	// NovaEmbed: Nova Multimodal Embeddings' {"taskType": "SINGLE_EMBEDDING",
	// "singleEmbeddingParams": {...}} → {"embeddings": [{"embeddingType", "embedding"}]}.
	NovaEmbed
)

// EmbedFamilyOf names the request shape of a model id (base id, profile id or ARN).
func EmbedFamilyOf(model string) EmbedFamily {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	base, _ := config.BaseModel(model)
	switch {
	case strings.HasPrefix(base, "amazon.titan-embed-text"):
		return TitanEmbed
	case strings.HasPrefix(base, "cohere.embed-v4"):
		return CohereEmbedV4
	case strings.HasPrefix(base, "cohere.embed-"):
		return CohereEmbed
	case strings.HasPrefix(base, "amazon.nova-2-multimodal-embeddings"):
		return NovaEmbed
	}
	return NotEmbedding
}

// titanEmbedBody is Titan Text Embeddings V2's InvokeModel body
// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html, checked 2026-11-30).
type titanEmbedBody struct {
	InputText  string `json:"inputText"`
	Dimensions int    `json:"dimensions,omitempty"`
	Normalize  bool   `json:"normalize"`
}

// cohereEmbedBody is Cohere Embed v3's InvokeModel body
// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html, checked 2026-11-30).
type cohereEmbedBody struct {
	Texts     []string `json:"texts"`
	InputType string   `json:"input_type"`
	Truncate  string   `json:"truncate,omitempty"`
}

// cohereV4Body is Cohere Embed v4's InvokeModel body
// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed-v4.html, checked 2026-12-01).
type cohereV4Body struct {
	Texts           []string `json:"texts"`
	InputType       string   `json:"input_type"`
	EmbeddingTypes  []string `json:"embedding_types"`
	OutputDimension int      `json:"output_dimension,omitempty"`
	Truncate        string   `json:"truncate,omitempty"`
}

// novaEmbedBody is Nova Multimodal Embeddings' synchronous InvokeModel body
// for text (https://docs.aws.amazon.com/nova/latest/userguide/embeddings-schema.html, checked 2026-12-01).
type novaEmbedBody struct {
	TaskType string `json:"taskType"`
	Params   struct {
		EmbeddingPurpose   string `json:"embeddingPurpose"`
		EmbeddingDimension int    `json:"embeddingDimension,omitempty"`
		Text               struct {
			TruncationMode string `json:"truncationMode"`
			Value          string `json:"value"`
		} `json:"text"`
	} `json:"singleEmbeddingParams"`
}

// novaPurpose maps the job's input type onto Nova's embeddingPurpose:
// documents are indexed, queries retrieve text.
var novaPurpose = map[string]string{
	job.InputSearchDocument: "GENERIC_INDEX", job.InputSearchQuery: "TEXT_RETRIEVAL",
	"classification": "CLASSIFICATION", "clustering": "CLUSTERING",
}

// cohereV4Truncate maps the job's truncate onto Cohere v4's words: START
// drops the start (LEFT), END drops the end (RIGHT).
var cohereV4Truncate = map[string]string{job.TruncateNone: "NONE", job.TruncateStart: "LEFT", job.TruncateEnd: "RIGHT"}

// EmbeddingBody renders the native request body embedding texts (Titan takes
// exactly one; Cohere up to its per-call maximum) with the job's settings.
func EmbeddingBody(model string, texts []string, p *job.EmbedParams) ([]byte, error) {
	var ep job.EmbedParams
	if p != nil {
		ep = *p
	}
	switch EmbedFamilyOf(model) {
	case TitanEmbed:
		if len(texts) != 1 {
			return nil, fmt.Errorf("titan embeddings take one text per call (got %d)", len(texts))
		}
		norm := ep.Normalize == nil || *ep.Normalize
		return claude.Marshal(titanEmbedBody{InputText: texts[0], Dimensions: ep.Dimensions, Normalize: norm})
	case CohereEmbed:
		it := ep.InputType
		if it == "" {
			it = job.InputSearchDocument
		}
		return claude.Marshal(cohereEmbedBody{Texts: texts, InputType: it, Truncate: ep.Truncate})
	case CohereEmbedV4:
		it := ep.InputType
		if it == "" {
			it = job.InputSearchDocument
		}
		return claude.Marshal(cohereV4Body{Texts: texts, InputType: it, EmbeddingTypes: []string{"float"},
			OutputDimension: ep.Dimensions, Truncate: cohereV4Truncate[ep.Truncate]})
	case NovaEmbed:
		if len(texts) != 1 {
			return nil, fmt.Errorf("nova multimodal embeddings take one text per call (got %d)", len(texts))
		}
		var b novaEmbedBody
		b.TaskType = "SINGLE_EMBEDDING"
		b.Params.EmbeddingPurpose = novaPurpose[ep.InputType]
		if b.Params.EmbeddingPurpose == "" {
			b.Params.EmbeddingPurpose = "GENERIC_INDEX"
		}
		b.Params.EmbeddingDimension = ep.Dimensions
		b.Params.Text.TruncationMode = ep.Truncate
		if b.Params.Text.TruncationMode == "" {
			b.Params.Text.TruncationMode = job.TruncateNone
		}
		b.Params.Text.Value = texts[0]
		return claude.Marshal(b)
	}
	return nil, job.Fieldf("text", "model %s is not an embedding model this service renders (Titan Text Embeddings, Cohere Embed v3/v4, Nova Multimodal Embeddings); give its native body in model_input", model)
}

// Vectors reads the vectors of an embedding response (Titan "embedding";
// Cohere "embeddings" as [[...]] or {"float": [[...]]}; Nova "embeddings" as
// [{"embeddingType", "embedding": [...]}]), in text order.
func Vectors(output []byte) ([][]float32, error) {
	var o struct {
		Embedding  []float32       `json:"embedding"`
		Embeddings json.RawMessage `json:"embeddings"`
	}
	if err := json.Unmarshal(output, &o); err != nil {
		return nil, fmt.Errorf("embedding output: %w", err)
	}
	if len(o.Embedding) > 0 {
		return [][]float32{o.Embedding}, nil
	}
	e := bytes.TrimSpace(o.Embeddings)
	switch {
	case len(e) == 0:
		return nil, errors.New("embedding output: neither embedding nor embeddings")
	case e[0] == '[' && claude.FirstByte(e[1:]) == '{':
		var items []struct {
			Embedding []float32 `json:"embedding"`
		}
		if err := json.Unmarshal(e, &items); err != nil {
			return nil, fmt.Errorf("embedding output: embeddings: %w", err)
		}
		vs := make([][]float32, len(items))
		for i, it := range items {
			vs[i] = it.Embedding
		}
		return vs, nil
	case e[0] == '[':
		var vs [][]float32
		if err := json.Unmarshal(e, &vs); err != nil {
			return nil, fmt.Errorf("embedding output: embeddings: %w", err)
		}
		return vs, nil
	default:
		var byType struct {
			Float [][]float32 `json:"float"`
		}
		if err := json.Unmarshal(e, &byType); err != nil || byType.Float == nil {
			return nil, fmt.Errorf("embedding output: embeddings: want an array or {\"float\": [...]}")
		}
		return byType.Float, nil
	}
}

// Vector is the one vector of a single-text embedding response.
func Vector(output []byte) ([]float32, error) {
	if v, ok := leadingEmbedding(output); ok {
		return v, nil
	}
	vs, err := Vectors(output)
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return nil, fmt.Errorf("embedding output: want one vector, got %d", len(vs))
	}
	return vs[0], nil
}

// titanPrefix starts a Titan response as ingest stores it (compacted).
const titanPrefix = `{"embedding":[`

// leadingEmbedding reads the numbers of a response that starts with Titan's
// embedding array without a JSON decoder (a 1,024-number array is most of
// the ingest time of an embedding job). Anything unexpected answers false
// and the caller decodes the response in full.
func leadingEmbedding(output []byte) ([]float32, bool) {
	if !bytes.HasPrefix(output, []byte(titanPrefix)) {
		return nil, false
	}
	s := string(output[len(titanPrefix):]) // one copy; the numbers are sliced from it
	v := make([]float32, 0, 1024)
	for i := 0; ; {
		j := i
		for j < len(s) && s[j] != ',' && s[j] != ']' {
			j++
		}
		if j == len(s) {
			return nil, false
		}
		if j == i && s[j] == ']' && len(v) == 0 {
			return nil, false // empty: let the decoder report it
		}
		f, err := strconv.ParseFloat(s[i:j], 32)
		if err != nil {
			return nil, false
		}
		v = append(v, float32(f))
		if s[j] == ']' {
			return v, true
		}
		i = j + 1
	}
}

// SplitVectors cuts a response to texts embedded in one call into one
// response per text, {"embeddings":[<vector>]} with the numbers as the model
// wrote them, which Vector reads.
func SplitVectors(output []byte) ([][]byte, error) {
	var o struct {
		Embeddings json.RawMessage `json:"embeddings"`
	}
	if err := json.Unmarshal(output, &o); err != nil {
		return nil, fmt.Errorf("embedding output: %w", err)
	}
	var raw []json.RawMessage
	e := bytes.TrimSpace(o.Embeddings)
	switch {
	case len(e) > 0 && e[0] == '[':
		if err := json.Unmarshal(e, &raw); err != nil {
			return nil, fmt.Errorf("embedding output: embeddings: %w", err)
		}
	case len(e) > 0 && e[0] == '{':
		var byType struct {
			Float []json.RawMessage `json:"float"`
		}
		if err := json.Unmarshal(e, &byType); err != nil || byType.Float == nil {
			return nil, errors.New(`embedding output: embeddings: want an array or {"float": [...]}`)
		}
		raw = byType.Float
	default:
		return nil, errors.New("embedding output: no embeddings")
	}
	out := make([][]byte, len(raw))
	for i, v := range raw {
		out[i] = append(append([]byte(`{"embeddings":[`), v...), "]}"...)
	}
	return out, nil
}
