package model

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCatalogFactsGolden renders every row's facts (ids, profiles, lifecycle,
// sampling, limits, prices, sources) into testdata/catalog_facts.golden.txt,
// so that a change to catalog.json shows as a reviewed diff of facts.
// Regenerate with: go test ./shared/model -run TestCatalogFactsGolden -update
func TestCatalogFactsGolden(t *testing.T) {
	var b strings.Builder
	for _, m := range Default().All() {
		b.WriteString(factsRow(m))
	}
	got := b.String()
	path := filepath.Join("testdata", "catalog_facts.golden.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("catalog facts differ from %s; run go test ./shared/model -run TestCatalogFactsGolden -update and review the diff", path)
	}
}

func factsRow(m *Model) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s] %s\n", m.ID, m.Provider, m.Name)
	if len(m.Aliases) > 0 {
		fmt.Fprintf(&b, "  aliases: %s\n", strings.Join(m.Aliases, ", "))
	}
	if len(m.Profiles) > 0 {
		var ps []string
		for _, g := range sortedKeys(m.Profiles) {
			ps = append(ps, g)
		}
		fmt.Fprintf(&b, "  profiles: %s (required on demand: %v)\n", strings.Join(ps, " "), m.OnDemandRequiresProfile)
	}
	var modes []string
	for _, md := range m.Modes {
		modes = append(modes, string(md))
	}
	fmt.Fprintf(&b, "  task %s, modes %s, input %s\n", m.Task, strings.Join(modes, "+"), strings.Join(m.InputModalities, "+"))
	if m.Task == TaskText {
		fmt.Fprintf(&b, "  context %d, max output %d", m.ContextWindow, m.MaxOutputTokens)
		if bo := m.BatchMaxOutput; bo != nil {
			fmt.Fprintf(&b, ", batch max output %d with %s", bo.Tokens, bo.BetaHeader)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "  dimensions %v, max input tokens %d, texts per call %d\n", m.EmbeddingDimensions, m.MaxInputTokens, m.MaxTextsPerCall)
	}
	switch {
	case m.Sampling == nil:
		b.WriteString("  sampling: all\n")
	case len(m.Sampling) == 0:
		b.WriteString("  sampling: none\n")
	default:
		fmt.Fprintf(&b, "  sampling: %s\n", strings.Join(m.Sampling, ", "))
	}
	if m.NoSystemPrompt {
		b.WriteString("  no system prompt\n")
	}
	if d := m.Documents; d != nil {
		fmt.Fprintf(&b, "  documents: pdf exempt from cap %v, requires text %v, citations for pdf %v, max pdf bytes %d\n", d.PDFExemptFromCap, d.RequiresText, d.CitationsForPDF, d.MaxPDFBytes)
	}
	if l := m.Lifecycle; l != nil {
		fmt.Fprintf(&b, "  lifecycle: %s", l.Status)
		if l.LegacySince != "" {
			fmt.Fprintf(&b, ", legacy since %s", l.LegacySince)
		}
		if l.EndOfLife != "" {
			fmt.Fprintf(&b, ", end of life %s", l.EndOfLife)
		}
		if l.Successor != "" {
			fmt.Fprintf(&b, ", successor %s", l.Successor)
		}
		fmt.Fprintf(&b, " (%s)\n", l.Source)
	}
	p := m.Prices
	fmt.Fprintf(&b, "  prices: in %s out %s batch %s/%s cache write 5m %s 1h %s read %s batch cache %s/%s/%s\n",
		pf(p.Input), pf(p.Output), pf(p.BatchInput), pf(p.BatchOutput), pf(p.CacheWrite), pf(p.CacheWrite1h), pf(p.CacheRead),
		pf(p.BatchCacheWrite), pf(p.BatchCacheWrite1h), pf(p.BatchCacheRead))
	if lc := p.LongContext; lc != nil {
		fmt.Fprintf(&b, "  long context above %d: in %s out %s cache write 5m %s 1h %s read %s\n", lc.AboveInputTokens,
			pf(lc.Input), pf(lc.Output), pf(lc.CacheWrite), pf(lc.CacheWrite1h), pf(lc.CacheRead))
	}
	if m.RegionalPremium > 0 {
		fmt.Fprintf(&b, "  regional premium %g\n", m.RegionalPremium)
	}
	fmt.Fprintf(&b, "  facts: %s %s\n  prices as of %s: %s\n\n", orDash(m.FactsAsOf), orDash(m.FactsSource), m.PricesAsOf, m.PricesSource)
	return b.String()
}

func pf(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%g", *p)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// TestCatalogCurrentAsOf2026_12 pins what the catalog must say on
// 2026-12-01: the current models are there, the retired ones are refused
// with their date and successor, and the deprecated ones warn.
func TestCatalogCurrentAsOf2026_12(t *testing.T) {
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := Default()
	for _, id := range []string{
		"anthropic.claude-opus-4-6-v1", "anthropic.claude-opus-4-7", "anthropic.claude-opus-4-8", "anthropic.claude-opus-5",
		"anthropic.claude-opus-5-5", "anthropic.claude-sonnet-4-6", "anthropic.claude-sonnet-5", "anthropic.claude-sonnet-5-5",
		"anthropic.claude-haiku-5-5", "anthropic.claude-fable-5", "global.anthropic.claude-sonnet-4-6", "jp.anthropic.claude-sonnet-4-6",
		"au.anthropic.claude-opus-4-6-v1", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-opus-5-5",
		"claude-sonnet-4-6", "claude-sonnet-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5", "claude-fable-5-1", "claude-fable-5-2",
		"amazon.nova-2-lite-v1:0", "openai.gpt-oss-120b-1:0", "qwen.qwen3-235b-a22b-2507-v1:0", "deepseek.v3-v1:0",
		"meta.llama4-maverick-17b-instruct-v1:0", "mistral.mistral-large-3-675b-instruct", "cohere.embed-v4:0",
		"amazon.nova-2-multimodal-embeddings-v1:0",
	} {
		m, ok := c.Lookup(id)
		if !ok {
			t.Errorf("%s: not in the catalog", id)
			continue
		}
		if w, err := m.Usable(day); err != nil || w != "" {
			t.Errorf("%s: Usable = %q, %v; want a current model", id, w, err)
		}
	}
	for _, tc := range []struct {
		id, date, successor string
	}{
		{haiku35, "2026-06-19", haiku45},
		{"anthropic.claude-3-7-sonnet-20250219-v1:0", "2026-04-28", "anthropic.claude-sonnet-4-6"},
		{haiku3, "2026-09-10", haiku45},
		{sonnet35v2, "", "anthropic.claude-sonnet-4-6"},
		{"anthropic.claude-opus-4-20250514-v1:0", "2026-05-31", "anthropic.claude-opus-4-6-v1"},
		{"claude-sonnet-4-0", "2026-06-15", "claude-sonnet-4-6"},
		{"claude-opus-4-0", "2026-06-15", "claude-opus-4-8"},
		{"claude-opus-4-1", "2026-08-05", "claude-opus-4-8"},
		{"claude-sonnet-4-5", "2026-11-30", "claude-sonnet-5-5"},
	} {
		m := mustModel(t, c, tc.id)
		_, err := m.Usable(day)
		if !errors.Is(err, ErrEndOfLife) {
			t.Errorf("%s: Usable err = %v, want end of life", tc.id, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.date) || !strings.Contains(err.Error(), "use "+tc.successor+" instead") {
			t.Errorf("%s: %v; want the date %q and the successor %s", tc.id, err, tc.date, tc.successor)
		}
	}
	w, err := mustModel(t, c, "claude-opus-4-5").Usable(day)
	if err != nil || !strings.Contains(w, "legacy since 2026-11-23") || !strings.Contains(w, "2027-01-22") || !strings.Contains(w, "claude-opus-5-5") {
		t.Errorf("claude-opus-4-5: Usable = %q, %v; want a legacy warning with dates and successor", w, err)
	}
	// A legacy model past its announced end of life is refused the day after.
	if _, err := mustModel(t, c, "claude-opus-4-5").Usable(time.Date(2027, 1, 22, 0, 0, 0, 0, time.UTC)); !errors.Is(err, ErrEndOfLife) {
		t.Errorf("claude-opus-4-5 on 2027-01-22: %v, want end of life", err)
	}
	if m := mustModel(t, c, "anthropic.claude-opus-5"); m.AcceptsSampling(SamplingTemperature) || m.AcceptsSampling(SamplingTopP) || !m.AcceptsSampling(SamplingTopK) {
		t.Errorf("Opus 5 on Bedrock: sampling %v, want top_k only (recorded Bedrock answers)", m.Sampling)
	}
	if m := mustModel(t, c, "mistral.mistral-7b-instruct-v0:2"); !m.NoSystemPrompt {
		t.Error("Mistral 7B Instruct takes no system prompt in Converse")
	}
	if m := mustModel(t, c, haiku3); !slices.Contains(m.InputModalities, "document") {
		t.Error("Claude 3 Haiku reads documents through Converse")
	}
}

func TestLifecycleValidation(t *testing.T) {
	base := `{"prices_as_of":"2026-12-01","models":[
	 {"id":"a","provider":"anthropic","family":"claude","name":"A","task":"text","modes":["batch"],"max_output_tokens":10,"context_window":100,"input_modalities":["text"],"prices":{},"lifecycle":%s},
	 {"id":"b","provider":"anthropic","family":"claude","name":"B","task":"text","modes":["batch"],"max_output_tokens":10,"context_window":100,"input_modalities":["text"],"prices":{}%s}]}`
	for _, tc := range []struct {
		name, lifecycle, b, want string
	}{
		{"status", `{"status":"retired"}`, ``, "lifecycle.status"},
		{"date", `{"status":"legacy","end_of_life":"2026-13-01"}`, ``, "lifecycle.end_of_life"},
		{"order", `{"status":"legacy","legacy_since":"2026-10-01","end_of_life":"2026-09-01"}`, ``, "before legacy_since"},
		{"active with dates", `{"status":"active","end_of_life":"2026-09-01"}`, ``, "set status legacy"},
		{"unknown successor", `{"status":"end_of_life","successor":"zzz"}`, ``, `"zzz" is not a model id`},
		{"self", `{"status":"end_of_life","successor":"a"}`, ``, "the model itself"},
		{"successor at end of life", `{"status":"end_of_life","successor":"b"}`, `,"lifecycle":{"status":"end_of_life"}`, "itself at end of life"},
		{"sampling", `{"status":"active"}`, `,"sampling":["seed"]`, "sampling[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(fmt.Sprintf(base, tc.lifecycle, tc.b)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte(fmt.Sprintf(base, `{"status":"end_of_life","end_of_life":"2026-06-15","successor":"b"}`, ``))); err != nil {
		t.Errorf("valid lifecycle refused: %v", err)
	}
	// An operator override that retires a model others name as successor is
	// refused: a refusal would send users in a circle.
	if _, err := Default().Merge([]byte(`{"models":[{"id":"` + haiku45 + `","lifecycle":{"status":"end_of_life"}}]}`)); err == nil || !strings.Contains(err.Error(), "itself at end of life") {
		t.Errorf("Merge retiring a successor: %v, want a refusal", err)
	}
	// An empty sampling list (none accepted) survives an operator merge.
	c, err := Parse([]byte(fmt.Sprintf(base, `{"status":"active"}`, `,"sampling":[]`)))
	if err != nil {
		t.Fatal(err)
	}
	c, err = c.Merge([]byte(`{"models":[{"id":"b","name":"B2"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := mustModel(t, c, "b"); m.Sampling == nil || m.AcceptsSampling(SamplingTemperature) {
		t.Errorf("after merge, sampling = %#v; want an empty list (none)", m.Sampling)
	}
}
