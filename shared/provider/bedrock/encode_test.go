package bedrock_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const (
	haiku    = "anthropic.claude-3-5-haiku-20241022-v1:0"
	profile  = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
	nova     = "amazon.nova-lite-v1:0"
	mistral7 = "mistral.mistral-7b-instruct-v0:2"
	llama    = "meta.llama3-3-70b-instruct-v1:0"
)

func ptr[T any](v T) *T { return &v }

func TestEncodeRecordGolden(t *testing.T) {
	tests := []struct {
		name  string
		model string
		in    job.Input
		p     job.Params
	}{
		{
			name: "claude_prompt", model: haiku,
			in: job.Input{ID: "r00001", Prompt: "Summarise <doc>Q3 & Q4 \"sales\"</doc> in one line."},
			p:  job.Params{MaxTokens: 512},
		},
		{
			name: "claude_messages_system", model: haiku,
			in: job.Input{ID: "r00002", System: "Answer as a pirate.", Messages: json.RawMessage(`[
				{"role": "user", "content": "Hi"},
				{"role": "assistant", "content": "Ahoy"},
				{"role": "user", "content": [{"type": "text", "text": "Where is the treasure?"}]}
			]`)},
			p: job.Params{System: "You are terse."},
		},
		{
			name: "claude_job_system_default_max_tokens", model: haiku,
			in: job.Input{ID: "r00003", Prompt: "Hello"},
			p:  job.Params{System: "You are terse."},
		},
		{
			name: "claude_profile_temperature", model: profile,
			in: job.Input{ID: "r00004", Prompt: "Pick a colour."},
			p:  job.Params{MaxTokens: 100, Temperature: ptr(0.2)},
		},
		{
			name: "claude_temperature_zero", model: haiku,
			in: job.Input{ID: "r00005", Prompt: "Pick a number."},
			p:  job.Params{MaxTokens: 16, Temperature: ptr(0.0)},
		},
		{
			name: "passthrough_nova", model: nova,
			in: job.Input{ID: "n-1", ModelInput: json.RawMessage(`{
				"schemaVersion": "messages-v1",
				"messages": [{"role": "user", "content": [{"text": "Hi <there>"}]}],
				"inferenceConfig": {"maxTokens": 64}
			}`)},
			p: job.Params{MaxTokens: 999, System: "ignored for passthrough"},
		},
		{
			// Prompts need no family body: every text model takes the Converse request.
			name: "converse_nova_prompt", model: nova,
			in: job.Input{ID: "n-2", Prompt: "Describe item 7"},
			p:  job.Params{MaxTokens: 200, System: "Be brief."},
		},
		{
			name: "converse_llama_prompt", model: llama,
			in: job.Input{ID: "l-1", Prompt: "Describe item 8"},
			p:  job.Params{MaxTokens: 300},
		},
		{
			name: "converse_gpt_oss_unknown_to_catalog", model: "openai.gpt-oss-120b-1:0",
			in: job.Input{ID: "g-1", Prompt: "Describe item 9"},
			p:  job.Params{MaxTokens: 300, System: "Answer in French."},
		},
		{
			// Mistral 7B takes no system prompt: it goes first in the first user turn.
			name: "converse_mistral7b_system_folded", model: mistral7,
			in: job.Input{ID: "m-1", Messages: json.RawMessage(`[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"Tell a joke"}]`)},
			p:  job.Params{MaxTokens: 100, System: "You are a comedian."},
		},
		{
			name: "converse_model_input_passthrough", model: nova,
			in: job.Input{ID: "c-1", ModelInput: json.RawMessage(`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],"inferenceConfig":{"maxTokens":9}}`)},
		},
		{
			name: "passthrough_claude", model: haiku,
			in: job.Input{ID: "raw_1", ModelInput: json.RawMessage(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"top_k":3,"messages":[{"role":"user","content":"x"}]}`)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bedrock.EncodeRecord(tc.model, tc.in, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("not JSON: %s", got)
			}
			for _, c := range got {
				if c == '\n' {
					t.Fatalf("a JSONL line must not contain a newline: %s", got)
				}
			}
			path := filepath.Join("testdata", "encode_"+tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if string(want) != string(got)+"\n" {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestEncodeRecordBadInput(t *testing.T) {
	msgs := func(s string) job.Input { return job.Input{ID: "r1", Messages: json.RawMessage(s)} }
	tests := []struct {
		name      string
		model     string
		in        job.Input
		p         job.Params
		wantField string
	}{
		{"no id", haiku, job.Input{Prompt: "x"}, job.Params{}, "records[3].id"},
		{"id with a space", haiku, job.Input{ID: "r 1", Prompt: "x"}, job.Params{}, "records[3].id"},
		{"id too long", haiku, job.Input{ID: string(make([]byte, 65)), Prompt: "x"}, job.Params{}, "records[3].id"},
		{"nothing to send", haiku, job.Input{ID: "r1"}, job.Params{}, "records[3].prompt"},
		{"prompt and messages", haiku, job.Input{ID: "r1", Prompt: "x", Messages: json.RawMessage(`[]`)}, job.Params{}, "records[3].prompt"},
		{"prompt and model_input", haiku, job.Input{ID: "r1", Prompt: "x", ModelInput: json.RawMessage(`{}`)}, job.Params{}, "records[3].prompt"},
		{"messages not an array", haiku, msgs(`{"role":"user","content":"x"}`), job.Params{}, "records[3].messages"},
		{"messages truncated", haiku, msgs(`[{"role":"user",`), job.Params{}, "records[3].messages"},
		{"messages empty", haiku, msgs(`[]`), job.Params{}, "records[3].messages"},
		{"message not an object", haiku, msgs(`["hi"]`), job.Params{}, "records[3].messages[0]"},
		{"role wrong type", haiku, msgs(`[{"role":1,"content":"x"}]`), job.Params{}, "records[3].messages"},
		{"role unknown", haiku, msgs(`[{"role":"system","content":"x"}]`), job.Params{}, "records[3].messages[0].role"},
		{"first role assistant", haiku, msgs(`[{"role":"assistant","content":"x"}]`), job.Params{}, "records[3].messages[0].role"},
		{"content missing", haiku, msgs(`[{"role":"user","content":"x"},{"role":"assistant"}]`), job.Params{}, "records[3].messages[1].content"},
		{"content empty", haiku, msgs(`[{"role":"user","content":""}]`), job.Params{}, "records[3].messages[0].content[0].text"},
		{"roles not alternating", haiku, msgs(`[{"role":"user","content":"x"},{"role":"user","content":"y"}]`), job.Params{}, "records[3].messages[1].role"},
		{"tool block", haiku, msgs(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]`), job.Params{}, "records[3].messages[0].content[0]"},
		{"toolConfig in a Converse model_input", nova, job.Input{ID: "r1", ModelInput: json.RawMessage(`{"messages":[{"role":"user","content":[{"text":"x"}]}],"toolConfig":{"tools":[]}}`)}, job.Params{}, "records[3].model_input.toolConfig"},
		{"Converse model_input without messages", nova, job.Input{ID: "r1", ModelInput: json.RawMessage(`{"inferenceConfig":{"maxTokens":9}}`)}, job.Params{}, "records[3].model_input"},
		{"content a number", haiku, msgs(`[{"role":"user","content":7}]`), job.Params{}, "records[3].messages[0].content"},
		{"content empty array", haiku, msgs(`[{"role":"user","content":[]}]`), job.Params{}, "records[3].messages[0].content"},
		{"model_input an array", nova, job.Input{ID: "r1", ModelInput: json.RawMessage(`[1]`)}, job.Params{}, "records[3].model_input"},
		{"model_input truncated", nova, job.Input{ID: "r1", ModelInput: json.RawMessage(`{"a":`)}, job.Params{}, "records[3].model_input"},
		{"system with model_input", haiku, job.Input{ID: "r1", System: "s", ModelInput: json.RawMessage(`{}`)}, job.Params{}, "records[3].system"},
		{"temperature above 1", haiku, job.Input{ID: "r1", Prompt: "x"}, job.Params{Temperature: ptr(1.5)}, "temperature"},
		{"negative temperature", haiku, job.Input{ID: "r1", Prompt: "x"}, job.Params{Temperature: ptr(-0.1)}, "temperature"},
		{"negative max tokens", haiku, job.Input{ID: "r1", Prompt: "x"}, job.Params{MaxTokens: -1}, "maxTokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bedrock.EncodeRecordAt(3, tc.model, tc.in, tc.p)
			var fe *job.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %s, %v; want a *job.FieldError", got, err)
			}
			if fe.Field != tc.wantField || fe.Reason == "" {
				t.Errorf("field %q (%s), want %q", fe.Field, fe.Reason, tc.wantField)
			}
		})
	}
}

func TestEncodeRecordFieldWithoutIndex(t *testing.T) {
	_, err := bedrock.EncodeRecord(haiku, job.Input{ID: "r1", Messages: json.RawMessage(`[]`)}, job.Params{})
	var fe *job.FieldError
	if !errors.As(err, &fe) || fe.Field != "messages" {
		t.Errorf("err = %v, want a FieldError on messages", err)
	}
}

// BenchmarkEncodeRecordPrompt encodes a prompt record of a Claude job with a
// job-level system prompt, the common submit line.
func BenchmarkEncodeRecordPrompt(b *testing.B) {
	in := job.Input{ID: "r00123", Prompt: "Classify support ticket 123 into billing, bug or question: \"my invoice <#42> is wrong & late\"."}
	p := job.Params{MaxTokens: 200, System: "You are a support triage assistant. Answer with one word."}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bedrock.EncodeRecordAt(123, haiku, in, p); err != nil {
			b.Fatal(err)
		}
	}
}
