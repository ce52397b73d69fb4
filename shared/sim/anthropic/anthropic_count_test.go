package anthropic_test

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
)

// POST /v1/messages/count_tokens through the official SDK's
// Messages.CountTokens: a count for a well-formed body, the API's error for
// each bad one, and the headers every call needs.
func TestAnthropicCountTokens(t *testing.T) {
	busy := false
	s := &simanthropic.AnthropicSim{APIKey: "k", Log: slog.New(slog.DiscardHandler), CountBusy: func() bool { return busy }}
	_, c := serveAnthropic(t, s)

	user := func(text string) []anthropic.MessageParam {
		return []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}
	}
	text := strings.Repeat("word ", 200) // 1,000 bytes: 250 tokens at the simulator's 4 bytes a token
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF"))
	cases := []struct {
		name   string
		params anthropic.MessageCountTokensParams
		opts   []option.RequestOption
		busy   bool
		want   int64  // input_tokens, when no error
		status int    // HTTP status of the error
		errMsg string // part of the error message
	}{
		{name: "prompt", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user(text)}, want: 250},
		{name: "system and prompt", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user(text),
			System: anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String(strings.Repeat("abcd", 10))}}, want: 260},
		{name: "conversation", params: anthropic.MessageCountTokensParams{Model: "claude-sonnet-4-5", Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("abcdabcd")), anthropic.NewAssistantMessage(anthropic.NewTextBlock("abcd")),
			anthropic.NewUserMessage(anthropic.NewTextBlock("abcdabcdabcd"))}}, want: 6},
		{name: "legacy beta header accepted", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user(text)},
			opts: []option.RequestOption{option.WithHeader("anthropic-beta", "token-counting-2024-11-01")}, want: 250},
		{name: "with a PDF", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: pdf}), anthropic.NewTextBlock("abcd"))}}, want: -1},
		{name: "max_tokens refused", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user("q")},
			opts: []option.RequestOption{option.WithJSONSet("max_tokens", 100)}, status: 400, errMsg: "max_tokens: Extra inputs are not permitted"},
		{name: "temperature refused", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user("q")},
			opts: []option.RequestOption{option.WithJSONSet("temperature", 1)}, status: 400, errMsg: "temperature: Extra inputs are not permitted"},
		{name: "no model", params: anthropic.MessageCountTokensParams{Messages: user("q")}, status: 400, errMsg: "model: Field required"},
		{name: "no messages", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5"}, status: 400, errMsg: "messages: Field required"},
		{name: "empty messages", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5"},
			opts: []option.RequestOption{option.WithJSONSet("messages", []any{})}, status: 400, errMsg: "messages: at least one message is required"},
		{name: "bad role", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user("q")},
			opts: []option.RequestOption{option.WithJSONSet("messages.0.role", "system")}, status: 400, errMsg: "messages.0.role: Input should be 'user' or 'assistant'"},
		{name: "no content", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5"},
			opts: []option.RequestOption{option.WithJSONSet("messages", []any{map[string]any{"role": "user"}})}, status: 400, errMsg: "messages.0.content: Field required"},
		{name: "document in an assistant turn under 2026-10-21", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("q")),
			anthropic.NewAssistantMessage(anthropic.NewDocumentBlock(anthropic.PlainTextSourceParam{Data: "d"}))}},
			status: 400, errMsg: "messages.1.content.0: document blocks are not permitted in assistant messages"},
		{name: "broken image", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewImageBlockBase64("image/png", base64.StdEncoding.EncodeToString([]byte("not a png"))))}},
			status: 400, errMsg: "image"},
		{name: "system not text", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user("q")},
			opts: []option.RequestOption{option.WithJSONSet("system", 7)}, status: 400, errMsg: "system: Input should be a valid string or a list of text blocks"},
		{name: "tools not a list", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user("q")},
			opts: []option.RequestOption{option.WithJSONSet("tools", map[string]any{"name": "t"})}, status: 400, errMsg: "tools: Input should be a valid list"},
		{name: "retired model", params: anthropic.MessageCountTokensParams{Model: "claude-opus-4-1", Messages: user("q")}, status: 404, errMsg: "model: claude-opus-4-1"},
		{name: "rate limited", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user("q")}, busy: true, status: 429, errMsg: "rate limit"},
		{name: "no version", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user("q")},
			opts: []option.RequestOption{option.WithHeaderDel("anthropic-version")}, status: 400, errMsg: "anthropic-version: header is required"},
		{name: "wrong key", params: anthropic.MessageCountTokensParams{Model: "claude-haiku-4-5", Messages: user("q")},
			opts: []option.RequestOption{option.WithAPIKey("other")}, status: 401, errMsg: "x-api-key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			busy = tc.busy
			res, err := c.Messages.CountTokens(context.Background(), tc.params, tc.opts...)
			if tc.status == 0 {
				switch {
				case err != nil:
					t.Fatalf("count: %v", err)
				case tc.want >= 0 && res.InputTokens != tc.want:
					t.Errorf("input_tokens %d, want %d", res.InputTokens, tc.want)
				case res.InputTokens <= 1:
					t.Errorf("input_tokens %d, want the document counted", res.InputTokens)
				}
				return
			}
			var ae *anthropic.Error
			if !errors.As(err, &ae) {
				t.Fatalf("got %v (%+v), want HTTP %d", err, res, tc.status)
			}
			if ae.StatusCode != tc.status || !strings.Contains(ae.Error(), tc.errMsg) || !strings.Contains(ae.Error(), "SIMULATED") {
				t.Errorf("HTTP %d %s, want %d with %q", ae.StatusCode, ae.Error(), tc.status, tc.errMsg)
			}
		})
	}
	if n := s.Calls()["count_tokens"]; n == 0 {
		t.Errorf("no count_tokens call recorded: %v", s.Calls())
	}
}

// A body over the API's 32 MB limit gets 413 request_too_large, and a body
// that is not JSON 400, on the raw wire.
func TestAnthropicCountTokensBodyLimits(t *testing.T) {
	url, _ := serveAnthropic(t, &simanthropic.AnthropicSim{Log: slog.New(slog.DiscardHandler)})
	big := `{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"` + strings.Repeat("a", 32<<20) + `"}]}`
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"over 32 MB", big, http.StatusRequestEntityTooLarge},
		{"not JSON", `{"model":`, http.StatusBadRequest},
		{"model not a string", `{"model":7,"messages":[{"role":"user","content":"q"}]}`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages/count_tokens", strings.NewReader(tc.body))
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("content-type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// A count and the usage a batch bills for the same request agree: the
// simulator counts with the tokenizer it bills with.
func TestAnthropicCountMatchesBilledUsage(t *testing.T) {
	s := &simanthropic.AnthropicSim{APIKey: "k", Log: slog.New(slog.DiscardHandler)}
	_, c := serveAnthropic(t, s)
	long := strings.Repeat("Refund policy clause. ", 300) // cached once written
	reqs := []batchReq{
		{id: "plain", model: "claude-sonnet-4-5", maxTokens: 50},
		{id: "system", model: "claude-sonnet-4-5", system: "Answer in French.", maxTokens: 50},
		{id: "cachewrite", model: "claude-sonnet-4-5", system: long, cache: true, maxTokens: 50},
		{id: "cacheread", model: "claude-sonnet-4-5", system: long, cache: true, maxTokens: 50},
	}
	res := runBatch(t, s, c, reqs...)
	for _, r := range reqs {
		p := r.param().Params
		n, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{Model: p.Model, Messages: p.Messages,
			System: anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: p.System}})
		if err != nil {
			t.Fatal(err)
		}
		u := res[r.id].Message.Usage
		if billed := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; billed != n.InputTokens {
			t.Errorf("%s: counted %d, billed %d (%+v)", r.id, n.InputTokens, billed, u)
		}
	}
}
