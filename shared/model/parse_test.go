package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validEntry is a complete, valid Bedrock text model.
func validEntry() map[string]any {
	return map[string]any{
		"id": "acme.widget-v1:0", "provider": "bedrock", "family": "widget", "name": "Widget",
		"task": "text", "modes": []any{"batch", "on_demand"},
		"profiles":                   map[string]any{"us": "us.acme.widget-v1:0"},
		"on_demand_requires_profile": true,
		"max_output_tokens":          4096, "context_window": 32000,
		"input_modalities": []any{"text"},
		"caching":          map[string]any{"min_tokens": 1024, "max_checkpoints": 4, "ttls": []any{"5m"}},
		"prices":           map[string]any{"input": 1.0, "output": 2.0, "batch_input": 0.5, "batch_output": 1.0},
	}
}

func doc(t *testing.T, entries ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"prices_as_of": "2026-11-30", "prices_source": "https://example.test/prices", "models": entries})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseValidEntry(t *testing.T) {
	c, err := Parse(doc(t, validEntry()))
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, c, "us.acme.widget-v1:0")
	if m.PricesAsOf != "2026-11-30" || m.PricesSource != "https://example.test/prices" {
		t.Errorf("catalog-level as-of/source not applied: %q %q", m.PricesAsOf, m.PricesSource)
	}
}

func TestParseRefusesBadEntries(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		want   string
	}{
		{"unknown field", func(m map[string]any) { m["colour"] = "red" }, `models[0] (id "acme.widget-v1:0"): json: unknown field "colour"`},
		{"unknown price", func(m map[string]any) { m["prices"].(map[string]any)["per_image"] = 1.0 }, `unknown field "per_image"`},
		{"no id", func(m map[string]any) { delete(m, "id") }, `models[0]: id: "" must be a non-empty id`},
		{"bad provider", func(m map[string]any) { m["provider"] = "openai" }, `provider: "openai" must be "bedrock" or "anthropic"`},
		{"no family", func(m map[string]any) { delete(m, "family") }, "family: required"},
		{"no name", func(m map[string]any) { delete(m, "name") }, "name: required"},
		{"bad task", func(m map[string]any) { m["task"] = "image" }, `task: "image" must be "text" or "embedding"`},
		{"no modes", func(m map[string]any) { m["modes"] = []any{} }, "modes: at least one"},
		{"bad mode", func(m map[string]any) { m["modes"] = []any{"batch", "stream"} }, `modes[1]: "stream" must be`},
		{"dup mode", func(m map[string]any) { m["modes"] = []any{"batch", "batch"} }, `modes[1]: "batch" is listed twice`},
		{"profile id mismatch", func(m map[string]any) { m["profiles"] = map[string]any{"eu": "us.acme.widget-v1:0"} }, `profiles.eu: "us.acme.widget-v1:0" must be "eu.acme.widget-v1:0"`},
		{"bad geography", func(m map[string]any) { m["profiles"] = map[string]any{"US": "US.acme.widget-v1:0"} }, `profiles: geography "US"`},
		{"requires profile without one", func(m map[string]any) { delete(m, "profiles") }, "on_demand_requires_profile: true but the model has no profiles"},
		{"requires profile without on_demand", func(m map[string]any) { m["modes"] = []any{"batch"} }, "on_demand_requires_profile: true but modes lacks on_demand"},
		{"anthropic profiles", func(m map[string]any) { m["provider"] = "anthropic" }, "profiles: Anthropic API models have no inference profiles"},
		{"max output zero", func(m map[string]any) { m["max_output_tokens"] = 0 }, "max_output_tokens: 0 must be > 0"},
		{"max output over context", func(m map[string]any) { m["max_output_tokens"] = 64000 }, "max_output_tokens: 64000 exceeds context_window 32000"},
		{"no context", func(m map[string]any) { delete(m, "context_window") }, "context_window: 0 must be > 0"},
		{"no modalities", func(m map[string]any) { m["input_modalities"] = []any{} }, "input_modalities: at least"},
		{"bad modality", func(m map[string]any) { m["input_modalities"] = []any{"text", "audio"} }, `input_modalities[1]: "audio" must be one of`},
		{"negative price", func(m map[string]any) { m["prices"].(map[string]any)["batch_output"] = -0.5 }, "prices.batch_output: -0.5 must be >= 0"},
		{"caching min tokens", func(m map[string]any) { m["caching"].(map[string]any)["min_tokens"] = 0 }, "caching.min_tokens: 0 must be > 0"},
		{"caching checkpoints", func(m map[string]any) { m["caching"].(map[string]any)["max_checkpoints"] = -1 }, "caching.max_checkpoints: -1 must be > 0"},
		{"caching ttl", func(m map[string]any) { m["caching"].(map[string]any)["ttls"] = []any{"24h"} }, `caching.ttls[0]: "24h" must be one of 5m, 1h`},
		{"text model with dims", func(m map[string]any) { m["embedding_dimensions"] = []any{1024} }, "embedding_dimensions: only embedding models"},
		{"embedding without dims", func(m map[string]any) {
			m["task"] = "embedding"
			delete(m, "max_output_tokens")
		}, "embedding_dimensions: required for an embedding model"},
		{"embedding zero dim", func(m map[string]any) {
			m["task"] = "embedding"
			delete(m, "max_output_tokens")
			m["embedding_dimensions"] = []any{256, 0}
		}, "embedding_dimensions[1]: 0 must be > 0"},
		{"negative texts per call", func(m map[string]any) { m["max_texts_per_call"] = -1 }, "max_texts_per_call: -1 must be >= 0"},
		{"bad date", func(m map[string]any) { m["prices_as_of"] = "30/11/2026" }, `prices_as_of: "30/11/2026" is not a YYYY-MM-DD date`},
		{"wrong type", func(m map[string]any) { m["max_output_tokens"] = "lots" }, "max_output_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := validEntry()
			tt.mutate(e)
			_, err := Parse(doc(t, e))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestParseRefusesClashingIDs(t *testing.T) {
	a, b := validEntry(), validEntry()
	b["id"] = "acme.gadget-v1:0"
	b["profiles"] = map[string]any{"us": "us.acme.gadget-v1:0"}
	b["aliases"] = []any{"us.acme.widget-v1:0"} // another model's profile id
	_, err := Parse(doc(t, a, b))
	if err == nil || !strings.Contains(err.Error(), `model "acme.gadget-v1:0": id "us.acme.widget-v1:0" is already used by model "acme.widget-v1:0"`) {
		t.Fatalf("Parse = %v", err)
	}
	a["aliases"] = []any{"acme.widget-v1:0"}
	if _, err := Parse(doc(t, a)); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("Parse(self alias) = %v", err)
	}
}

func TestParseRefusesBadDocuments(t *testing.T) {
	for in, want := range map[string]string{
		`{"models": [], "extra": 1}`:             `unknown field "extra"`,
		`{"models": [] } trailing`:               "unexpected data after the JSON value",
		`{"models": [], "remove": ["x"]}`:        `"remove" belongs in an override document`,
		`{"prices_as_of": "soon", "models": []}`: `prices_as_of: "soon"`,
		`not json`:                               "catalog:",
	} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", in, err, want)
		}
	}
}

func TestMerge(t *testing.T) {
	base := Default()
	override := `{
	  "prices_as_of": "2027-01-15",
	  "prices_source": "https://ops.example.test/negotiated",
	  "models": [
	    {"id": "` + sonnet45 + `", "prices": {"input": 2.5}, "caching": null},
	    {"id": "acme.widget-v1:0", "provider": "bedrock", "family": "widget", "name": "Widget", "task": "text",
	     "modes": ["batch"], "max_output_tokens": 4096, "context_window": 32000, "input_modalities": ["text"],
	     "prices": {"batch_input": 0.5, "batch_output": 1}}
	  ],
	  "remove": ["` + cohereEn + `"]
	}`
	c, err := base.Merge([]byte(override))
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, c, "us."+sonnet45)
	if *m.Prices.Input != 2.5 || *m.Prices.Output != 15 || *m.Prices.BatchInput != 1.5 {
		t.Errorf("prices after merge: input %v output %v batch_input %v; want 2.5 15 1.5", *m.Prices.Input, *m.Prices.Output, *m.Prices.BatchInput)
	}
	if m.Caching != nil {
		t.Error("caching: null did not delete the field")
	}
	if m.PricesAsOf != "2027-01-15" || m.PricesSource != "https://ops.example.test/negotiated" {
		t.Errorf("override as-of/source not applied: %q %q", m.PricesAsOf, m.PricesSource)
	}
	if len(m.Profiles) != 5 || m.MaxOutputTokens != 64000 {
		t.Error("fields the override did not set changed")
	}
	if w := mustModel(t, c, "acme.widget-v1:0"); w.Supports(ModeOnDemand) || w.PricesAsOf != "2027-01-15" {
		t.Errorf("added model: %+v", w)
	}
	if _, ok := c.Lookup(cohereEn); ok {
		t.Error("removed model still present")
	}
	if len(c.All()) != len(base.All()) {
		t.Errorf("%d models after +1 -1, want %d", len(c.All()), len(base.All()))
	}
	// The base catalog is untouched.
	if b := mustModel(t, base, sonnet45); *b.Prices.Input != 3 || b.Caching == nil {
		t.Error("Merge changed the catalog it was called on")
	}
	if _, ok := base.Lookup(cohereEn); !ok {
		t.Error("Merge removed from the catalog it was called on")
	}
}

func TestMergeErrors(t *testing.T) {
	tests := []struct {
		name, override, want string
	}{
		{"not json", `{"models": [`, "override:"},
		{"unknown top-level field", `{"model": []}`, `unknown field "model"`},
		{"unknown model field", `{"models": [{"id": "` + sonnet45 + `", "price": {"input": 1}}]}`, `models[0] (id "` + sonnet45 + `"): json: unknown field "price"`},
		{"no id", `{"models": [{"prices": {"input": 1}}]}`, "models[0]: id: required"},
		{"incomplete new model", `{"models": [{"id": "acme.new", "provider": "bedrock"}]}`, `models[0] (id "acme.new"): family: required`},
		{"negative price", `{"models": [{"id": "` + haiku45 + `", "prices": {"cache_read": -1}}]}`, "prices.cache_read: -1 must be >= 0"},
		{"delete required", `{"models": [{"id": "` + haiku45 + `", "task": null}]}`, `task: "" must be`},
		{"remove unknown", `{"remove": ["nope"]}`, `remove[0]: "nope" is not a model id`},
		{"clash", `{"models": [{"id": "acme.x", "aliases": ["us.` + haiku45 + `"], "provider": "anthropic", "family": "f", "name": "n", "task": "text", "modes": ["batch"], "max_output_tokens": 1, "context_window": 1, "input_modalities": ["text"], "prices": {}}]}`, `is already used by model`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Default().Merge([]byte(tt.override)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Merge = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "models.json")
	if err := os.WriteFile(file, []byte(`{"models": [{"id": "`+haiku45+`", "prices": {"input": 0.9, "output": 4.5}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	c, err := FromEnv(env(nil))
	if err != nil || c != Default() {
		t.Fatalf("FromEnv(no vars) = %p, %v; want Default()", c, err)
	}

	// File first, then inline JSON on top.
	c, err = FromEnv(env(map[string]string{
		EnvModelsFile: file,
		EnvModelsJSON: `{"models": [{"id": "` + haiku45 + `", "prices": {"input": 0.8}}]}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, c, haiku45)
	if *m.Prices.Input != 0.8 || *m.Prices.Output != 4.5 {
		t.Errorf("input %v output %v, want 0.8 (inline) and 4.5 (file)", *m.Prices.Input, *m.Prices.Output)
	}

	for name, tt := range map[string]struct {
		vars map[string]string
		want string
	}{
		"bad inline JSON":  {map[string]string{EnvModelsJSON: `{"models": [{"id": `}, EnvModelsJSON + ": override:"},
		"invalid inline":   {map[string]string{EnvModelsJSON: `{"models": [{"id": "` + haiku45 + `", "modes": []}]}`}, EnvModelsJSON + ": override: models[0]"},
		"missing file":     {map[string]string{EnvModelsFile: filepath.Join(dir, "nope.json")}, EnvModelsFile + ": open "},
		"bad file content": {map[string]string{EnvModelsFile: writeFile(t, dir, `{"remove": ["nope"]}`)}, EnvModelsFile + " ("},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := FromEnv(env(tt.vars)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("FromEnv = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func writeFile(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
