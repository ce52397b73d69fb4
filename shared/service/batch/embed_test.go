package batch

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// The embedding settings and texts are held to the catalog entry of the model.
func TestCheckEmbedding(t *testing.T) {
	bedrock := limitsProvider{namedProvider{name: "bedrock"}}
	s := &Service{Providers: service.NewRegistry(bedrock), OnDemand: noOnDemand{}}
	const titan, cohere = "amazon.titan-embed-text-v2:0", "cohere.embed-english-v3"
	text := func(ts ...string) []job.Input {
		out := make([]job.Input, len(ts))
		for i, t := range ts {
			out[i] = job.Input{Text: t}
		}
		return out
	}
	no := false
	tests := []struct {
		name, model string
		records     []job.Input
		ep          *job.EmbedParams
		index       *IndexRequest
		wantField   string
		wantDims    int
		wantText    string // the first record's text after the check
		wantWarning string // in the submit's warnings
	}{
		{name: "titan defaults to 1024", model: titan, records: text("a"), wantDims: 1024, wantText: "a"},
		{name: "titan 256", model: titan, records: text("a"), ep: &job.EmbedParams{Dimensions: 256, Normalize: &no}, wantDims: 256, wantText: "a"},
		{name: "titan 300", model: titan, records: text("a"), ep: &job.EmbedParams{Dimensions: 300}, wantField: "dimensions"},
		{name: "cohere 1024 only", model: cohere, records: text("a"), ep: &job.EmbedParams{Dimensions: 256}, wantField: "dimensions"},
		{name: "cohere normalize", model: cohere, records: text("a"), ep: &job.EmbedParams{Normalize: &no}, wantField: "normalize"},
		{name: "cohere input_type", model: cohere, records: text("a"), ep: &job.EmbedParams{InputType: "images"}, wantField: "input_type"},
		{name: "titan input_type", model: titan, records: text("a"), ep: &job.EmbedParams{InputType: "search_query"}, wantField: "input_type"},
		{name: "bad truncate", model: cohere, records: text("a"), ep: &job.EmbedParams{Truncate: "LEFT"}, wantField: "truncate"},
		{name: "empty text", model: titan, records: text("a", " \n"), wantField: "records[1].text"},
		{name: "over the limit", model: cohere, records: text(strings.Repeat("x", 2049)), wantField: "records[0].text"},
		{name: "over the limit, cut at the end", model: cohere, records: text(strings.Repeat("x", 2048) + "END"),
			ep: &job.EmbedParams{Truncate: "END"}, wantDims: 1024, wantText: strings.Repeat("x", 2048),
			wantWarning: "1 text(s) over model cohere.embed-english-v3's input limit (512 tokens, 2048 characters) were cut at the end (truncate END)"},
		{name: "over the limit, cut at the start", model: cohere, records: text("START" + strings.Repeat("y", 2048)),
			ep: &job.EmbedParams{Truncate: "START"}, wantDims: 1024, wantText: strings.Repeat("y", 2048),
			wantWarning: "1 text(s) over model cohere.embed-english-v3's input limit (512 tokens, 2048 characters) were cut at the start (truncate START)"},
		// Limits in estimated tokens (4 characters a token): Titan V2 8,192 tokens
		// (before its 50,000 characters), Cohere v3 512.
		{name: "titan over 8,192 tokens refused", model: titan, records: text(strings.Repeat("t", 8192*4+1)), wantField: "records[0].text", wantWarning: "8192 tokens"},
		{name: "titan over 8,192 tokens cut at the end", model: titan, records: text(strings.Repeat("t", 8192*4) + "TAIL"),
			ep: &job.EmbedParams{Truncate: "END"}, wantDims: 1024, wantText: strings.Repeat("t", 8192*4), wantWarning: "1 text(s) over model amazon.titan-embed-text-v2:0's input limit (8192 tokens, 50000 characters) were cut at the end (truncate END)"},
		{name: "cohere v3 at 512 tokens of multibyte text", model: cohere, records: text(strings.Repeat("é", 512*4+1)), wantField: "records[0].text"},
		{name: "cohere v4 defaults to 1536", model: "cohere.embed-v4:0", records: text("a"), wantDims: 1536, wantText: "a"},
		{name: "cohere v4 256", model: "cohere.embed-v4:0", records: text("a"), ep: &job.EmbedParams{Dimensions: 256, InputType: "search_query"}, wantDims: 256, wantText: "a"},
		{name: "cohere v4 384 refused", model: "cohere.embed-v4:0", records: text("a"), ep: &job.EmbedParams{Dimensions: 384}, wantField: "dimensions"},
		{name: "nova embeddings default 3072", model: "amazon.nova-2-multimodal-embeddings-v1:0", records: text("a"), wantDims: 3072, wantText: "a"},
		{name: "nova embeddings 384", model: "amazon.nova-2-multimodal-embeddings-v1:0", records: text("a"), ep: &job.EmbedParams{Dimensions: 384}, wantDims: 384, wantText: "a"},
		{name: "nova embeddings 512 refused", model: "amazon.nova-2-multimodal-embeddings-v1:0", records: text("a"), ep: &job.EmbedParams{Dimensions: 512}, wantField: "dimensions"},
		{name: "native body with an index", model: titan, records: []job.Input{{ModelInput: []byte(`{"inputText":"x"}`)}},
			index: &IndexRequest{Name: "i"}, wantField: "records[0].model_input"},
		{name: "text to a text model", model: "anthropic.claude-haiku-4-5-20251001-v1:0", records: text("a"), wantField: "records[0].text"},
		{name: "index on a text model", model: "anthropic.claude-haiku-4-5-20251001-v1:0", records: []job.Input{{Prompt: "p"}},
			index: &IndexRequest{Name: "i"}, wantField: "index"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &SubmitRequest{Model: tc.model, Records: tc.records, Params: job.Params{Embed: tc.ep}, Index: tc.index}
			_, err := s.checkModel(req, bedrock)
			if tc.wantField != "" {
				var fe *job.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.wantField {
					t.Fatalf("got %v, want a field error on %s", err, tc.wantField)
				}
				if !strings.Contains(fe.Reason, tc.wantWarning) {
					t.Errorf("reason %q does not name %q", fe.Reason, tc.wantWarning)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.Params.Embed.Dimensions != tc.wantDims || req.Records[0].Text != tc.wantText {
				t.Errorf("dims %d text %.20q…, want %d %.20q…", req.Params.Embed.Dimensions, req.Records[0].Text, tc.wantDims, tc.wantText)
			}
			if tc.wantWarning != "" && !slices.Contains(req.Warnings, tc.wantWarning) {
				t.Errorf("warnings %q lack %q", req.Warnings, tc.wantWarning)
			}
			if tc.wantWarning == "" && len(req.Warnings) > 0 {
				t.Errorf("warnings %q, want none", req.Warnings)
			}
		})
	}
}
