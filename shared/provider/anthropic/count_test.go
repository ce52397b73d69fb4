package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
)

// CountTokens sends each kind of record to count_tokens through the SDK
// (the fields count_tokens refuses, such as max_tokens, left out), and its
// count is what the same record's batch request is billed.
func TestCountTokensAgainstSimulator(t *testing.T) {
	s := &simanthropic.AnthropicSim{APIKey: "k"}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := anthropic.New(option.WithAPIKey("k"), option.WithBaseURL(url), option.WithMaxRetries(0))
	ctx := context.Background()
	const model = "claude-haiku-4-5"
	long := strings.Repeat("Answer as a careful archivist would. ", 20)
	cases := []struct {
		name string
		in   job.Input
		p    job.Params
	}{
		{"prompt", job.Input{ID: "prompt", Prompt: "What is the capital of France?"}, job.Params{MaxTokens: 50}},
		{"job system prompt, cached", job.Input{ID: "jobsystem", Prompt: "Summarise the charter."}, job.Params{MaxTokens: 50, System: long}},
		{"record system prompt", job.Input{ID: "recsystem", Prompt: "q", System: "Be brief."}, job.Params{MaxTokens: 50}},
		{"conversation", job.Input{ID: "conv", Messages: json.RawMessage(`[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello, how can I help?"},{"role":"user","content":[{"type":"text","text":"List three rivers."}]}]`)}, job.Params{MaxTokens: 50}},
		{"model_input with tools and stop_sequences", job.Input{ID: "native", ModelInput: json.RawMessage(`{"max_tokens":40,"stop_sequences":["END"],"tools":[{"name":"lookup","description":"Look a word up","input_schema":{"type":"object","properties":{"word":{"type":"string"}}}}],"tool_choice":{"type":"auto"},"messages":[{"role":"user","content":"Define serendipity"}]}`)}, job.Params{MaxTokens: 50}},
	}
	counts := map[string]int64{}
	var lines [][]byte
	for i, tc := range cases {
		n, err := c.CountTokens(ctx, model, tc.in, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		counts[tc.in.ID] = n
		line, err := wire.EncodeRecordAt(i, model, tc.in, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	b, err := c.Create(ctx, bytes.NewReader([]byte(`{"requests":[`+string(bytes.Join(lines, []byte(",")))+`]}`)))
	if err != nil {
		t.Fatal(err)
	}
	s.Step()
	var out bytes.Buffer
	if _, err := c.Results(ctx, b.ID, &out); err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var r struct {
			CustomID string `json:"custom_id"`
			Result   struct {
				Type    string `json:"type"`
				Message struct {
					Usage struct {
						Input      int64 `json:"input_tokens"`
						CacheWrite int64 `json:"cache_creation_input_tokens"`
						CacheRead  int64 `json:"cache_read_input_tokens"`
					} `json:"usage"`
				} `json:"message"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &r); err != nil || r.Result.Type != "succeeded" {
			t.Fatalf("result %s: %v", line, err)
		}
		u := r.Result.Message.Usage
		if billed := u.Input + u.CacheWrite + u.CacheRead; billed != counts[r.CustomID] {
			t.Errorf("%s: counted %d, billed %d", r.CustomID, counts[r.CustomID], billed)
		}
	}

	t.Run("errors", func(t *testing.T) {
		if _, err := c.CountTokens(ctx, model, job.Input{ID: "x", Messages: json.RawMessage(`[]`)}, job.Params{}); err == nil || !strings.Contains(err.Error(), "records[id=x].messages") {
			t.Errorf("empty messages: %v, want a field error before any call", err)
		}
		s3 := job.Input{ID: "img", Messages: json.RawMessage(`[{"role":"user","content":[{"type":"image","source":{"type":"s3","uri":"s3://b/uploads/u/a.png"}},{"type":"text","text":"What is this?"}]}]`)}
		if _, err := c.CountTokens(ctx, model, s3, job.Params{}); err == nil || !strings.Contains(err.Error(), "s3:// images or documents") {
			t.Errorf("s3 source: %v, want an error saying it is inlined only at submit", err)
		}
		if _, err := c.CountTokens(ctx, "claude-opus-4-1", job.Input{ID: "x", Prompt: "q"}, job.Params{}); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
			t.Errorf("retired model: %v, want the API's 404", err)
		}
	})
}
