package bedrock

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

func TestEncodeEmbeddingRecord(t *testing.T) {
	no := false
	tests := []struct {
		name, model string
		p           *job.EmbedParams
		want        string
	}{
		{"titan defaults", "amazon.titan-embed-text-v2:0", nil,
			`{"recordId":"r00000001","modelInput":{"inputText":"hello world","normalize":true}}`},
		{"titan 256 not normalized", "amazon.titan-embed-text-v2:0", &job.EmbedParams{Dimensions: 256, Normalize: &no},
			`{"recordId":"r00000001","modelInput":{"inputText":"hello world","dimensions":256,"normalize":false}}`},
		{"cohere defaults", "cohere.embed-english-v3", &job.EmbedParams{Dimensions: 1024},
			`{"recordId":"r00000001","modelInput":{"texts":["hello world"],"input_type":"search_document"}}`},
		{"cohere query, truncate END", "cohere.embed-multilingual-v3", &job.EmbedParams{InputType: "search_query", Truncate: "END"},
			`{"recordId":"r00000001","modelInput":{"texts":["hello world"],"input_type":"search_query","truncate":"END"}}`},
		// Cohere v4 names truncation LEFT/RIGHT and takes output_dimension.
		{"cohere v4 256, truncate START", "cohere.embed-v4:0", &job.EmbedParams{Dimensions: 256, Truncate: "START"},
			`{"recordId":"r00000001","modelInput":{"texts":["hello world"],"input_type":"search_document","embedding_types":["float"],"output_dimension":256,"truncate":"LEFT"}}`},
		{"cohere v4 profile, query, truncate NONE", "us.cohere.embed-v4:0", &job.EmbedParams{Dimensions: 1536, InputType: "search_query", Truncate: "NONE"},
			`{"recordId":"r00000001","modelInput":{"texts":["hello world"],"input_type":"search_query","embedding_types":["float"],"output_dimension":1536,"truncate":"NONE"}}`},
		{"nova embeddings 3072", "amazon.nova-2-multimodal-embeddings-v1:0", &job.EmbedParams{Dimensions: 3072},
			`{"recordId":"r00000001","modelInput":{"taskType":"SINGLE_EMBEDDING","singleEmbeddingParams":{"embeddingPurpose":"GENERIC_INDEX","embeddingDimension":3072,"text":{"truncationMode":"NONE","value":"hello world"}}}}`},
		{"nova embeddings query 384, truncate END", "amazon.nova-2-multimodal-embeddings-v1:0", &job.EmbedParams{Dimensions: 384, InputType: "search_query", Truncate: "END"},
			`{"recordId":"r00000001","modelInput":{"taskType":"SINGLE_EMBEDDING","singleEmbeddingParams":{"embeddingPurpose":"TEXT_RETRIEVAL","embeddingDimension":384,"text":{"truncationMode":"END","value":"hello world"}}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, err := EncodeRecord(tc.model, job.Input{ID: "r00000001", Text: "hello world"}, job.Params{Embed: tc.p})
			if err != nil {
				t.Fatal(err)
			}
			if string(line) != tc.want {
				t.Errorf("line\n got %s\nwant %s", line, tc.want)
			}
		})
	}
}

func TestEncodeEmbeddingRefusals(t *testing.T) {
	_, err := EncodeRecordAt(3, "anthropic.claude-3-5-haiku-20241022-v1:0", job.Input{ID: "r00000001", Text: "x"}, job.Params{})
	if err == nil || !strings.Contains(err.Error(), "records[3].text") {
		t.Errorf("text to a Claude model: %v", err)
	}
	_, err = EncodeRecord("amazon.titan-embed-text-v2:0", job.Input{ID: "r00000001", Text: "x", Prompt: "y"}, job.Params{})
	if err == nil || !strings.Contains(err.Error(), "only one of") {
		t.Errorf("text and prompt: %v", err)
	}
}

func TestEmbeddingOutputShapes(t *testing.T) {
	tests := []struct {
		name, line string
		want       [][]float32
		tokens     int64
		bad        string
	}{
		{name: "titan", line: `{"embedding":[0.5,-0.25],"inputTextTokenCount":3,"embeddingsByType":{"float":[0.5,-0.25]}}`, want: [][]float32{{0.5, -0.25}}, tokens: 3},
		{name: "cohere floats", line: `{"id":"x","response_type":"embeddings_floats","embeddings":[[1,0],[0,1]],"texts":["a","b"]}`, want: [][]float32{{1, 0}, {0, 1}}},
		{name: "cohere by type", line: `{"id":"x","response_type":"embeddings_by_type","embeddings":{"float":[[0.1,0.2]]}}`, want: [][]float32{{0.1, 0.2}}},
		{name: "nova multimodal embeddings", line: `{"embeddings":[{"embeddingType":"TEXT","embedding":[0.25,0.5,-0.75]}]}`, want: [][]float32{{0.25, 0.5, -0.75}}},
		{name: "no vectors", line: `{"id":"x"}`, bad: "neither embedding nor embeddings"},
		{name: "int8 only", line: `{"embeddings":{"int8":[[1,2]]}}`, bad: "want an array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := Vectors([]byte(tc.line))
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err = %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(vs, tc.want) {
				t.Fatalf("Vectors = %v, %v; want %v", vs, err, tc.want)
			}
			// The batch output line of the same answer keeps the response and Titan's token count.
			rec, err := ParseOutputLine([]byte(`{"recordId":"r00000001","modelInput":{},"modelOutput":` + tc.line + `}`))
			if err != nil || rec.InputTokens != tc.tokens || rec.Status != job.RecordSucceeded {
				t.Fatalf("ParseOutputLine = %+v, %v", rec, err)
			}
			if got, err := Vectors([]byte(rec.Output)); err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("stored output %q does not give the vectors back: %v", rec.Output, err)
			}
		})
	}
}

// The fast path of Vector agrees with the decoder, and falls back to it on
// anything else.
func TestVectorFastPath(t *testing.T) {
	out := titanOutput(1024)
	fast, err := Vector(out)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Vectors(out)
	if err != nil || !reflect.DeepEqual(fast, full[0]) {
		t.Fatalf("fast path differs from the decoder: %v", err)
	}
	for _, tc := range []struct{ in, bad string }{
		{`{"embedding":[]}`, "neither embedding nor embeddings"},
		{`{"embedding":[1,"x"]}`, "embedding output"},
		{`{"embedding":[1,2`, "embedding output"},
	} {
		if _, err := Vector([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("Vector(%s) = %v, want %q", tc.in, err, tc.bad)
		}
	}
	if v, err := Vector([]byte(`{"embedding": [0.5, 1e-3]}`)); err != nil || len(v) != 2 || v[1] != 0.001 {
		t.Errorf("spaced output: %v %v", v, err)
	}
}

// One call's vectors cut per text read back as single-text responses.
func TestSplitVectors(t *testing.T) {
	for _, out := range []string{
		`{"id":"x","response_type":"embeddings_floats","embeddings":[[1,0.5],[0,-1e-3]],"texts":["a","b"]}`,
		`{"id":"x","response_type":"embeddings_by_type","embeddings":{"float":[[1,0.5],[0,-1e-3]]}}`,
	} {
		parts, err := SplitVectors([]byte(out))
		if err != nil || len(parts) != 2 {
			t.Fatalf("%s: %d parts, %v", out, len(parts), err)
		}
		for i, want := range [][]float32{{1, 0.5}, {0, -1e-3}} {
			if v, err := Vector(parts[i]); err != nil || !reflect.DeepEqual(v, want) {
				t.Errorf("%s part %d: %s → %v, %v", out, i, parts[i], v, err)
			}
		}
	}
	if _, err := SplitVectors([]byte(`{"embedding":[1]}`)); err == nil {
		t.Error("a response without embeddings split")
	}
}
