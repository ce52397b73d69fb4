package bedrock_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrock/types"

	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

// records makes n input lines r00000... with the modelInput input(i).
func records(n int, input func(i int) string) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"recordId":"r%05d","modelInput":%s}`+"\n", i, input(i))
	}
	return b.Bytes()
}

// createTyped submits a job over inputURI with a modelInvocationType.
func (e *env) createTyped(t *testing.T, name, model string, typ types.ModelInvocationType) string {
	t.Helper()
	out, err := e.client.CreateModelInvocationJob(context.Background(), &sdk.CreateModelInvocationJobInput{
		JobName: aws.String(name), ClientRequestToken: aws.String(name), ModelId: aws.String(model), RoleArn: aws.String(roleARN),
		InputDataConfig: &types.ModelInvocationJobInputDataConfigMemberS3InputDataConfig{
			Value: types.ModelInvocationJobS3InputDataConfig{S3Uri: aws.String(inputURI)}},
		OutputDataConfig: &types.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig{
			Value: types.ModelInvocationJobS3OutputDataConfig{S3Uri: aws.String(outURI)}},
		ModelInvocationType: typ,
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.JobArn)
}

// rawLines reads a job's output lines as generic JSON.
func (e *env) rawLines(t *testing.T, arn string) []map[string]any {
	t.Helper()
	raw, ok := e.blobs.Bytes(outURI + "/" + jobID(arn) + "/records.jsonl.out")
	if !ok {
		t.Fatal("no output file")
	}
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("output line is not JSON: %v", err)
		}
		out = append(out, m)
	}
	return out
}

func TestBatchFamilies(t *testing.T) {
	claudeIn := func(maxTokens int) func(int) string {
		return func(i int) string {
			return fmt.Sprintf(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":%d,"messages":[{"role":"user","content":"Question %d"}]}`, maxTokens, i)
		}
	}
	text := func(v any) string { return fmt.Sprint(v) }
	tests := []struct {
		name, model string
		typ         types.ModelInvocationType
		input       func(i int) string
		// usage checks one modelOutput and returns its tokens; ok false when the
		// body carries no token counts (Mistral).
		usage      func(t *testing.T, mo any) (in, out int64, ok bool)
		failEvery  int // every failEvery-th record (i%failEvery==0) is refused by the model
		failInput  func(i int) string
		wantFailed string
	}{
		{name: "Claude", model: claude, input: claudeIn(256), usage: func(t *testing.T, mo any) (int64, int64, bool) {
			if get(mo, "type") != "message" || !strings.HasPrefix(text(get(mo, "content", 0, "text")), "[simulated]") {
				t.Errorf("modelOutput %v", mo)
			}
			return num(get(mo, "usage", "input_tokens")), num(get(mo, "usage", "output_tokens")), true
		}},
		{name: "Claude record over max_tokens fails alone", model: "us.anthropic.claude-3-5-haiku-20241022-v1:0", input: claudeIn(256),
			failEvery: 10, failInput: claudeIn(9000), wantFailed: "#/max_tokens: 9000 is not less or equal to 8192",
			usage: func(t *testing.T, mo any) (int64, int64, bool) {
				return num(get(mo, "usage", "input_tokens")), num(get(mo, "usage", "output_tokens")), true
			}},
		{name: "Nova", model: "us.amazon.nova-lite-v1:0", input: func(i int) string {
			return fmt.Sprintf(`{"messages":[{"role":"user","content":[{"text":"Question %d"}]}],"inferenceConfig":{"maxTokens":200}}`, i)
		}, usage: func(t *testing.T, mo any) (int64, int64, bool) {
			if get(mo, "stopReason") == nil || !strings.HasPrefix(text(get(mo, "output", "message", "content", 0, "text")), "[simulated]") {
				t.Errorf("modelOutput %v", mo)
			}
			return num(get(mo, "usage", "inputTokens")), num(get(mo, "usage", "outputTokens")), true
		}},
		{name: "Llama", model: "meta.llama3-1-8b-instruct-v1:0", input: func(i int) string {
			return fmt.Sprintf(`{"prompt":"hello %d","max_gen_len":64}`, i)
		}, failEvery: 25, failInput: func(i int) string { return `{"prompt":"x","max_gen_len":4096}` }, wantFailed: "max_gen_len: 4096",
			usage: func(t *testing.T, mo any) (int64, int64, bool) {
				if !strings.HasPrefix(text(get(mo, "generation")), "[simulated]") || get(mo, "stop_reason") == nil {
					t.Errorf("modelOutput %v", mo)
				}
				return num(get(mo, "prompt_token_count")), num(get(mo, "generation_token_count")), true
			}},
		// Mistral Small: Mistral 7B takes no batch jobs (no batch quotas; TestBatchRefusedWithoutBatchQuotas).
		{name: "Mistral", model: "mistral.mistral-small-2402-v1:0", input: func(i int) string {
			return fmt.Sprintf(`{"prompt":"<s>[INST] hello %d [/INST]","max_tokens":64}`, i)
		}, usage: func(t *testing.T, mo any) (int64, int64, bool) {
			if !strings.HasPrefix(text(get(mo, "outputs", 0, "text")), "[simulated]") {
				t.Errorf("modelOutput %v", mo)
			}
			return 0, 0, false
		}},
		{name: "Titan embeddings", model: "amazon.titan-embed-text-v2:0", input: func(i int) string {
			return fmt.Sprintf(`{"inputText":"document number %d about invoices","dimensions":256}`, i)
		}, failEvery: 50, failInput: func(int) string { return `{"inputText":"x","dimensions":100}` }, wantFailed: "#/dimensions: 100 is not a valid enum value",
			usage: func(t *testing.T, mo any) (int64, int64, bool) {
				if v, _ := get(mo, "embedding").([]any); len(v) != 256 {
					t.Errorf("embedding of %d", len(v))
				}
				return num(get(mo, "inputTextTokenCount")), 0, true
			}},
		{name: "Converse job", model: "us.anthropic.claude-haiku-4-5-20251001-v1:0", typ: types.ModelInvocationTypeConverse, input: func(i int) string {
			return fmt.Sprintf(`{"messages":[{"role":"user","content":[{"text":"Question %d"}]}],"inferenceConfig":{"maxTokens":100}}`, i)
		}, failEvery: 20, failInput: func(int) string {
			return `{"messages":[{"role":"user","content":[{"text":"q"}]}],"inferenceConfig":{"maxTokens":70000}}`
		}, wantFailed: "exceeds the model limit of 64000",
			usage: func(t *testing.T, mo any) (int64, int64, bool) {
				if get(mo, "stopReason") != "end_turn" || !strings.HasPrefix(text(get(mo, "output", "message", "content", 0, "text")), "[simulated]") {
					t.Errorf("modelOutput %v", mo)
				}
				return num(get(mo, "usage", "inputTokens")), num(get(mo, "usage", "outputTokens")), true
			}},
	}
	// Converse jobs: each record is held to the simulator's own Converse rules.
	const haiku45 = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
	pdf := base64.StdEncoding.EncodeToString(testPDF(1))
	converseIn := func(i int) string {
		return fmt.Sprintf(`{"messages":[{"role":"user","content":[{"text":"Question %d"}]}],"inferenceConfig":{"maxTokens":100}}`, i)
	}
	converseUsage := func(t *testing.T, mo any) (int64, int64, bool) {
		return num(get(mo, "usage", "inputTokens")), num(get(mo, "usage", "outputTokens")), true
	}
	for _, c := range []struct{ name, model, fail, want string }{
		{"Converse job: toolConfig refused", haiku45,
			`{"messages":[{"role":"user","content":[{"text":"q"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"t","inputSchema":{"json":{}}}}]}}`,
			"toolConfig is not supported for batch inference jobs of the Converse invocation type"},
		{"Converse job: Mixtral refuses a system prompt", "mistral.mixtral-8x7b-instruct-v0:1",
			`{"system":[{"text":"Be brief."}],"messages":[{"role":"user","content":[{"text":"q"}]}]}`,
			"This model doesn't support system messages"},
		{"Converse job: a document needs a text block", haiku45,
			`{"messages":[{"role":"user","content":[{"document":{"format":"pdf","name":"invoice","source":{"bytes":"` + pdf + `"}}}]}]}`,
			"a message with a document must also include a text block"},
		{"Converse job: bad document name", haiku45,
			`{"messages":[{"role":"user","content":[{"document":{"format":"pdf","name":"invoice #1","source":{"bytes":"` + pdf + `"}}},{"text":"total?"}]}]}`,
			"The document file name can only contain"},
		{"Converse job: roles alternate", haiku45,
			`{"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"user","content":[{"text":"b"}]}]}`,
			"A conversation must alternate between user and assistant roles"},
		{"Converse job: first message from the user", haiku45,
			`{"messages":[{"role":"assistant","content":[{"text":"a"}]}]}`,
			"A conversation must start with a user message"},
		{"Converse job: Sonnet 5 refuses temperature", "global.anthropic.claude-sonnet-5",
			`{"messages":[{"role":"user","content":[{"text":"q"}]}],"inferenceConfig":{"maxTokens":100,"temperature":0.2}}`,
			"The model returned the following errors: `temperature` is deprecated for this model."},
		{"Converse job: Opus 5 refuses topP", "global.anthropic.claude-opus-5",
			`{"messages":[{"role":"user","content":[{"text":"q"}]}],"inferenceConfig":{"maxTokens":100,"topP":0.9}}`,
			"`top_p` is deprecated for this model"},
		{"Converse job: empty content", haiku45,
			`{"messages":[{"role":"user","content":[]}]}`,
			"The content field in the Message object at messages.0 is empty"},
	} {
		tests = append(tests, struct {
			name, model string
			typ         types.ModelInvocationType
			input       func(i int) string
			usage       func(t *testing.T, mo any) (in, out int64, ok bool)
			failEvery   int
			failInput   func(i int) string
			wantFailed  string
		}{name: c.name, model: c.model, typ: types.ModelInvocationTypeConverse, input: converseIn, usage: converseUsage,
			failEvery: 10, failInput: func(int) string { return c.fail }, wantFailed: c.want})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			const n = 100
			e.put(t, inputURI, records(n, func(i int) string {
				if tc.failEvery > 0 && i%tc.failEvery == 0 {
					return tc.failInput(i)
				}
				return tc.input(i)
			}))
			arn := e.createTyped(t, "mcpbatch-fam", tc.model, tc.typ)
			if err := e.sim.Settle(context.Background()); err != nil {
				t.Fatal(err)
			}
			g := e.get(t, arn)
			wantFailed := 0
			if tc.failEvery > 0 {
				wantFailed = n / tc.failEvery
			}
			if g.Status != types.ModelInvocationJobStatusCompleted || aws.ToInt64(g.ErrorRecordCount) != int64(wantFailed) {
				t.Fatalf("status %s errors %d (%s), want Completed with %d", g.Status, aws.ToInt64(g.ErrorRecordCount), aws.ToString(g.Message), wantFailed)
			}
			if want := tc.typ; want != "" && g.ModelInvocationType != want {
				t.Errorf("modelInvocationType %s, want %s", g.ModelInvocationType, want)
			}
			var in, out int64
			counted := true
			failed := 0
			for _, l := range e.rawLines(t, arn) {
				if errObj, bad := l["error"]; bad {
					failed++
					if msg := text(get(errObj, "errorMessage")); !strings.Contains(msg, tc.wantFailed) || get(errObj, "errorCode") != float64(400) {
						t.Errorf("error line %v, want 400 with %q", errObj, tc.wantFailed)
					}
					continue
				}
				i, o, ok := tc.usage(t, l["modelOutput"])
				counted = counted && ok
				if ok && i <= 0 {
					t.Errorf("record %v: input tokens %d", l["recordId"], i)
				}
				in, out = in+i, out+o
			}
			if failed != wantFailed {
				t.Errorf("%d error lines, want %d", failed, wantFailed)
			}
			_, manifest, _ := e.output(t, arn)
			if counted && (manifest["inputTokenCount"] != in || manifest["outputTokenCount"] != out) {
				t.Errorf("manifest tokens %d/%d, lines sum to %d/%d", manifest["inputTokenCount"], manifest["outputTokenCount"], in, out)
			}
			if manifest["inputTokenCount"] <= 0 || manifest["successRecordCount"] != int64(n-wantFailed) || manifest["errorRecordCount"] != int64(wantFailed) {
				t.Errorf("manifest %v", manifest)
			}
		})
	}
}

func TestBatchSizeQuotas(t *testing.T) {
	input := claudeLines(150) // about 26 KB
	tests := []struct {
		name    string
		knobs   func(*simbedrock.BedrockSim)
		files   map[string][]byte
		wantMsg string // "" completes
	}{
		{name: "file within the quota", knobs: func(s *simbedrock.BedrockSim) { s.MaxFileBytes = int64(len(input)) },
			files: map[string][]byte{"records.jsonl": input}},
		{name: "file over the quota", knobs: func(s *simbedrock.BedrockSim) { s.MaxFileBytes = int64(len(input)) - 1 },
			files:   map[string][]byte{"records.jsonl": input},
			wantMsg: fmt.Sprintf("input file %s is larger than the %d-byte quota per batch inference input file", inputURI, len(input)-1)},
		{name: "job over the quota", knobs: func(s *simbedrock.BedrockSim) { s.MaxJobBytes = int64(len(input)) + 100 },
			files:   map[string][]byte{"a.jsonl": input, "b.jsonl": claudeLines(150)[:2000]},
			wantMsg: "larger than the " + fmt.Sprint(len(input)+100) + "-byte quota per batch inference job"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.knobs)
			uri := inputURI
			if len(tc.files) > 1 {
				uri = "s3://bucket/input/job1/"
			}
			for name, data := range tc.files {
				e.put(t, "s3://bucket/input/job1/"+name, data)
			}
			out, err := e.client.CreateModelInvocationJob(context.Background(), &sdk.CreateModelInvocationJobInput{
				JobName: aws.String("mcpbatch-size"), ModelId: aws.String(claude), RoleArn: aws.String(roleARN),
				InputDataConfig: &types.ModelInvocationJobInputDataConfigMemberS3InputDataConfig{
					Value: types.ModelInvocationJobS3InputDataConfig{S3Uri: aws.String(uri)}},
				OutputDataConfig: &types.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig{
					Value: types.ModelInvocationJobS3OutputDataConfig{S3Uri: aws.String(outURI)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.sim.Settle(context.Background()); err != nil {
				t.Fatal(err)
			}
			g := e.get(t, aws.ToString(out.JobArn))
			switch {
			case tc.wantMsg == "" && g.Status != types.ModelInvocationJobStatusCompleted:
				t.Errorf("status %s (%s), want Completed", g.Status, aws.ToString(g.Message))
			case tc.wantMsg != "" && (g.Status != types.ModelInvocationJobStatusFailed || !strings.Contains(aws.ToString(g.Message), tc.wantMsg)):
				t.Errorf("status %s message %q, want Failed with %q", g.Status, aws.ToString(g.Message), tc.wantMsg)
			}
		})
	}
}

// The 4.5 MB document cap of Converse does not hold for PDFs read by Claude 4
// and later or Nova; Claude 3 models still have it.
func TestConverseBatchPDFCap(t *testing.T) {
	big := append(testPDF(2), bytes.Repeat([]byte("%pad\n"), 920_001)...) // about 4.6 MB
	line := fmt.Sprintf(`{"messages":[{"role":"user","content":[{"document":{"format":"pdf","name":"report","citations":{"enabled":true},"source":{"bytes":"%s"}}},{"text":"Summarise"}]}],"inferenceConfig":{"maxTokens":100}}`,
		base64.StdEncoding.EncodeToString(big))
	for _, tc := range []struct {
		model string
		fails bool
	}{
		{"us.anthropic.claude-haiku-4-5-20251001-v1:0", false},
		{"us.amazon.nova-lite-v1:0", false},
		{"anthropic.claude-3-haiku-20240307-v1:0", true},
	} {
		t.Run(tc.model, func(t *testing.T) {
			e := newEnv(t, nil)
			e.put(t, inputURI, records(100, func(i int) string {
				if i == 0 {
					return line
				}
				return fmt.Sprintf(`{"messages":[{"role":"user","content":[{"text":"Question %d"}]}]}`, i)
			}))
			arn := e.createTyped(t, "mcpbatch-pdf", tc.model, types.ModelInvocationTypeConverse)
			if err := e.sim.Settle(context.Background()); err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, l := range e.rawLines(t, arn) {
				if errObj, bad := l["error"]; bad {
					failed = append(failed, fmt.Sprint(get(errObj, "errorMessage")))
				}
			}
			switch {
			case tc.fails && (len(failed) != 1 || !strings.Contains(failed[0], "the maximum document size is 4.5 MB")):
				t.Errorf("errors %q, want the 4.5 MB cap", failed)
			case !tc.fails && len(failed) != 0:
				t.Errorf("errors %q, want none (PDFs are exempt from the cap)", failed)
			}
		})
	}
}
