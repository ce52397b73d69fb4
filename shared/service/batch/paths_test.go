package batch

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// onDemandTaker stands for a deployment that runs jobs on demand; pricePaths
// only asks whether there is one.
type onDemandTaker struct{ onDemandSubmitter }

// The paths a dry run prices, per model and deployment, against
// testdata/paths.golden.json: a Bedrock Claude job lists the same model's
// Anthropic batch cost as information (with how to run it there, or that
// this deployment does not offer it); not when the Anthropic API has no
// such model, has retired it or has no batch price for it. An Anthropic job
// lists its Message Batches path. Auto never picks another provider.
func TestPricePathsGolden(t *testing.T) {
	cat := model.Default()
	day := func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	withAnthropic := service.NewRegistry(namedProvider{name: "bedrock"}, namedProvider{name: "anthropic", models: []string{"claude-haiku-4-5", "claude-opus-4-6"}})
	bedrockOnly := service.NewRegistry(namedProvider{name: "bedrock"})
	bedrockLim := service.BatchLimits{Title: "Bedrock batch inference", MinRecords: 100}
	anthropicLim := service.BatchLimits{Title: "Anthropic Message Batches", MinRecords: 1}
	cases := []struct {
		name    string
		model   string
		records int
		reg     *service.Registry
		lim     service.BatchLimits
		counted bool
	}{
		{"bedrock haiku 4.5 with anthropic offered", "anthropic.claude-haiku-4-5-20251001-v1:0", 5000, withAnthropic, bedrockLim, true},
		{"bedrock haiku 4.5 without anthropic", "anthropic.claude-haiku-4-5-20251001-v1:0", 5000, bedrockOnly, bedrockLim, false},
		{"bedrock haiku 4.5 under the batch minimum", "anthropic.claude-haiku-4-5-20251001-v1:0", 60, withAnthropic, bedrockLim, false},
		{"bedrock claude 3 haiku: no such model on the anthropic api", "anthropic.claude-3-haiku-20240307-v1:0", 5000, withAnthropic, bedrockLim, false},
		{"bedrock sonnet 4: retired on the anthropic api", "anthropic.claude-sonnet-4-20250514-v1:0", 5000, withAnthropic, bedrockLim, false},
		{"bedrock opus 4.6: unpriced on bedrock, priced on anthropic", "anthropic.claude-opus-4-6-v1", 5000, withAnthropic, bedrockLim, false},
		{"anthropic haiku 4.5", "claude-haiku-4-5", 5000, withAnthropic, anthropicLim, true},
	}
	got := map[string]any{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := cat.Lookup(tc.model)
			if !ok {
				t.Fatalf("%s not in the catalog", tc.model)
			}
			s := &Service{Models: service.Models{Catalog: cat}, Providers: tc.reg, Clock: day, OnDemand: onDemandTaker{}}
			out := &DryRunResult{Model: m.ID, Provider: m.Provider, Records: tc.records,
				EstimatedInputTokens: int64(tc.records) * 120, MaxOutputTokens: int64(tc.records) * 500}
			if tc.counted {
				out.Counted = &TokenCount{Estimate: int64(tc.records) * 100}
			}
			s.pricePaths(out, m, tc.lim, tc.lim == bedrockLim) // Bedrock's models run on demand here, Anthropic's do not
			for _, p := range out.Paths {
				if p.InfoOnly && p.Path == out.Auto {
					t.Errorf("auto picked the information-only path %s", p.Path)
				}
			}
			got[tc.name] = map[string]any{"paths": out.Paths, "auto": out.Auto, "auto_why": out.AutoWhy}
		})
	}
	b, _ := json.MarshalIndent(got, "", "  ")
	golden := filepath.Join("testdata", "paths.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if string(want) != string(b)+"\n" {
		t.Errorf("paths differ from %s (run with -update and review the diff):\n%s", golden, b)
	}
}
