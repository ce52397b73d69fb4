package batch

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// limitsProvider adds batch limits and on-demand runs to namedProvider.
type limitsProvider struct{ namedProvider }

func (limitsProvider) Limits() service.BatchLimits {
	return service.BatchLimits{Title: "Bedrock batch inference", MinRecords: 100}
}

func (limitsProvider) Abilities() service.Abilities { return service.Abilities{OnDemand: true} }

// The catalog holds a submit to each model's modes, output maximum and task;
// every refusal names the field, the model and the allowed values.
func TestCheckModelAgainstTheCatalog(t *testing.T) {
	bedrock := limitsProvider{namedProvider{name: "bedrock"}}
	s := &Service{Providers: service.NewRegistry(bedrock), OnDemand: noOnDemand{}}
	prompt := func(n int) []job.Input {
		out := make([]job.Input, n)
		for i := range out {
			out[i] = job.Input{Prompt: "hi"}
		}
		return out
	}
	tests := []struct {
		name, model, mode string
		maxTokens         int
		records           []job.Input
		wantMode          string
		wantMaxTokens     int
		wantField         string // "" for success
		wantText          []string
	}{
		{"default max_tokens", "anthropic.claude-haiku-4-5-20251001-v1:0", "", 0, prompt(100), "batch", 1024, "", nil},
		{"at the model's maximum", "anthropic.claude-haiku-4-5-20251001-v1:0", "", 64000, prompt(100), "batch", 64000, "", nil},
		{"over the model's maximum", "anthropic.claude-haiku-4-5-20251001-v1:0", "", 64001, prompt(100), "", 0, "max_tokens",
			[]string{"1..64000", "anthropic.claude-haiku-4-5-20251001-v1:0"}},
		{"4.5 allows 64000", "anthropic.claude-haiku-4-5-20251001-v1:0", "", 64000, prompt(100), "batch", 64000, "", nil},
		{"auto under the minimum runs on demand", "amazon.nova-lite-v1:0", "", 0, prompt(20), "on_demand", 1024, "", nil},
		{"a model that runs on demand only: auto", "mistral.mistral-7b-instruct-v0:2", "", 0, prompt(300), "on_demand", 1024, "", nil},
		{"a model that runs on demand only: batch refused", "mistral.mistral-7b-instruct-v0:2", "batch", 0, prompt(300), "", 0, "mode",
			[]string{"mistral.mistral-7b-instruct-v0:2", "on_demand"}},
		{"embedding model given prompts", "amazon.titan-embed-text-v2:0", "", 0, prompt(100), "", 0, "records[0]",
			[]string{"embedding model", "model_input"}},
		{"embedding model given native bodies", "amazon.titan-embed-text-v2:0", "", 0,
			[]job.Input{{ModelInput: json.RawMessage(`{"inputText":"x"}`)}}, "on_demand", 0, "", nil},
		{"a model of another provider", "claude-haiku-4-5", "", 0, prompt(100), "", 0, "provider", []string{"anthropic"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &SubmitRequest{Model: tc.model, Mode: tc.mode, Records: tc.records, Params: job.Params{MaxTokens: tc.maxTokens}}
			m, err := s.checkModel(req, bedrock)
			if err == nil {
				err = s.resolveMode(req, bedrock, m)
			}
			if tc.wantField != "" {
				var fe *job.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.wantField {
					t.Fatalf("got %v, want a field error on %s", err, tc.wantField)
				}
				for _, w := range tc.wantText {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.Mode != tc.wantMode || (m.Task == model.TaskText && req.Params.MaxTokens != tc.wantMaxTokens) {
				t.Errorf("mode %s max_tokens %d, want %s %d", req.Mode, req.Params.MaxTokens, tc.wantMode, tc.wantMaxTokens)
			}
		})
	}
}

// noOnDemand is an on-demand submitter that is present but never called here.
type noOnDemand struct{}

func (noOnDemand) SubmitOnDemand(context.Context, SubmitRequest) (*job.Job, error) {
	return nil, errors.New("not called in this test")
}

// A sampling parameter the model refuses is refused at submit, naming the
// field and the model: Opus 5 on Bedrock takes top_k only (recorded Bedrock
// answers), so temperature in the job or top_p in a record's body is refused.
func TestSamplingByModel(t *testing.T) {
	bedrock := limitsProvider{namedProvider{name: "bedrock"}}
	s := &Service{Providers: service.NewRegistry(bedrock), OnDemand: noOnDemand{}}
	const opus5 = "anthropic.claude-opus-5"
	body := func(s string) []job.Input { return []job.Input{{ModelInput: json.RawMessage(s)}} }
	tests := []struct {
		name, model string
		temperature *float64
		records     []job.Input
		wantField   string
	}{
		{"temperature to Opus 5", opus5, ptr(0.5), nil, "temperature"},
		{"temperature to Haiku 4.5", "anthropic.claude-haiku-4-5-20251001-v1:0", ptr(0.5), nil, ""},
		{"top_p in a Claude body", opus5, nil, body(`{"top_p":0.9,"messages":[]}`), "records[0].model_input.top_p"},
		{"temperature in a Converse body", opus5, nil, body(`{"inferenceConfig":{"temperature":0.2},"messages":[]}`), "records[0].model_input.inferenceConfig.temperature"},
		{"top_k is accepted", opus5, nil, body(`{"top_k":5,"messages":[]}`), ""},
		{"no sampling at all", "anthropic.claude-sonnet-5", nil, body(`{"additionalModelRequestFields":{"top_k":5},"messages":[]}`), "records[0].model_input.additionalModelRequestFields.top_k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &SubmitRequest{Model: tc.model, Records: tc.records, Params: job.Params{Temperature: tc.temperature}}
			m, err := s.checkModel(req, bedrock)
			if err == nil {
				err = checkRecordSampling(req, m)
			}
			if tc.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *job.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.wantField || !strings.Contains(err.Error(), tc.model) {
				t.Fatalf("got %v, want a field error on %s naming %s", err, tc.wantField, tc.model)
			}
		})
	}
}

func ptr(v float64) *float64 { return &v }

// anthropicLimits is a provider with Message Batches' limits: no minimum, no on demand.
type anthropicLimits struct{ namedProvider }

func (anthropicLimits) Limits() service.BatchLimits {
	return service.BatchLimits{Title: "Anthropic Message Batches", MinRecords: 1}
}

// Anthropic's 300K-output beta: max_tokens above the normal maximum is
// accepted for batch jobs of the models that have a batch maximum, and the
// provider is told to send the beta header; elsewhere the normal limit holds,
// and the refusal names the field, the limit and what batch mode allows.
func TestBatchOutputBeta(t *testing.T) {
	const beta = "output-300k-2026-03-24"
	anth := anthropicLimits{namedProvider{name: "anthropic"}}
	s := &Service{OnDemand: noOnDemand{}}
	tests := []struct {
		name, model, mode string
		maxTokens         int
		wantBetas         []string
		wantErr           string // "" for success
	}{
		{"Haiku 5.5 above 128K in batch", "claude-haiku-5-5", "", 200_000, []string{beta}, ""},
		{"Haiku 5.5 at the batch maximum", "claude-haiku-5-5", "batch", 300_000, []string{beta}, ""},
		{"Haiku 5.5 within the normal limit: no beta", "claude-haiku-5-5", "", 128_000, nil, ""},
		{"Opus 4.6 above the batch maximum", "claude-opus-4-6", "", 300_001, nil,
			"max_tokens: 300001 exceeds the batch limit of 300000 for model claude-opus-4-6 (allowed: 1..300000; above its normal limit of 128000 the " + beta + " beta is sent for you)"},
		{"Fable 5.1 has no batch maximum", "claude-fable-5-1", "", 128_001, nil, "max_tokens: 128001 exceeds the limit of 128000 for model claude-fable-5-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &SubmitRequest{Model: tc.model, Mode: tc.mode, Records: []job.Input{{Prompt: "hi"}}, Params: job.Params{MaxTokens: tc.maxTokens}}
			m, err := s.checkModel(req, anth)
			if err == nil {
				err = s.resolveMode(req, anth, m)
			}
			if tc.wantErr != "" {
				var fe *job.FieldError
				if !errors.As(err, &fe) || fe.Field != "max_tokens" || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want a max_tokens error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			j := &job.Job{Model: tc.model, Params: &req.Params}
			if got := s.betaHeaders(j); !slices.Equal(got, tc.wantBetas) || req.Mode != job.ModeBatch {
				t.Errorf("mode %s betas %v, want batch %v", req.Mode, got, tc.wantBetas)
			}
		})
	}
}

// On demand keeps the normal limit even for a model with a batch maximum.
func TestBatchOutputBetaNotOnDemand(t *testing.T) {
	c, err := model.Parse([]byte(`{"prices_as_of":"2026-12-01","models":[
	 {"id":"m","provider":"bedrock","family":"claude","name":"M","task":"text","modes":["batch","on_demand"],"max_output_tokens":100,
	  "context_window":1000,"input_modalities":["text"],"prices":{},"batch_max_output":{"tokens":300,"beta_header":"b-1"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bedrock := limitsProvider{namedProvider{name: "bedrock"}}
	s := &Service{Models: service.Models{Catalog: c}, Providers: service.NewRegistry(bedrock), OnDemand: noOnDemand{}}
	for _, tc := range []struct {
		mode    string
		records int
		want    string
	}{
		{"on_demand", 100, "max_tokens: 200 exceeds the limit of 100 for model m in on_demand mode (allowed: 1..100); batch mode allows up to 300 with the b-1 beta"},
		{"", 5, "in on_demand mode (allowed: 1..100); batch mode allows up to 300"}, // auto under the batch minimum settles on on_demand
		{"batch", 100, ""},
	} {
		req := &SubmitRequest{Model: "m", Mode: tc.mode, Records: make([]job.Input, tc.records), Params: job.Params{MaxTokens: 200}}
		m, err := s.checkModel(req, bedrock)
		if err == nil {
			err = s.resolveMode(req, bedrock, m)
		}
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("mode %q: %v, want %q", tc.mode, err, tc.want)
		}
	}
}
