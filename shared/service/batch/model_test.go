package batch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// limitsProvider adds batch limits to namedProvider.
type limitsProvider struct{ namedProvider }

func (limitsProvider) Limits() service.BatchLimits {
	return service.BatchLimits{Title: "Bedrock batch inference", MinRecords: 100, OnDemand: true}
}

// The catalog holds a submit to each model's modes, output maximum and task;
// every refusal names the field, the model and the allowed values.
func TestCheckModelAgainstTheCatalog(t *testing.T) {
	bedrock := limitsProvider{namedProvider{name: "bedrock"}}
	s := &Service{Core: &service.Core{}, OnDemand: noOnDemand{}}
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
	s := &Service{Core: &service.Core{}, OnDemand: noOnDemand{}}
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
