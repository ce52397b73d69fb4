package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// One job per model family through the MCP tools in make dev, against the
// strict simulators: each family's own body and output shape, token counts
// (from the lines, or the manifest) and a cost equal to the catalog's prices
// applied to those tokens. On-demand jobs go through the inference profile the
// catalog names (the runtime simulator refuses the base ids, as Bedrock does).
func TestFamiliesEndToEnd(t *testing.T) {
	native := func(n int, body func(i int) string) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"id": fmt.Sprintf("rec %d / family test", i), "model_input": rawJSON(body(i))}
		}
		return out
	}
	cases := []struct {
		name, model, mode string
		records           []map[string]any
		wantOutput        bool // text answers (not embeddings)
	}{
		{"claude batch", haiku, "batch", records(120), true},
		{"nova batch, native body", "amazon.nova-lite-v1:0", "batch", native(100, func(i int) string {
			return fmt.Sprintf(`{"schemaVersion":"messages-v1","messages":[{"role":"user","content":[{"text":"Describe item %d"}]}],"inferenceConfig":{"maxTokens":200}}`, i)
		}), true},
		{"llama batch, native body", "meta.llama3-3-70b-instruct-v1:0", "batch", native(100, func(i int) string {
			return fmt.Sprintf(`{"prompt":"<|begin_of_text|>Describe item %d","max_gen_len":200}`, i)
		}), true},
		{"titan embeddings batch, native body", "amazon.titan-embed-text-v2:0", "batch", native(100, func(i int) string {
			return fmt.Sprintf(`{"inputText":"document number %d about batch inference","dimensions":256}`, i)
		}), false},
		{"nova on demand through its profile", "amazon.nova-lite-v1:0", "on_demand", records(12), true},
		{"claude haiku 4.5 on demand through its profile", "anthropic.claude-haiku-4-5-20251001-v1:0", "on_demand", records(12), true},
		{"llama on demand through its profile", "meta.llama3-3-70b-instruct-v1:0", "", records(12), true},
	}
	s := newSuite(t)
	cs := s.client("alice")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"model": tc.model, "records": tc.records, "max_tokens": 200}
			if tc.mode != "" {
				args["mode"] = tc.mode
			}
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
			var j mcpserver.JobView
			for i := 0; i < 40; i++ {
				s.settle()
				if j = call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); j.Terminal {
					break
				}
				s.l.Sim.Step(context.Background())
			}
			if !j.Terminal || j.Succeeded == 0 || j.Succeeded+j.Failed != len(tc.records) || j.BadLines != 0 {
				t.Fatalf("job = %+v", j)
			}
			wantMode := tc.mode
			if wantMode == "" {
				wantMode = "on_demand" // 12 records: under the batch minimum
			}
			if j.Mode != wantMode {
				t.Errorf("mode %s, want %s", j.Mode, wantMode)
			}
			if j.InputTokens == 0 || (tc.wantOutput && j.OutputTokens == 0) {
				t.Errorf("tokens not counted: in %d out %d", j.InputTokens, j.OutputTokens)
			}
			m, _ := model.Default().Lookup(tc.model)
			basis := model.BasisBatch
			if j.Mode == "on_demand" {
				basis = model.BasisOnDemand
			}
			want := m.Cost(model.Usage{Input: j.InputTokens, Output: j.OutputTokens, CacheRead: j.CacheRead, CacheWrite: j.CacheWrite}, basis)
			if j.Cost == nil || j.CostUSD <= 0 || math.Abs(j.CostUSD-want.Total) > 1e-9 || j.Cost.Basis != string(basis) || j.Cost.AsOf == "" {
				t.Errorf("cost_usd %v (%+v), want %v on basis %s", j.CostUSD, j.Cost, want.Total, basis)
			}
			recs := allResults(t, cs, h.JobID, "succeeded", 100)
			if len(recs) != j.Succeeded {
				t.Fatalf("%d succeeded results, job says %d", len(recs), j.Succeeded)
			}
			for _, r := range recs[:3] {
				if !tc.wantOutput && r.Dimensions == 256 {
					continue // get_job_results shows an embedding's dimensions (its vector on request)
				}
				if r.Output == "" || (tc.wantOutput && r.Output[0] == '{') {
					t.Errorf("record %q output %.80q: want the model's text", r.ID, r.Output)
				}
			}
			// No record met Bedrock's refusal of a base id that needs an
			// inference profile: the on-demand path used the catalog's profile.
			for _, r := range allResults(t, cs, h.JobID, "failed", 100) {
				if strings.Contains(r.ErrorMessage, "on-demand throughput") {
					t.Errorf("record %q: %s", r.ID, r.ErrorMessage)
				}
			}
		})
	}
}

func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }
