package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	rt "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	rttypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

// newRuntime serves s and returns the real bedrockruntime client aimed at it,
// without SDK retries so refusals come back as they are.
func newRuntime(t *testing.T, s *simbedrock.RuntimeSim) *rt.Client {
	t.Helper()
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return rt.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *rt.Options) {
			o.BaseEndpoint = aws.String(url)
			o.RetryMaxAttempts = 1
			o.HTTPClient = sim.HTTPClient()
		})
}

func converse(c *rt.Client, model string, maxTokens int32) error {
	in := &rt.ConverseInput{ModelId: aws.String(model), Messages: []rttypes.Message{{
		Role: rttypes.ConversationRoleUser, Content: []rttypes.ContentBlock{&rttypes.ContentBlockMemberText{Value: "hello there"}},
	}}}
	if maxTokens > 0 {
		in.InferenceConfig = &rttypes.InferenceConfiguration{MaxTokens: aws.Int32(maxTokens)}
	}
	_, err := c.Converse(context.Background(), in)
	return err
}

func invoke(c *rt.Client, model, body string) (*rt.InvokeModelOutput, error) {
	return c.InvokeModel(context.Background(), &rt.InvokeModelInput{ModelId: aws.String(model), Body: []byte(body), ContentType: aws.String("application/json")})
}

// validationMessage is the ValidationException's message without the simulator's label.
func validationMessage(t *testing.T, err error) string {
	t.Helper()
	var ve *rttypes.ValidationException
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a ValidationException", err)
	}
	msg, ok := strings.CutPrefix(ve.ErrorMessage(), "[simulated] ")
	if !ok {
		t.Errorf("message %q does not say it is simulated", ve.ErrorMessage())
	}
	return msg
}

func TestRuntimeModelIDs(t *testing.T) {
	const onDemand = "Invocation of model ID %s with on-demand throughput isn\u2019t supported. Retry your request with the ID or ARN of an inference profile that contains this model."
	titan := `{"inputText":"hello"}`
	tests := []struct {
		name, region, model string
		body                string // InvokeModel body; Converse when empty
		want                string // exact refusal; "" accepts
		wantWarn            bool
	}{
		{name: "3.5 Haiku base id needs a profile", model: "anthropic.claude-3-5-haiku-20241022-v1:0",
			want: fmt.Sprintf(onDemand, "anthropic.claude-3-5-haiku-20241022-v1:0")},
		{name: "Sonnet 4.5 base id via InvokeModel", model: "anthropic.claude-sonnet-4-5-20250929-v1:0",
			body: `{"anthropic_version":"bedrock-2023-05-31","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			want: fmt.Sprintf(onDemand, "anthropic.claude-sonnet-4-5-20250929-v1:0")},
		{name: "Llama 3.2 base id", model: "meta.llama3-2-11b-instruct-v1:0",
			want: fmt.Sprintf(onDemand, "meta.llama3-2-11b-instruct-v1:0")},
		{name: "foundation-model ARN of 3.7 Sonnet", model: "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-7-sonnet-20250219-v1:0",
			want: fmt.Sprintf(onDemand, "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-7-sonnet-20250219-v1:0")},
		{name: "Nova Lite base id outside us-east-1", region: "us-west-2", model: "amazon.nova-lite-v1:0",
			want: fmt.Sprintf(onDemand, "amazon.nova-lite-v1:0")},
		{name: "profile for a model without profiles", model: "us.amazon.titan-embed-text-v2:0", body: titan,
			want: "The provided model identifier is invalid."},
		{name: "Nova Lite base id in us-east-1", model: "amazon.nova-lite-v1:0"},
		{name: "Claude 3 Haiku base id in-Region", model: "anthropic.claude-3-haiku-20240307-v1:0"},
		{name: "us. profile", model: "us.anthropic.claude-3-5-haiku-20241022-v1:0"},
		{name: "eu. profile", model: "eu.anthropic.claude-3-7-sonnet-20250219-v1:0"},
		{name: "apac. profile", model: "apac.anthropic.claude-sonnet-4-20250514-v1:0"},
		{name: "global. profile", model: "global.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{name: "inference-profile ARN", model: "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0"},
		{name: "Titan embeddings base id", model: "amazon.titan-embed-text-v2:0", body: titan},
		{name: "application inference profile is permissive", model: "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
			body: `{"anthropic_version":"bedrock-2023-05-31","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, wantWarn: true},
		{name: "unknown model is permissive", model: "anthropic.claude-next-20990101-v1:0", wantWarn: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			c := newRuntime(t, &simbedrock.RuntimeSim{Region: tc.region, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			var err error
			if tc.body == "" {
				err = converse(c, tc.model, 0)
			} else {
				_, err = invoke(c, tc.model, tc.body)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			} else if err == nil {
				t.Fatalf("accepted, want %q", tc.want)
			} else if got := validationMessage(t, err); got != tc.want {
				t.Errorf("message\n got %q\nwant %q", got, tc.want)
			}
			warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "permissive") && strings.Contains(logs.String(), tc.model)
			if warned != tc.wantWarn {
				t.Errorf("permissive warning logged = %v, want %v; log:\n%s", warned, tc.wantWarn, logs.String())
			}
		})
	}
}

func TestRuntimeMaxTokens(t *testing.T) {
	claude := func(maxTokens int, beta string) string {
		return fmt.Sprintf(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":%d,%s"messages":[{"role":"user","content":"hi"}]}`, maxTokens, beta)
	}
	nova := func(maxTokens int) string {
		return fmt.Sprintf(`{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":%d}}`, maxTokens)
	}
	tests := []struct {
		name, model string
		body        string // InvokeModel body; Converse with maxTokens when empty
		maxTokens   int32
		want        string // refusal substring; "" accepts
	}{
		{name: "Claude native at the limit", model: "us.anthropic.claude-3-5-haiku-20241022-v1:0", body: claude(8192, "")},
		{name: "Claude native over the limit", model: "us.anthropic.claude-3-5-haiku-20241022-v1:0", body: claude(8193, ""),
			want: "Malformed input request: #/max_tokens: 8193 is not less or equal to 8192"},
		{name: "3.7 Sonnet 128K without the beta flag", model: "us.anthropic.claude-3-7-sonnet-20250219-v1:0", body: claude(100000, ""),
			want: "is not less or equal to 64000"},
		{name: "3.7 Sonnet 128K with the beta flag", model: "us.anthropic.claude-3-7-sonnet-20250219-v1:0", body: claude(100000, `"anthropic_beta":["output-128k-2025-02-19"],`)},
		{name: "Opus 4.1 native", model: "us.anthropic.claude-opus-4-1-20250805-v1:0", body: claude(32001, ""), want: "is not less or equal to 32000"},
		{name: "Converse Haiku 4.5", model: "us.anthropic.claude-haiku-4-5-20251001-v1:0", maxTokens: 64001,
			want: "The maximum tokens you requested exceeds the model limit of 64000. Try again with a maximum tokens value that is lower than 64000."},
		{name: "Converse Haiku 4.5 at the limit", model: "us.anthropic.claude-haiku-4-5-20251001-v1:0", maxTokens: 64000},
		{name: "Nova native", model: "us.amazon.nova-pro-v1:0", body: nova(5001), want: "#/inferenceConfig/maxTokens: 5001 is not less or equal to 5000"},
		{name: "Nova native at the limit", model: "us.amazon.nova-pro-v1:0", body: nova(5000)},
		{name: "Converse Nova", model: "amazon.nova-micro-v1:0", maxTokens: 5001, want: "exceeds the model limit of 5000"},
		{name: "Llama max_gen_len", model: "us.meta.llama3-2-11b-instruct-v1:0", body: `{"prompt":"hi","max_gen_len":2049}`,
			want: "#/max_gen_len: 2049 is not less or equal to 2048"},
		{name: "Converse Llama", model: "us.meta.llama3-3-70b-instruct-v1:0", maxTokens: 4096, want: "exceeds the model limit of 2048"},
		{name: "Mixtral max_tokens", model: "mistral.mixtral-8x7b-instruct-v0:1", body: `{"prompt":"<s>[INST] hi [/INST]","max_tokens":4097}`,
			want: "#/max_tokens: 4097 is not less or equal to 4096"},
		{name: "Mistral 7B max_tokens at its limit", model: "mistral.mistral-7b-instruct-v0:2", body: `{"prompt":"<s>[INST] hi [/INST]","max_tokens":8192}`},
	}
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.DiscardHandler)})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.body == "" {
				err = converse(c, tc.model, tc.maxTokens)
			} else {
				_, err = invoke(c, tc.model, tc.body)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && err == nil:
			case err == nil:
				t.Fatalf("accepted, want a refusal with %q", tc.want)
			default:
				if got := validationMessage(t, err); !strings.Contains(got, tc.want) {
					t.Errorf("message %q, want it to contain %q", got, tc.want)
				}
			}
		})
	}
}

// Claude generation-5 models and Opus 4.7+ refuse temperature and top_p on
// Bedrock whatever the value; top_k (a model field) and requests without them pass.
func TestRuntimeConverseSampling(t *testing.T) {
	f := func(v float32) *float32 { return &v }
	tests := []struct {
		name, model string
		temp, topP  *float32
		want        string // refusal; "" accepts
	}{
		{"Sonnet 5 with temperature", "global.anthropic.claude-sonnet-5", f(0.2), nil,
			"The model returned the following errors: `temperature` is deprecated for this model."},
		{"Sonnet 5 with temperature 1 (the default)", "global.anthropic.claude-sonnet-5", f(1), nil, "`temperature` is deprecated"},
		{"Sonnet 5 without sampling", "global.anthropic.claude-sonnet-5", nil, nil, ""},
		{"Opus 5 with topP", "global.anthropic.claude-opus-5", nil, f(0.9), "`top_p` is deprecated for this model."},
		{"Opus 4.7 with temperature", "us.anthropic.claude-opus-4-7", f(0.5), nil, "`temperature` is deprecated"},
		{"Haiku 5.5 without sampling", "global.anthropic.claude-haiku-5-5", nil, nil, ""},
		{"Sonnet 4.6 with temperature", "global.anthropic.claude-sonnet-4-6", f(0.2), f(0.9), ""},
	}
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.DiscardHandler)})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Converse(context.Background(), &rt.ConverseInput{ModelId: aws.String(tc.model),
				Messages:        []rttypes.Message{{Role: rttypes.ConversationRoleUser, Content: []rttypes.ContentBlock{&rttypes.ContentBlockMemberText{Value: "hi"}}}},
				InferenceConfig: &rttypes.InferenceConfiguration{MaxTokens: aws.Int32(100), Temperature: tc.temp, TopP: tc.topP}})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("accepted, want a refusal with %q", tc.want)
			default:
				if got := validationMessage(t, err); !strings.Contains(got, tc.want) {
					t.Errorf("message %q, want it to contain %q", got, tc.want)
				}
			}
		})
	}
}

// headerTokens reads Bedrock's token-count headers off an InvokeModel answer.
func headerTokens(t *testing.T, out *rt.InvokeModelOutput) (in, outTok int64) {
	t.Helper()
	raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response)
	if !ok {
		t.Fatal("no raw response")
	}
	if raw.Header.Get("X-Mcpbatch-Simulated") != "true" {
		t.Errorf("the answer does not say it is simulated")
	}
	in, err1 := strconv.ParseInt(raw.Header.Get("X-Amzn-Bedrock-Input-Token-Count"), 10, 64)
	outTok, err2 := strconv.ParseInt(raw.Header.Get("X-Amzn-Bedrock-Output-Token-Count"), 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("token headers missing: %v %v", err1, err2)
	}
	return in, outTok
}

// get walks a decoded JSON value by keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func num(v any) int64 { f, _ := v.(float64); return int64(f) }

func TestRuntimeNativeShapes(t *testing.T) {
	tests := []struct {
		name, model, body string
		check             func(t *testing.T, body any, in, out int64)
	}{
		{"Claude Messages", "us.anthropic.claude-haiku-4-5-20251001-v1:0",
			`{"anthropic_version":"bedrock-2023-05-31","max_tokens":200,"system":"Be brief.","messages":[{"role":"user","content":"What is a batch job?"}]}`,
			func(t *testing.T, b any, in, out int64) {
				u := get(b, "usage")
				if !strings.HasPrefix(fmt.Sprint(get(b, "content", 0, "text")), "[simulated]") || get(b, "type") != "message" || get(b, "stop_reason") != "end_turn" {
					t.Errorf("body %v", b)
				}
				for _, k := range []string{"cache_creation_input_tokens", "cache_read_input_tokens"} {
					if _, ok := u.(map[string]any)[k]; !ok {
						t.Errorf("usage lacks %s: %v", k, u)
					}
				}
				if num(get(u, "input_tokens")) != in || num(get(u, "output_tokens")) != out {
					t.Errorf("usage %v, headers %d/%d", u, in, out)
				}
			}},
		{"Nova", "us.amazon.nova-lite-v1:0",
			`{"system":[{"text":"Be brief."}],"messages":[{"role":"user","content":[{"text":"What is a batch job?"}]}],"inferenceConfig":{"maxTokens":300}}`,
			func(t *testing.T, b any, in, out int64) {
				if !strings.HasPrefix(fmt.Sprint(get(b, "output", "message", "content", 0, "text")), "[simulated]") || get(b, "stopReason") != "end_turn" {
					t.Errorf("body %v", b)
				}
				if u := get(b, "usage"); num(get(u, "inputTokens")) != in || num(get(u, "outputTokens")) != out || num(get(u, "totalTokens")) != in+out {
					t.Errorf("usage %v, headers %d/%d", u, in, out)
				}
			}},
		{"Llama", "meta.llama3-8b-instruct-v1:0", `{"prompt":"What is a batch job?","max_gen_len":300}`,
			func(t *testing.T, b any, in, out int64) {
				if !strings.HasPrefix(fmt.Sprint(get(b, "generation")), "[simulated]") || get(b, "stop_reason") != "stop" ||
					num(get(b, "prompt_token_count")) != in || num(get(b, "generation_token_count")) != out {
					t.Errorf("body %v, headers %d/%d", b, in, out)
				}
			}},
		{"Llama cut at max_gen_len", "meta.llama3-8b-instruct-v1:0", `{"prompt":"What is a batch job?","max_gen_len":3}`,
			func(t *testing.T, b any, in, out int64) {
				if get(b, "stop_reason") != "length" || num(get(b, "generation_token_count")) != 3 || out != 3 {
					t.Errorf("body %v", b)
				}
			}},
		{"Mistral", "mistral.mistral-large-2402-v1:0", `{"prompt":"<s>[INST] What is a batch job? [/INST]","max_tokens":300}`,
			func(t *testing.T, b any, in, out int64) {
				if !strings.HasPrefix(fmt.Sprint(get(b, "outputs", 0, "text")), "[simulated]") || get(b, "outputs", 0, "stop_reason") != "stop" || in <= 0 || out <= 0 {
					t.Errorf("body %v, headers %d/%d", b, in, out)
				}
			}},
		{"Titan embeddings default", "amazon.titan-embed-text-v2:0", `{"inputText":"overdue invoice for March"}`,
			func(t *testing.T, b any, in, out int64) {
				v, _ := get(b, "embedding").([]any)
				if len(v) != 1024 || num(get(b, "inputTextTokenCount")) != in || out != 0 || get(b, "embeddingsByType", "float") == nil {
					t.Errorf("embedding of %d, tokens %v, headers %d/%d", len(v), get(b, "inputTextTokenCount"), in, out)
				}
			}},
		{"Titan embeddings 256", "amazon.titan-embed-text-v2:0", `{"inputText":"overdue invoice","dimensions":256}`,
			func(t *testing.T, b any, in, out int64) {
				if v, _ := get(b, "embedding").([]any); len(v) != 256 {
					t.Errorf("embedding of %d", len(v))
				}
			}},
		{"Cohere embeddings", "cohere.embed-english-v3", `{"texts":["overdue invoice","sunny beach"],"input_type":"search_document"}`,
			func(t *testing.T, b any, in, out int64) {
				e, _ := get(b, "embeddings").([]any)
				if len(e) != 2 || len(e[0].([]any)) != 1024 || get(b, "response_type") != "embeddings_floats" ||
					get(b, "id") == "" || len(get(b, "texts").([]any)) != 2 || in <= 0 {
					t.Errorf("body keys %v, %d embeddings", b.(map[string]any)["response_type"], len(e))
				}
			}},
	}
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.DiscardHandler)})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := invoke(c, tc.model, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			var body any
			if err := json.Unmarshal(out.Body, &body); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			in, outTok := headerTokens(t, out)
			if in <= 0 {
				t.Errorf("input token header %d", in)
			}
			tc.check(t, body, in, outTok)
		})
	}
}

func TestRuntimeEmbeddingRefusals(t *testing.T) {
	texts := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("text %d", i)
		}
		b, _ := json.Marshal(s)
		return string(b)
	}
	tests := []struct{ name, model, body, want string }{
		{"Titan dimensions", "amazon.titan-embed-text-v2:0", `{"inputText":"x","dimensions":300}`, "#/dimensions: 300 is not a valid enum value"},
		{"Titan input over 50,000 characters", "amazon.titan-embed-text-v2:0", `{"inputText":"` + strings.Repeat("a", 50_001) + `"}`,
			"#/inputText: expected maxLength: 50000, actual: 50001"},
		{"Titan without inputText", "amazon.titan-embed-text-v2:0", `{"dimensions":256}`, "required key [inputText] not found"},
		{"Cohere 97 texts", "cohere.embed-english-v3", `{"input_type":"search_query","texts":` + texts(97) + `}`, "#/texts: expected maxItems: 96, actual: 97"},
		{"Cohere without input_type", "cohere.embed-multilingual-v3", `{"texts":["a"]}`, "required key [input_type] not found"},
		{"Cohere bad input_type", "cohere.embed-english-v3", `{"texts":["a"],"input_type":"search"}`, "#/input_type: search is not a valid enum value"},
		{"Cohere text over 2048 characters", "cohere.embed-english-v3", `{"texts":["` + strings.Repeat("b", 2049) + `"],"input_type":"clustering"}`,
			"#/texts/0: expected maxLength: 2048, actual: 2049"},
	}
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.DiscardHandler)})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := invoke(c, tc.model, tc.body)
			if got := validationMessage(t, err); !strings.Contains(got, tc.want) || !strings.HasPrefix(got, "Malformed input request: ") {
				t.Errorf("message %q, want it to contain %q", got, tc.want)
			}
		})
	}
	t.Run("Cohere 96 texts", func(t *testing.T) {
		if _, err := invoke(c, "cohere.embed-english-v3", `{"input_type":"search_query","texts":`+texts(96)+`}`); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Converse with an embedding model", func(t *testing.T) {
		err := converse(c, "amazon.titan-embed-text-v2:0", 0)
		if got := validationMessage(t, err); !strings.Contains(got, "doesn't support the model") {
			t.Errorf("message %q", got)
		}
	})
}

func TestRuntimeEmbeddingsAreDeterministicAndSemantic(t *testing.T) {
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.DiscardHandler)})
	vec := func(text string) []float64 {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"inputText": text, "dimensions": 512})
		out, err := invoke(c, "amazon.titan-embed-text-v2:0", string(b))
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Embedding []float64 }
		if err := json.Unmarshal(out.Body, &r); err != nil {
			t.Fatal(err)
		}
		return r.Embedding
	}
	cos := func(a, b []float64) float64 {
		var d float64
		for i := range a {
			d += a[i] * b[i]
		}
		return d // unit vectors: normalize defaults to true
	}
	a, again := vec("The invoice for March is overdue"), vec("The invoice for March is overdue")
	near, far := vec("Overdue invoice: please pay March"), vec("Sunny beach holiday in Crete")
	if cos(a, again) < 0.999999 {
		t.Errorf("same text, different vectors (cos %.6f)", cos(a, again))
	}
	if n := cos(a, a); math.Abs(n-1) > 1e-9 {
		t.Errorf("not normalised: |v|^2 = %f", n)
	}
	if cos(a, near) <= cos(a, far)+0.2 {
		t.Errorf("texts sharing words are not nearer: cos near %.3f, far %.3f", cos(a, near), cos(a, far))
	}
}

func TestRuntimeNativeClaudeCache(t *testing.T) {
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.DiscardHandler)})
	body := `{"anthropic_version":"bedrock-2023-05-31","max_tokens":100,"system":[{"type":"text","text":"` + strings.Repeat("policy ", 800) +
		`","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"question %d"}]}`
	var usages []map[string]int64
	for i := range 2 {
		out, err := invoke(c, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", fmt.Sprintf(body, i))
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Usage map[string]int64 }
		if err := json.Unmarshal(out.Body, &r); err != nil {
			t.Fatal(err)
		}
		usages = append(usages, r.Usage)
	}
	first, second := usages[0], usages[1]
	if first["cache_creation_input_tokens"] == 0 || first["cache_read_input_tokens"] != 0 ||
		second["cache_read_input_tokens"] != first["cache_creation_input_tokens"] || second["cache_creation_input_tokens"] != 0 ||
		second["input_tokens"] >= first["cache_creation_input_tokens"] {
		t.Errorf("usages %v then %v: want a write, then a read of the same size, apart from input_tokens", first, second)
	}
}

// Token limits of embedding models (the simulator counts 4 bytes a token),
// with truncation where the body asks for it, and the dimension choices of
// Cohere Embed v4 and Nova Multimodal Embeddings.
func TestRuntimeEmbeddingTokensAndDimensions(t *testing.T) {
	long := func(n int) string { return strings.Repeat("w", n) }
	nova := func(dim, mode, text string) string {
		return `{"taskType":"SINGLE_EMBEDDING","singleEmbeddingParams":{"embeddingPurpose":"GENERIC_INDEX"` + dim + `,"text":{"truncationMode":"` + mode + `","value":"` + text + `"}}}`
	}
	tests := []struct {
		name, model, body string
		want              string // error text; "" succeeds
		dims              int
		vector            func(out map[string]any) []any
	}{
		{name: "Titan over 8,192 tokens", model: "amazon.titan-embed-text-v2:0", body: `{"inputText":"` + long(8192*4+4) + `"}`,
			want: "Too many input tokens. Max input tokens: 8192, request input token count: 8193"},
		{name: "Cohere v3 over 512 tokens, truncate NONE", model: "cohere.embed-english-v3", body: `{"texts":["` + long(2048 + 1)[:2048] + `x"],"input_type":"search_document"}`,
			want: "expected maxLength: 2048"},
		{name: "Cohere v3 over 512 tokens of multibyte text, NONE fails", model: "cohere.embed-english-v3", body: `{"texts":["` + strings.Repeat("é", 1100) + `"],"input_type":"search_document"}`,
			want: "more than the model's maximum of 512; with truncate NONE a longer input fails"},
		{name: "Cohere v3 over 512 tokens, truncate END", model: "cohere.embed-english-v3", body: `{"texts":["` + strings.Repeat("é", 1100) + `"],"input_type":"search_document","truncate":"END"}`,
			dims: 1024, vector: func(o map[string]any) []any { v, _ := get(o, "embeddings", 0).([]any); return v }},
		{name: "Cohere v4 256", model: "cohere.embed-v4:0", body: `{"texts":["a","b"],"input_type":"search_query","embedding_types":["float"],"output_dimension":256}`,
			dims: 256, vector: func(o map[string]any) []any { v, _ := get(o, "embeddings", "float", 1).([]any); return v }},
		{name: "Cohere v4 default 1536", model: "cohere.embed-v4:0", body: `{"texts":["a"],"input_type":"search_document","embedding_types":["float"]}`,
			dims: 1536, vector: func(o map[string]any) []any { v, _ := get(o, "embeddings", "float", 0).([]any); return v }},
		{name: "Cohere v4 300", model: "cohere.embed-v4:0", body: `{"texts":["a"],"input_type":"search_document","output_dimension":300}`, want: "#/output_dimension: 300 is not a valid enum value"},
		{name: "Cohere v4 truncate END is v3's word", model: "cohere.embed-v4:0", body: `{"texts":["a"],"input_type":"search_document","truncate":"END"}`, want: "#/truncate: END is not a valid enum value"},
		{name: "Nova default 3072", model: "amazon.nova-2-multimodal-embeddings-v1:0", body: nova("", "NONE", "hello"),
			dims: 3072, vector: func(o map[string]any) []any { v, _ := get(o, "embeddings", 0, "embedding").([]any); return v }},
		{name: "Nova 384", model: "amazon.nova-2-multimodal-embeddings-v1:0", body: nova(`,"embeddingDimension":384`, "NONE", "hello"),
			dims: 384, vector: func(o map[string]any) []any { v, _ := get(o, "embeddings", 0, "embedding").([]any); return v }},
		{name: "Nova 512", model: "amazon.nova-2-multimodal-embeddings-v1:0", body: nova(`,"embeddingDimension":512`, "NONE", "hello"), want: "embeddingDimension: 512 is not a valid enum value"},
		{name: "Nova over 8,192 tokens, NONE", model: "amazon.nova-2-multimodal-embeddings-v1:0", body: nova("", "NONE", long(8192*4+4)), want: "with truncationMode NONE a longer input fails"},
		{name: "Nova over 8,192 tokens, END", model: "amazon.nova-2-multimodal-embeddings-v1:0", body: nova(`,"embeddingDimension":256`, "END", long(8192*4+4)),
			dims: 256, vector: func(o map[string]any) []any { v, _ := get(o, "embeddings", 0, "embedding").([]any); return v }},
	}
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.DiscardHandler)})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := invoke(c, tc.model, tc.body)
			if tc.want != "" {
				if got := validationMessage(t, err); !strings.Contains(got, tc.want) {
					t.Errorf("message %q, want it to contain %q", got, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var o map[string]any
			if err := json.Unmarshal(out.Body, &o); err != nil {
				t.Fatal(err)
			}
			if v := tc.vector(o); len(v) != tc.dims {
				t.Errorf("vector of %d dimensions, want %d: %.200s", len(v), tc.dims, out.Body)
			}
			if in, _ := headerTokens(t, out); in <= 0 {
				t.Errorf("input tokens %d", in)
			}
		})
	}
}
