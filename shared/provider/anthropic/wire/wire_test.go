package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func temp(v float64) *float64 { return &v }

func TestEncodeRecordGolden(t *testing.T) {
	cases := []struct {
		name string
		in   job.Input
		p    job.Params
	}{
		{"prompt with cached job system", job.Input{ID: "a1", Prompt: "Summarise <doc> & more"}, job.Params{System: "You are terse.", MaxTokens: 200}},
		{"record system is not cached", job.Input{ID: "a2", Prompt: "hi", System: "Own system"}, job.Params{System: "Job system"}},
		{"messages", job.Input{ID: "a3", Messages: json.RawMessage(`[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":[{"type":"text","text":"q2"}]}]`)}, job.Params{}},
		{"model_input gets the job model", job.Input{ID: "a4", ModelInput: json.RawMessage(`{"model":"other","messages":[{"role":"user","content":"x"}]}`)}, job.Params{MaxTokens: 50}},
	}
	var got bytes.Buffer
	for i, tc := range cases {
		line, err := wire.EncodeRecordAt(i, "claude-haiku-4-5", tc.in, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !json.Valid(line) {
			t.Fatalf("%s: invalid JSON %s", tc.name, line)
		}
		got.Write(line)
		got.WriteByte('\n')
	}
	golden := filepath.Join("testdata", "encode.golden.jsonl")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("encoded lines differ from %s:\n%s", golden, got.String())
	}
}

func TestEncodeRecordErrors(t *testing.T) {
	cases := []struct {
		name  string
		in    job.Input
		field string
	}{
		{"id too long", job.Input{ID: strings.Repeat("x", 65), Prompt: "p"}, "records[3].id"},
		{"id with a dot", job.Input{ID: "a.b", Prompt: "p"}, "records[3].id"},
		{"nothing to send", job.Input{ID: "a"}, "records[3].prompt"},
		{"empty messages", job.Input{ID: "a", Messages: json.RawMessage(`[]`)}, "records[3].messages"},
		{"bad role", job.Input{ID: "a", Messages: json.RawMessage(`[{"role":"system","content":"x"}]`)}, "records[3].messages[0].role"},
		{"empty content", job.Input{ID: "a", Messages: json.RawMessage(`[{"role":"user","content":""}]`)}, "records[3].messages[0].content"},
		{"model_input not an object", job.Input{ID: "a", ModelInput: json.RawMessage(`[1]`)}, "records[3].model_input"},
		{"model_input without messages", job.Input{ID: "a", ModelInput: json.RawMessage(`{"max_tokens":5}`)}, "records[3].model_input.messages"},
		// Refused by anthropic-version 2026-10-21, which this suite sends.
		{"model_input top_p", job.Input{ID: "a", ModelInput: json.RawMessage(`{"top_p":0.9,"messages":[{"role":"user","content":"x"}]}`)}, "records[3].model_input.top_p"},
		{"model_input temperature at its default", job.Input{ID: "a", ModelInput: json.RawMessage(`{"temperature":1.0,"messages":[{"role":"user","content":"x"}]}`)}, "records[3].model_input.temperature"},
		{"assistant document", job.Input{ID: "a", Messages: json.RawMessage(`[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]},{"role":"user","content":"go on"}]`)}, "records[3].messages[1].content[0]"},
		{"user text with citations", job.Input{ID: "a", Messages: json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"q","citations":[{"type":"char_location","cited_text":"x"}]}]}]`)}, "records[3].messages[0].content[0].citations"},
		{"model_input assistant document", job.Input{ID: "a", ModelInput: json.RawMessage(`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]}]}`)}, "records[3].model_input.messages[1].content[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wire.EncodeRecordAt(3, "claude-haiku-4-5", tc.in, job.Params{})
			var fe *job.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("err = %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
}

// TestAPIVersionRules: under the anthropic-version this suite sends, a job
// temperature is refused even at its default; empty citations and user
// documents pass; 2023-06-01 refuses none of it.
func TestAPIVersionRules(t *testing.T) {
	if wire.APIVersion != "2026-10-21" {
		t.Fatalf("APIVersion = %s; the SDK in go.mod sends 2026-10-21", wire.APIVersion)
	}
	_, err := wire.EncodeRecordAt(0, "claude-haiku-4-5", job.Input{ID: "a", Prompt: "p"}, job.Params{Temperature: temp(1)})
	var fe *job.FieldError
	if !errors.As(err, &fe) || fe.Field != "temperature" || !strings.Contains(err.Error(), "2026-10-21") || !strings.Contains(err.Error(), "claude-haiku-4-5") {
		t.Errorf("temperature 1.0: %v; want a refusal on temperature naming the version and the model", err)
	}
	if err := wire.CheckParams("claude-haiku-4-5", job.Params{}); err != nil {
		t.Errorf("no temperature: %v", err)
	}
	for _, in := range []job.Input{
		{ID: "a", Messages: json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"q","citations":[]}]}]`)},
		{ID: "b", Messages: json.RawMessage(`[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}},{"type":"text","text":"sum up"}]}]`)},
		{ID: "c", ModelInput: json.RawMessage(`{"messages":[{"role":"user","content":"x"}],"max_tokens":5}`)},
	} {
		if _, err := wire.EncodeRecordAt(0, "claude-haiku-4-5", in, job.Params{}); err != nil {
			t.Errorf("record %s: %v", in.ID, err)
		}
	}
	old := wire.Rules("2023-06-01")
	if len(old.RefusesSampling) != 0 || old.RefusesAssistantDocument || old.RefusesUserCitations {
		t.Errorf("2023-06-01 rules = %+v; that version allows all three", old)
	}
}

func TestParseResultLine(t *testing.T) {
	cases := []struct {
		name    string
		line    string
		want    job.Record
		wantErr string
	}{
		{"succeeded", `{"custom_id":"a","result":{"type":"succeeded","message":{"content":[{"type":"text","text":"he"},{"type":"tool_use"},{"type":"text","text":"llo"}],"stop_reason":"max_tokens","usage":{"input_tokens":10,"output_tokens":3,"cache_creation_input_tokens":5,"cache_read_input_tokens":2}}}}`,
			job.Record{ID: "a", Status: job.RecordSucceeded, Output: "hello", StopReason: "max_tokens", InputTokens: 10, OutputTokens: 3, CacheWriteTokens: 5, CacheReadTokens: 2}, ""},
		{"errored keeps type and message", `{"custom_id":"b","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}}}`,
			job.Record{ID: "b", Status: job.RecordFailed, ErrorCode: "invalid_request_error", ErrorMessage: "max_tokens: too big"}, ""},
		{"canceled", `{"custom_id":"c","result":{"type":"canceled"}}`,
			job.Record{ID: "c", Status: job.RecordFailed, ErrorCode: "canceled", ErrorMessage: "the batch was cancelled before this request ran"}, ""},
		{"expired", `{"custom_id":"d","result":{"type":"expired"}}`,
			job.Record{ID: "d", Status: job.RecordFailed, ErrorCode: "expired", ErrorMessage: "the batch reached its 24-hour limit before this request ran"}, ""},
		{"truncated", `{"custom_id":"e","result":{"type":"succ`, job.Record{}, "not a Message Batch result"},
		{"no custom_id", `{"result":{"type":"canceled"}}`, job.Record{}, "no custom_id"},
		{"unknown type", `{"custom_id":"f","result":{"type":"paused"}}`, job.Record{}, `unknown result type "paused"`},
		{"succeeded without message", `{"custom_id":"g","result":{"type":"succeeded"}}`, job.Record{}, "without a message"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := wire.ParseResultLine([]byte(tc.line))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}
