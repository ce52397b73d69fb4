package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
)

// TestAnthropicVersionRules sends batches through the real SDK (which sends
// anthropic-version 2026-10-21, the product's checks bypassed) and with
// 2023-06-01: the simulator refuses what each version refuses, from its own
// table, with 400 invalid_request_error, and creates no batch.
func TestAnthropicVersionRules(t *testing.T) {
	s := &simanthropic.AnthropicSim{}
	_, c := serveAnthropic(t, s)
	user := anthropic.NewUserMessage(anthropic.NewTextBlock("q"))
	params := anthropic.MessageBatchNewParams{Requests: []anthropic.MessageBatchNewParamsRequest{{
		CustomID: "r1", Params: anthropic.MessageBatchNewParamsRequestParams{Model: "claude-haiku-4-5", MaxTokens: 10, Messages: []anthropic.MessageParam{user}},
	}}}
	doc := map[string]any{"type": "document", "source": map[string]any{"type": "text", "media_type": "text/plain", "data": "d"}}
	cases := []struct {
		name    string
		opts    []option.RequestOption
		wantErr string // "" : accepted
	}{
		{"plain request under 2026-10-21", nil, ""},
		{"temperature at its default under 2026-10-21", []option.RequestOption{option.WithJSONSet("requests.0.params.temperature", 1.0)}, "requests.0.params.temperature: Extra inputs are not permitted"},
		{"top_k under 2026-10-21", []option.RequestOption{option.WithJSONSet("requests.0.params.top_k", 5)}, "requests.0.params.top_k"},
		{"assistant document under 2026-10-21", []option.RequestOption{option.WithJSONSet("requests.0.params.messages", []any{
			map[string]any{"role": "user", "content": "q"}, map[string]any{"role": "assistant", "content": []any{doc}}, map[string]any{"role": "user", "content": "more"}})},
			"requests.0.params.messages.1.content.0: document blocks are not permitted in assistant messages"},
		{"user citations under 2026-10-21", []option.RequestOption{option.WithJSONSet("requests.0.params.messages", []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "q", "citations": []any{map[string]any{"type": "char_location"}}}}}})},
			"requests.0.params.messages.0.content.0.citations"},
		{"temperature under 2023-06-01", []option.RequestOption{option.WithHeader("anthropic-version", "2023-06-01"), option.WithJSONSet("requests.0.params.temperature", 0.2)}, ""},
		{"assistant document under 2023-06-01", []option.RequestOption{option.WithHeader("anthropic-version", "2023-06-01"), option.WithJSONSet("requests.0.params.messages", []any{
			map[string]any{"role": "user", "content": "q"}, map[string]any{"role": "assistant", "content": []any{doc}}, map[string]any{"role": "user", "content": "more"}})}, ""},
		{"unknown version", []option.RequestOption{option.WithHeader("anthropic-version", "2099-01-01")}, "not a valid version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.Statuses())
			_, err := c.Messages.Batches.New(context.Background(), params, tc.opts...)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ae *anthropic.Error
			if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(ae.RawJSON(), "invalid_request_error") || !strings.Contains(ae.RawJSON(), tc.wantErr) {
				t.Fatalf("err = %v; want 400 invalid_request_error containing %q", err, tc.wantErr)
			}
			if n := len(s.Statuses()); n != before {
				t.Errorf("batches went from %d to %d on a refusal; want none created", before, n)
			}
		})
	}
}

// TestAnthropicModelSampling: under 2023-06-01, which allows sampling, a
// model that takes only the defaults (Opus 4.7 and later) errors the request
// that sets temperature 0.2, and runs the one at the default 1.0 and the one
// sent to Haiku 4.5.
func TestAnthropicModelSampling(t *testing.T) {
	s := &simanthropic.AnthropicSim{}
	_, c := serveAnthropic(t, s, option.WithHeader("anthropic-version", "2023-06-01"))
	req := func(id, model string) anthropic.MessageBatchNewParamsRequest {
		return anthropic.MessageBatchNewParamsRequest{CustomID: id, Params: anthropic.MessageBatchNewParamsRequestParams{
			Model: anthropic.Model(model), MaxTokens: 10, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("q"))}}}
	}
	ctx := context.Background()
	b, err := c.Messages.Batches.New(ctx, anthropic.MessageBatchNewParams{Requests: []anthropic.MessageBatchNewParamsRequest{
		req("opus5-low", "claude-opus-5"), req("opus5-default", "claude-opus-5"), req("haiku45-low", "claude-haiku-4-5")}},
		option.WithJSONSet("requests.0.params.temperature", 0.2), option.WithJSONSet("requests.1.params.temperature", 1.0),
		option.WithJSONSet("requests.2.params.temperature", 0.2))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	stream := c.Messages.Batches.ResultsStreaming(ctx, b.ID, anthropic.MessageBatchResultsParams{})
	got := map[string]string{}
	for stream.Next() {
		r := stream.Current()
		got[r.CustomID] = r.Result.Type
		if r.CustomID == "opus5-low" && !strings.Contains(r.Result.Error.Error.Message, "temperature") {
			t.Errorf("opus5-low error %q does not name temperature", r.Result.Error.Error.Message)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"opus5-low": "errored", "opus5-default": "succeeded", "haiku45-low": "succeeded"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results %v, want %v", got, want)
	}
}
