package anthropic_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
)

// clock is a settable time source for the simulator's cache lifetimes.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type batchReq struct {
	id, model, system string
	cache             bool
	maxTokens         int64
}

func (r batchReq) param() anthropic.MessageBatchNewParamsRequest {
	p := anthropic.MessageBatchNewParamsRequestParams{
		Model: anthropic.Model(r.model), MaxTokens: r.maxTokens,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("question " + r.id))},
	}
	if r.system != "" {
		b := anthropic.TextBlockParam{Text: r.system}
		if r.cache {
			b.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.System = []anthropic.TextBlockParam{b}
	}
	return anthropic.MessageBatchNewParamsRequest{CustomID: r.id, Params: p}
}

// serveAnthropic serves s on a loopback port for the test and returns its
// URL and an SDK client for it (key "k", no retries, and opts).
func serveAnthropic(t *testing.T, s *simanthropic.AnthropicSim, opts ...option.RequestOption) (string, anthropic.Client) {
	t.Helper()
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return url, anthropic.NewClient(append([]option.RequestOption{option.WithAPIKey("k"), option.WithBaseURL(url), option.WithMaxRetries(0)}, opts...)...)
}

// runBatch submits reqs through the SDK, ends the batch and returns its results by custom_id.
func runBatch(t *testing.T, s *simanthropic.AnthropicSim, c anthropic.Client, reqs ...batchReq) map[string]anthropic.MessageBatchResultUnion {
	t.Helper()
	return runBatchWith(t, s, c, nil, reqs...)
}

// runBatchWith is runBatch with request options on the create (headers).
func runBatchWith(t *testing.T, s *simanthropic.AnthropicSim, c anthropic.Client, opts []option.RequestOption, reqs ...batchReq) map[string]anthropic.MessageBatchResultUnion {
	t.Helper()
	ctx := context.Background()
	var params []anthropic.MessageBatchNewParamsRequest
	for _, r := range reqs {
		params = append(params, r.param())
	}
	b, err := c.Messages.Batches.New(ctx, anthropic.MessageBatchNewParams{Requests: params}, opts...)
	if err != nil {
		t.Fatalf("create: %v", err) // a bad request is an errored result, never a refused batch
	}
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	stream := c.Messages.Batches.ResultsStreaming(ctx, b.ID, anthropic.MessageBatchResultsParams{})
	out := map[string]anthropic.MessageBatchResultUnion{}
	for stream.Next() {
		r := stream.Current()
		out[r.CustomID] = r.Result
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAnthropicCacheTokensAndMaxTokens(t *testing.T) {
	var logs bytes.Buffer
	clk := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	s := &simanthropic.AnthropicSim{APIKey: "k", Now: clk.Now, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	_, c := serveAnthropic(t, s)

	long := strings.Repeat("Refund policy clause. ", 700) // ~15 KB: ~3,850 tokens, over Sonnet's 1,024, under Haiku 4.5's 4,096
	const sonnet, haiku = "claude-sonnet-4-5", "claude-haiku-4-5"
	first := runBatch(t, s, c,
		batchReq{id: "write", model: sonnet, system: long, cache: true, maxTokens: 200},
		batchReq{id: "read", model: sonnet, system: long, cache: true, maxTokens: 200},
		batchReq{id: "unmarked", model: sonnet, system: long, maxTokens: 200},
		batchReq{id: "tooShortForHaiku", model: haiku, system: long, cache: true, maxTokens: 200},
		batchReq{id: "shortSystem", model: sonnet, system: "Be brief.", cache: true, maxTokens: 200},
		batchReq{id: "overMax", model: haiku, maxTokens: 64001},
		batchReq{id: "atMax", model: haiku, maxTokens: 64000},
		batchReq{id: "unknownModel", model: "claude-next-20990101", maxTokens: 999_999},
		batchReq{id: "cut", model: sonnet, maxTokens: 5},
	)
	usage := func(res map[string]anthropic.MessageBatchResultUnion, id string) anthropic.Usage {
		t.Helper()
		r, ok := res[id]
		if !ok || r.Type != "succeeded" {
			t.Fatalf("%s: result %q, want succeeded (%s)", id, r.Type, r.Error.Error.Message)
		}
		if !strings.Contains(r.Message.Content[0].Text, "SIMULATED") {
			t.Errorf("%s: answer does not say it is simulated", id)
		}
		return r.Message.Usage
	}
	w, rd := usage(first, "write"), usage(first, "read")
	if w.CacheCreationInputTokens < 1024 || w.CacheReadInputTokens != 0 {
		t.Errorf("first request with the prefix: %+v, want a cache write", w)
	}
	if rd.CacheReadInputTokens != w.CacheCreationInputTokens || rd.CacheCreationInputTokens != 0 {
		t.Errorf("second request: read %d write %d, want a read of %d", rd.CacheReadInputTokens, rd.CacheCreationInputTokens, w.CacheCreationInputTokens)
	}
	if rd.InputTokens >= w.CacheCreationInputTokens || rd.InputTokens <= 0 || rd.InputTokens != w.InputTokens {
		t.Errorf("input_tokens %d / %d must exclude the %d cached tokens", w.InputTokens, rd.InputTokens, w.CacheCreationInputTokens)
	}
	for _, id := range []string{"unmarked", "tooShortForHaiku", "shortSystem"} {
		u := usage(first, id)
		if u.CacheCreationInputTokens != 0 || u.CacheReadInputTokens != 0 {
			t.Errorf("%s: %+v, want no caching", id, u)
		}
		if id != "shortSystem" && u.InputTokens < w.CacheCreationInputTokens {
			t.Errorf("%s: uncached input_tokens %d should hold the whole prompt", id, u.InputTokens)
		}
	}
	if r := first["overMax"]; r.Type != "errored" || r.Error.Error.Type != "invalid_request_error" ||
		!strings.Contains(r.Error.Error.Message, "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-haiku-4-5") {
		t.Errorf("overMax: %s %s %q", r.Type, r.Error.Error.Type, r.Error.Error.Message)
	}
	usage(first, "atMax")
	usage(first, "unknownModel")
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "claude-next-20990101") {
		t.Errorf("no permissive warning for the unknown model:\n%s", logs.String())
	}
	if r := first["cut"]; r.Message.StopReason != "max_tokens" || r.Message.Usage.OutputTokens != 5 {
		t.Errorf("cut: stop %s output %d, want max_tokens/5", r.Message.StopReason, r.Message.Usage.OutputTokens)
	}

	// The cache outlives the batch for 5 minutes after its last use.
	clk.add(4 * time.Minute)
	if u := usage(runBatch(t, s, c, batchReq{id: "later", model: sonnet, system: long, cache: true, maxTokens: 200}), "later"); u.CacheReadInputTokens == 0 {
		t.Errorf("4 minutes later: %+v, want a read", u)
	}
	clk.add(6 * time.Minute)
	if u := usage(runBatch(t, s, c, batchReq{id: "expired", model: sonnet, system: long, cache: true, maxTokens: 200}), "expired"); u.CacheCreationInputTokens == 0 || u.CacheReadInputTokens != 0 {
		t.Errorf("6 minutes after the last use: %+v, want a new write", u)
	}
}

// The 300K-output beta lifts max_tokens above the normal maximum for the
// models that have a batch maximum, only on a batch created with its header.
func TestAnthropicBatchOutput300kBeta(t *testing.T) {
	s := &simanthropic.AnthropicSim{APIKey: "k", Log: slog.New(slog.DiscardHandler)}
	_, c := serveAnthropic(t, s)
	reqs := []batchReq{
		{id: "haiku55", model: "claude-haiku-5-5", maxTokens: 200_000},
		{id: "opus46", model: "claude-opus-4-6", maxTokens: 300_000},
		{id: "opus46over", model: "claude-opus-4-6", maxTokens: 300_001},
		{id: "sonnet5", model: "claude-sonnet-5", maxTokens: 200_000},
		{id: "fable51", model: "claude-fable-5-1", maxTokens: 200_000}, // no batch maximum
	}
	tests := []struct {
		name string
		opts []option.RequestOption
		ok   map[string]bool
	}{
		{"without the beta", nil, map[string]bool{}},
		{"with the beta", []option.RequestOption{option.WithHeader("anthropic-beta", "output-300k-2026-03-24")},
			map[string]bool{"haiku55": true, "opus46": true, "sonnet5": true}},
		{"with the beta among others", []option.RequestOption{option.WithHeader("anthropic-beta", "files-api-2025-04-14, output-300k-2026-03-24")},
			map[string]bool{"haiku55": true, "opus46": true, "sonnet5": true}},
		{"with another beta only", []option.RequestOption{option.WithHeader("anthropic-beta", "output-128k-2025-02-19")}, map[string]bool{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runBatchWith(t, s, c, tc.opts, reqs...)
			for _, r := range reqs {
				got := res[r.id]
				switch {
				case tc.ok[r.id] && got.Type != "succeeded":
					t.Errorf("%s (max_tokens %d): %s %q, want succeeded", r.id, r.maxTokens, got.Type, got.Error.Error.Message)
				case !tc.ok[r.id] && (got.Type != "errored" || !strings.Contains(got.Error.Error.Message, "which is the maximum allowed number of output tokens for "+r.model)):
					t.Errorf("%s (max_tokens %d): %s %q, want errored over the maximum", r.id, r.maxTokens, got.Type, got.Error.Error.Message)
				}
			}
		})
	}
}
