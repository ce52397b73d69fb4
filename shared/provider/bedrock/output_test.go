package bedrock_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

const claudeInput = `{"anthropic_version":"bedrock-2023-05-31","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`

func TestParseOutputLine(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    job.Record
		wantErr bool
	}{
		{
			name: "claude success",
			line: `{"recordId":"r1","modelInput":` + claudeInput + `,"modelOutput":{"id":"msg_bdrk_1","type":"message","role":"assistant","model":"claude-3-5-haiku-20241022","content":[{"type":"text","text":"Hello, "},{"type":"tool_use","id":"t1","name":"f","input":{"a":1}},{"type":"text","text":"world"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":7}}}`,
			want: job.Record{ID: "r1", Status: job.RecordSucceeded, Output: "Hello, world", StopReason: "end_turn", InputTokens: 12, OutputTokens: 7},
		},
		{
			name: "claude success, keys in another order and spaces",
			line: ` { "modelOutput" : { "usage" : { "output_tokens" : 3 , "input_tokens" : 4 } , "stop_reason" : "max_tokens" , "content" : [ { "text" : "abc" , "type" : "text" } ] , "type" : "message" } , "recordId" : "r2" , "modelInput" : { "x" : [ 1 , 2 ] } } `,
			want: job.Record{ID: "r2", Status: job.RecordSucceeded, Output: "abc", StopReason: "max_tokens", InputTokens: 4, OutputTokens: 3},
		},
		{
			name: "claude success with empty content",
			line: `{"recordId":"r3","modelOutput":{"type":"message","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":0}}}`,
			want: job.Record{ID: "r3", Status: job.RecordSucceeded, StopReason: "end_turn", InputTokens: 1},
		},
		{
			name: "numeric errorCode",
			line: `{"recordId":"r4","modelInput":` + claudeInput + `,"error":{"errorCode":400,"errorMessage":"Malformed input request"}}`,
			want: job.Record{ID: "r4", Status: job.RecordFailed, ErrorCode: "400", ErrorMessage: "Malformed input request"},
		},
		{
			name: "string errorCode",
			line: `{"recordId":"r5","modelInput":` + claudeInput + `,"error":{"errorCode":"ThrottlingException","errorMessage":"Too many requests"}}`,
			want: job.Record{ID: "r5", Status: job.RecordFailed, ErrorCode: "ThrottlingException", ErrorMessage: "Too many requests"},
		},
		{
			name: "claude with prompt-cache tokens kept apart",
			line: `{"recordId":"c1","modelOutput":{"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":5,"cache_creation_input_tokens":1500,"cache_read_input_tokens":null}}}`,
			want: job.Record{ID: "c1", Status: job.RecordSucceeded, Output: "ok", StopReason: "end_turn", InputTokens: 20, OutputTokens: 5, CacheWriteTokens: 1500},
		},
		{
			name: "nova (and converse) output",
			line: `{"recordId":"n1","modelInput":{"schemaVersion":"messages-v1"},"modelOutput":{ "output": {"message": {"role": "assistant", "content": [{"text": "hi <b>"},{"text":"!"}]}}, "stopReason": "end_turn", "usage": {"inputTokens": 5, "outputTokens": 2, "cacheReadInputTokens": 7} }}`,
			want: job.Record{ID: "n1", Status: job.RecordSucceeded, Output: "hi <b>!", StopReason: "end_turn", InputTokens: 5, OutputTokens: 2, CacheReadTokens: 7},
		},
		{
			name: "llama output whose content-like key is a string",
			line: `{"recordId":"l1","modelOutput":{"generation":"hello","content":"not claude","prompt_token_count":3,"generation_token_count":9,"stop_reason":"stop"}}`,
			want: job.Record{ID: "l1", Status: job.RecordSucceeded, Output: "hello", StopReason: "stop", InputTokens: 3, OutputTokens: 9},
		},
		{
			name: "mistral output (tokens only in the manifest)",
			line: `{"recordId":"m1","modelOutput":{"outputs":[{"text":"bonjour","stop_reason":"stop"}]}}`,
			want: job.Record{ID: "m1", Status: job.RecordSucceeded, Output: "bonjour", StopReason: "stop"},
		},
		{
			name: "titan text output",
			line: `{"recordId":"t1","modelOutput":{"inputTextTokenCount":4,"results":[{"tokenCount":6,"outputText":"a b c","completionReason":"FINISH"}]}}`,
			want: job.Record{ID: "t1", Status: job.RecordSucceeded, Output: "a b c", StopReason: "FINISH", InputTokens: 4, OutputTokens: 6},
		},
		{
			name: "titan embedding kept as compact JSON with its token count",
			line: `{"recordId":"e1","modelOutput":{ "embedding": [0.1, -0.2], "inputTextTokenCount": 11 }}`,
			want: job.Record{ID: "e1", Status: job.RecordSucceeded, Output: `{"embedding":[0.1,-0.2],"inputTextTokenCount":11}`, InputTokens: 11},
		},
		{
			name: "cohere embedding kept as compact JSON",
			line: `{"recordId":"e2","modelOutput":{"embeddings":[[0.5]],"id":"x","response_type":"embeddings_floats","texts":["hi"]}}`,
			want: job.Record{ID: "e2", Status: job.RecordSucceeded, Output: `{"embeddings":[[0.5]],"id":"x","response_type":"embeddings_floats","texts":["hi"]}`},
		},
		{name: "llama token count of the wrong type", line: `{"recordId":"l2","modelOutput":{"generation":"x","prompt_token_count":"3"}}`, wantErr: true},
		{name: "titan embedding not an array", line: `{"recordId":"e3","modelOutput":{"embedding":"x"}}`, wantErr: true},
		{name: "truncated", line: `{"recordId":"r6","modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tok`, wantErr: true},
		{name: "empty line", line: ``, wantErr: true},
		{name: "not an object", line: `["r7"]`, wantErr: true},
		{name: "missing recordId", line: `{"modelInput":{},"modelOutput":{"type":"message","content":[]}}`, wantErr: true},
		{name: "empty recordId", line: `{"recordId":"","modelOutput":{"type":"message","content":[]}}`, wantErr: true},
		{name: "recordId a number", line: `{"recordId":8,"modelOutput":{"type":"message","content":[]}}`, wantErr: true},
		{name: "modelOutput a string", line: `{"recordId":"r9","modelOutput":"hello"}`, wantErr: true},
		{name: "modelOutput null", line: `{"recordId":"r10","modelOutput":null}`, wantErr: true},
		{name: "neither output nor error", line: `{"recordId":"r11","modelInput":{}}`, wantErr: true},
		{name: "error a string", line: `{"recordId":"r12","error":"boom"}`, wantErr: true},
		{name: "errorCode an object", line: `{"recordId":"r13","error":{"errorCode":{"c":1},"errorMessage":"x"}}`, wantErr: true},
		{name: "claude usage of the wrong type", line: `{"recordId":"r14","modelOutput":{"type":"message","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":"12"}}}`, wantErr: true},
		{name: "claude content of the wrong type", line: `{"recordId":"r15","modelOutput":{"type":"message","content":"x"}}`, wantErr: true},
		{name: "trailing garbage", line: `{"recordId":"r16","modelOutput":{"a":1}} x`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bedrock.ParseOutputLine([]byte(tc.line))
			if tc.wantErr {
				if err == nil || !errors.Is(err, bedrock.ErrBadLine) {
					t.Fatalf("got %+v, %v; want an ErrBadLine", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    bedrock.Manifest
		wantErr bool
	}{
		{
			name: "complete",
			in:   `{"totalRecordCount":150,"processedRecordCount":150,"successRecordCount":148,"errorRecordCount":2,"inputTokenCount":40210,"outputTokenCount":9800}`,
			want: bedrock.Manifest{TotalRecordCount: 150, ProcessedRecordCount: 150, SuccessRecordCount: 148, ErrorRecordCount: 2, InputTokenCount: 40210, OutputTokenCount: 9800},
		},
		{
			name: "no token counts (non-text model)",
			in:   "{\n  \"totalRecordCount\": 100,\n  \"processedRecordCount\": 60,\n  \"successRecordCount\": 60,\n  \"errorRecordCount\": 0\n}\n",
			want: bedrock.Manifest{TotalRecordCount: 100, ProcessedRecordCount: 60, SuccessRecordCount: 60},
		},
		{name: "truncated", in: `{"totalRecordCount":1`, wantErr: true},
		{name: "not an object", in: `null`, wantErr: true},
		{name: "count of the wrong type", in: `{"totalRecordCount":"150"}`, wantErr: true},
		{name: "more processed than total", in: `{"totalRecordCount":1,"processedRecordCount":2}`, wantErr: true},
		{name: "more outcomes than processed", in: `{"totalRecordCount":5,"processedRecordCount":2,"successRecordCount":2,"errorRecordCount":1}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bedrock.ParseManifest(strings.NewReader(tc.in))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestOutputPrefix(t *testing.T) {
	const arn = "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/k7v2q9x4m1pz"
	tests := []struct{ out, want string }{
		{"s3://bucket/output/01jdz3k6r8x9y2w4v5t7q0m1n3", "s3://bucket/output/01jdz3k6r8x9y2w4v5t7q0m1n3/k7v2q9x4m1pz/"},
		{"s3://bucket/output/01jdz3k6r8x9y2w4v5t7q0m1n3/", "s3://bucket/output/01jdz3k6r8x9y2w4v5t7q0m1n3/k7v2q9x4m1pz/"},
		{"s3://bucket", "s3://bucket/k7v2q9x4m1pz/"},
	}
	for _, tc := range tests {
		t.Run(tc.out, func(t *testing.T) {
			if got := bedrock.OutputPrefix(tc.out, arn); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	if got := bedrock.JobID(arn); got != "k7v2q9x4m1pz" {
		t.Errorf("JobID = %s", got)
	}
}

// benchLine is a ~2 KB Claude success line, the common case for ingest.
func benchLine() []byte {
	prompt := strings.Repeat("Summarise the following customer review in one sentence. ", 20)
	answer := strings.Repeat("The customer liked the product but found delivery slow. ", 10)
	return fmt.Appendf(nil, `{"recordId":"r000123","modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tokens":512,"system":"You are terse.","messages":[{"role":"user","content":%q}]},"modelOutput":{"id":"msg_bdrk_01XyZ","type":"message","role":"assistant","model":"claude-3-5-haiku-20241022","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":312,"output_tokens":141}}}`, prompt, answer)
}

func BenchmarkParseOutputLine(b *testing.B) {
	line := benchLine()
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bedrock.ParseOutputLine(line); err != nil {
			b.Fatal(err)
		}
	}
}

// benchConverseLine is benchLine's record in a Converse-type job.
func benchConverseLine() []byte {
	prompt := strings.Repeat("Summarise the following customer review in one sentence. ", 20)
	answer := strings.Repeat("The customer liked the product but found delivery slow. ", 10)
	return fmt.Appendf(nil, `{"recordId":"r000123","modelInput":{"messages":[{"role":"user","content":[{"text":%q}]}],"system":[{"text":"You are terse."}],"inferenceConfig":{"maxTokens":512}},"modelOutput":{"output":{"message":{"role":"assistant","content":[{"text":%q}]}},"stopReason":"end_turn","usage":{"inputTokens":312,"outputTokens":141,"totalTokens":453},"metrics":{"latencyMs":1200}}}`, prompt, answer)
}

func BenchmarkParseConverseLine(b *testing.B) {
	line := benchConverseLine()
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bedrock.ParseConverseLine(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseOutputLineError(b *testing.B) {
	line := fmt.Appendf(nil, `{"recordId":"r000124","modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tokens":512,"messages":[{"role":"user","content":%q}]},"error":{"errorCode":400,"errorMessage":"Malformed input request"}}`,
		strings.Repeat("Summarise the following customer review in one sentence. ", 32))
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bedrock.ParseOutputLine(line); err != nil {
			b.Fatal(err)
		}
	}
}

// Jobs stored before Converse jobs (parts without an invocation type) keep
// reading their native outputs; Converse parts read the Converse response.
// Each file's records are compared with a golden file.
func TestOutputParserByInvocationType(t *testing.T) {
	for _, tc := range []struct{ name, invocation string }{
		{"invokemodel_stored", ""},
		{"converse", bedrock.InvocationConverse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "output_"+tc.name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			parse := bedrock.OutputParser(tc.invocation)
			var recs []job.Record
			for line := range bytes.Lines(in) {
				rec, err := parse(bytes.TrimSpace(line))
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				recs = append(recs, rec)
			}
			got, _ := json.MarshalIndent(recs, "", " ")
			path := filepath.Join("testdata", "output_"+tc.name+".golden.json")
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
				t.Errorf("records differ from %s (run with -update and review):\n%s", path, got)
			}
		})
	}
	// A native Claude line read as Converse is a bad line, not a silent empty answer.
	line := []byte(`{"recordId":"x","modelInput":{},"modelOutput":{"type":"message","content":[{"type":"text","text":"hi"}]}}`)
	if _, err := bedrock.ParseConverseLine(line); !errors.Is(err, bedrock.ErrBadLine) {
		t.Errorf("native output read as Converse: err %v, want ErrBadLine", err)
	}
}
