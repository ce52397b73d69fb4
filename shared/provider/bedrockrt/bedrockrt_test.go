package bedrockrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
	"github.com/mcpbatch/mcpbatch/shared/service/ondemand"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

const haiku = "us.anthropic.claude-3-5-haiku-20241022-v1:0"

func model(t *testing.T, rt *simbedrock.RuntimeSim) *bedrockrt.Model {
	t.Helper()
	url, err := rt.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	c := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(url); o.HTTPClient = sim.HTTPClient() }, bedrockrt.NoSDKRetries)
	return &bedrockrt.Model{Client: c}
}

func TestInvoke(t *testing.T) {
	p := job.Params{System: "Answer in JSON.\ncategories: billing|other", MaxTokens: 200}
	tests := []struct {
		name      string
		in        job.Input
		rt        *simbedrock.RuntimeSim
		wantOut   string
		wantCode  string
		retryable bool
	}{
		{name: "prompt via Converse", in: job.Input{ID: "a", Prompt: "my billing is wrong"}, rt: &simbedrock.RuntimeSim{}, wantOut: `"category":"billing"`},
		{name: "messages via Converse", in: job.Input{ID: "b", Messages: json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"hello"}]}]`)},
			rt: &simbedrock.RuntimeSim{}, wantOut: `"category":"other"`},
		{name: "model_input via InvokeModel", in: job.Input{ID: "c", ModelInput: json.RawMessage(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":50,"messages":[{"role":"user","content":"hi there"}]}`)},
			rt: &simbedrock.RuntimeSim{}, wantOut: "[simulated] reply"},
		{name: "native body without max_tokens fails the record", in: job.Input{ID: "d", ModelInput: json.RawMessage(`{"anthropic_version":"bedrock-2023-05-31","messages":[{"role":"user","content":"x"}]}`)},
			rt: &simbedrock.RuntimeSim{}, wantCode: "ValidationException"},
		{name: "image blocks are refused on demand", in: job.Input{ID: "e", Messages: json.RawMessage(`[{"role":"user","content":[{"type":"image","source":{}}]}]`)},
			rt: &simbedrock.RuntimeSim{}, wantCode: "ValidationException"},
		{name: "Converse model_input via Converse", in: job.Input{ID: "g", ModelInput: json.RawMessage(`{"messages":[{"role":"user","content":[{"text":"hello"}]}],"system":[{"text":"Answer in JSON.\ncategories: billing|other"}],"inferenceConfig":{"maxTokens":64}}`)},
			rt: &simbedrock.RuntimeSim{}, wantOut: `"category":"other"`},
		{name: "Converse model_input with a member on-demand runs do not carry", in: job.Input{ID: "h", ModelInput: json.RawMessage(`{"messages":[{"role":"user","content":[{"text":"x"}]}],"guardrailConfig":{}}`)},
			rt: &simbedrock.RuntimeSim{}, wantCode: "ValidationException"},
		{name: "Mistral 7B's system prompt folded into the first turn", in: job.Input{ID: "i", Prompt: "my billing is wrong"}, rt: &simbedrock.RuntimeSim{}, wantOut: "[simulated]"},
		{name: "throttling is retryable", in: job.Input{ID: "f", Prompt: "x"}, rt: &simbedrock.RuntimeSim{ThrottleRate: 1}, retryable: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := model(t, tc.rt)
			id := haiku
			if strings.HasPrefix(tc.name, "Mistral 7B") {
				id = "mistral.mistral-7b-instruct-v0:2" // the simulator refuses its system prompt
			}
			res, err := m.Invoke(context.Background(), id, tc.in, p)
			var ce *ondemand.CallError
			switch {
			case tc.retryable:
				if !errors.Is(err, ondemand.ErrRetryable) {
					t.Fatalf("got %v, want a retryable error", err)
				}
			case tc.wantCode != "":
				if !errors.As(err, &ce) || ce.Code != tc.wantCode {
					t.Fatalf("got %v, want a %s call error", err, tc.wantCode)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(res.Output, tc.wantOut) || res.InputTokens == 0 || res.OutputTokens == 0 || res.StopReason == "" {
					t.Fatalf("result %+v, want output containing %q", res, tc.wantOut)
				}
			}
		})
	}
}

// The job-level system prompt carries a cachePoint: the first call writes the
// cache, the next reads it. A per-record system prompt is not cached.
func TestPromptCache(t *testing.T) {
	m := model(t, &simbedrock.RuntimeSim{})
	p := job.Params{System: strings.Repeat("You are a careful assistant. ", 20), MaxTokens: 100}
	first, err := m.Invoke(context.Background(), haiku, job.Input{ID: "a", Prompt: "one"}, p)
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.Invoke(context.Background(), haiku, job.Input{ID: "b", Prompt: "two"}, p)
	if err != nil {
		t.Fatal(err)
	}
	own, err := m.Invoke(context.Background(), haiku, job.Input{ID: "c", Prompt: "three", System: "own system"}, p)
	if err != nil {
		t.Fatal(err)
	}
	if first.CacheWriteTokens == 0 || first.CacheReadTokens != 0 || second.CacheReadTokens != first.CacheWriteTokens || own.CacheReadTokens+own.CacheWriteTokens != 0 {
		t.Fatalf("cache tokens: first %+v, second %+v, own %+v", first, second, own)
	}
	// A model without prompt caching gets no cachePoint.
	if bedrockrt.SupportsPromptCache("anthropic.claude-3-5-sonnet-20241022-v2:0") || !bedrockrt.SupportsPromptCache(haiku) {
		t.Fatal("SupportsPromptCache table is wrong")
	}
}

// The submit check that refuses temperature for these models bypassed, the
// simulator (its own table) refuses it the way Bedrock does: a record with
// temperature to Sonnet 5 fails with a ValidationException naming it; one
// without it runs.
func TestSamplingRefusedBySimulator(t *testing.T) {
	m := model(t, &simbedrock.RuntimeSim{})
	temp := 0.3
	for _, tc := range []struct {
		name, model string
		p           job.Params
		want        string // "" runs
	}{
		{"Sonnet 5 with temperature", "global.anthropic.claude-sonnet-5", job.Params{MaxTokens: 50, Temperature: &temp}, "`temperature` is deprecated for this model"},
		{"Sonnet 5 without it", "global.anthropic.claude-sonnet-5", job.Params{MaxTokens: 50}, ""},
		{"Opus 4.7 with temperature", "us.anthropic.claude-opus-4-7", job.Params{MaxTokens: 50, Temperature: &temp}, "`temperature` is deprecated for this model"},
		{"Sonnet 4.6 with temperature", "global.anthropic.claude-sonnet-4-6", job.Params{MaxTokens: 50, Temperature: &temp}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Invoke(context.Background(), tc.model, job.Input{ID: "a", Prompt: "hi"}, tc.p)
			var ce *ondemand.CallError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case !errors.As(err, &ce) || ce.Code != "ValidationException" || !strings.Contains(ce.Message, tc.want):
				t.Fatalf("got %v, want a ValidationException containing %q", err, tc.want)
			}
		})
	}
}
