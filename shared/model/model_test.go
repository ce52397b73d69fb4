package model

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	sonnet45   = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	haiku45    = "anthropic.claude-haiku-4-5-20251001-v1:0"
	haiku35    = "anthropic.claude-3-5-haiku-20241022-v1:0"
	sonnet35v2 = "anthropic.claude-3-5-sonnet-20241022-v2:0"
	haiku3     = "anthropic.claude-3-haiku-20240307-v1:0"
	sonnet4    = "anthropic.claude-sonnet-4-20250514-v1:0"
	titanV2    = "amazon.titan-embed-text-v2:0"
	cohereEn   = "cohere.embed-english-v3"
)

func mustModel(t *testing.T, c *Catalog, id string) *Model {
	t.Helper()
	m, ok := c.Lookup(id)
	if !ok {
		t.Fatalf("model %q not in catalog", id)
	}
	return m
}

func TestEmbeddedCatalogParsesAndValidates(t *testing.T) {
	c, err := Parse(embedded)
	if err != nil {
		t.Fatalf("Parse(embedded): %v", err)
	}
	if len(c.All()) < 25 {
		t.Fatalf("embedded catalog has %d models, want the full set", len(c.All()))
	}
	for _, m := range c.All() {
		if err := m.validate(); err != nil {
			t.Errorf("%s: %v", m.ID, err)
		}
		if m.PricesAsOf == "" || m.PricesSource == "" {
			t.Errorf("%s: prices_as_of/prices_source not set", m.ID)
		}
	}
	// The ids the product defaults to must stay in the catalog.
	for _, id := range []string{haiku45, sonnet45, "anthropic.claude-sonnet-4-6",
		"us." + haiku45, "us." + sonnet45, "global." + haiku45, "global.anthropic.claude-sonnet-4-6",
		"amazon.nova-lite-v1:0", "amazon.nova-2-lite-v1:0", "meta.llama3-3-70b-instruct-v1:0", titanV2,
		"claude-haiku-4-5", "claude-sonnet-4-6"} {
		if _, ok := Default().Lookup(id); !ok {
			t.Errorf("product default %q missing from the catalog", id)
		}
	}
	if Default() != Default() {
		t.Error("Default() is not shared")
	}
}

func TestAllIsOrderedByProviderThenID(t *testing.T) {
	all := Default().All()
	if !slices.IsSortedFunc(all, func(a, b *Model) int {
		if c := strings.Compare(a.Provider, b.Provider); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	}) {
		t.Fatal("All() is not ordered by provider, then id")
	}
	if all[0].Provider != ProviderAnthropic || all[len(all)-1].Provider != ProviderBedrock {
		t.Fatalf("first %s, last %s", all[0].Provider, all[len(all)-1].Provider)
	}
}

func TestCatalogFacts(t *testing.T) {
	tests := []struct {
		id              string
		task            Task
		modes           []Mode
		maxOut          int
		profiles        []string
		requiresProfile bool
		dims            []int
		textsPerCall    int
	}{
		{sonnet45, TaskText, []Mode{ModeBatch, ModeOnDemand}, 64000, []string{"au", "eu", "global", "jp", "us"}, true, nil, 0},
		{haiku45, TaskText, []Mode{ModeBatch, ModeOnDemand}, 64000, []string{"au", "eu", "global", "jp", "us"}, true, nil, 0},
		{haiku35, TaskText, []Mode{ModeBatch, ModeOnDemand}, 8192, []string{"us"}, true, nil, 0},
		{sonnet35v2, TaskText, []Mode{ModeBatch, ModeOnDemand}, 8192, []string{"apac", "us"}, true, nil, 0},
		{haiku3, TaskText, []Mode{ModeBatch, ModeOnDemand}, 4096, []string{"apac", "eu", "us"}, false, nil, 0},
		{"amazon.nova-pro-v1:0", TaskText, []Mode{ModeBatch, ModeOnDemand}, 5000, []string{"apac", "eu", "us"}, true, nil, 0},
		{"meta.llama3-2-1b-instruct-v1:0", TaskText, []Mode{ModeBatch, ModeOnDemand}, 2048, []string{"eu", "us"}, true, nil, 0},
		{"mistral.mistral-7b-instruct-v0:2", TaskText, []Mode{ModeOnDemand}, 8192, nil, false, nil, 0},
		{"claude-sonnet-4-5", TaskText, []Mode{ModeBatch}, 64000, nil, false, nil, 0},
		{titanV2, TaskEmbedding, []Mode{ModeBatch, ModeOnDemand}, 0, nil, false, []int{256, 512, 1024}, 1},
		{cohereEn, TaskEmbedding, []Mode{ModeOnDemand}, 0, nil, false, []int{1024}, 96},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			m := mustModel(t, Default(), tt.id)
			if m.Task != tt.task || !slices.Equal(m.Modes, tt.modes) || m.MaxOutputTokens != tt.maxOut {
				t.Errorf("task %s modes %v max_output_tokens %d; want %s %v %d", m.Task, m.Modes, m.MaxOutputTokens, tt.task, tt.modes, tt.maxOut)
			}
			if got := sortedKeys(m.Profiles); !slices.Equal(got, tt.profiles) && len(got)+len(tt.profiles) > 0 {
				t.Errorf("profiles %v, want %v", got, tt.profiles)
			}
			if m.OnDemandRequiresProfile != tt.requiresProfile {
				t.Errorf("on_demand_requires_profile %v, want %v", m.OnDemandRequiresProfile, tt.requiresProfile)
			}
			if !slices.Equal(m.EmbeddingDimensions, tt.dims) || m.MaxTextsPerCall != tt.textsPerCall {
				t.Errorf("dims %v texts/call %d, want %v %d", m.EmbeddingDimensions, m.MaxTextsPerCall, tt.dims, tt.textsPerCall)
			}
			if m.Supports(ModeBatch) != slices.Contains(tt.modes, ModeBatch) {
				t.Errorf("Supports(batch) = %v", m.Supports(ModeBatch))
			}
		})
	}
}

func TestLookup(t *testing.T) {
	c := Default()
	tests := []struct {
		in   string
		want string // "" = not found
	}{
		{sonnet45, sonnet45},
		{"us." + sonnet45, sonnet45},
		{"global." + sonnet45, sonnet45},
		{"jp." + haiku45, haiku45},
		{"apac." + haiku3, haiku3},
		{"claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"}, // alias
		{"claude-sonnet-4-20250514", "claude-sonnet-4-0"},
		{"arn:aws:bedrock:us-east-1::foundation-model/" + haiku35, haiku35},
		{"arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu." + sonnet45, sonnet45},
		{"arn:aws-us-gov:bedrock:us-gov-west-1::foundation-model/" + titanV2, titanV2},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6", ""},
		{"arn:aws:bedrock:us-east-1::foundation-model/", ""},
		{"arn:aws:s3:::bucket/" + sonnet45, ""},
		{"eu." + haiku35, ""}, // 3.5 Haiku has no EU profile
		{"anthropic.claude-nope", ""},
		{"", ""},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.in)
		got := ""
		if ok {
			got = m.ID
		}
		if got != tt.want {
			t.Errorf("Lookup(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	c := Default()
	for in, want := range map[string]string{
		"":                      "model: required",
		"anthropic.claude-nope": `"anthropic.claude-nope" is not in the catalog`,
		"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc": "application inference profile ARN does not say which model",
	} {
		if _, err := c.Resolve(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %v, want error containing %q", in, err, want)
		}
	}
	// An operator can make an application inference profile resolvable.
	arn := "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc"
	c2, err := c.Merge([]byte(`{"models":[{"id":"` + haiku45 + `","aliases":["` + arn + `"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := c2.Resolve(arn); err != nil || m.ID != haiku45 {
		t.Fatalf("Resolve(app profile alias) = %v, %v", m, err)
	}
}

func TestGeography(t *testing.T) {
	tests := []struct {
		region string
		geo    string
		geos   []string
	}{
		{"us-east-1", "us", []string{"us"}},
		{"us-west-2", "us", []string{"us"}},
		{"ca-central-1", "us", []string{"ca", "us"}},
		{"us-gov-west-1", "us-gov", []string{"us-gov"}},
		{"eu-west-1", "eu", []string{"eu"}},
		{"eu-central-2", "eu", []string{"eu"}},
		{"ap-northeast-1", "apac", []string{"jp", "apac"}},
		{"ap-southeast-2", "apac", []string{"au", "apac"}},
		{"ap-south-1", "apac", []string{"apac"}},
		{"sa-east-1", "", nil},
		{"me-central-1", "", nil},
	}
	for _, tt := range tests {
		if got := Geography(tt.region); got != tt.geo {
			t.Errorf("Geography(%s) = %q, want %q", tt.region, got, tt.geo)
		}
		if got := Geographies(tt.region); !slices.Equal(got, tt.geos) {
			t.Errorf("Geographies(%s) = %v, want %v", tt.region, got, tt.geos)
		}
	}
}

func TestOnDemandID(t *testing.T) {
	c := Default()
	tests := []struct {
		model, region, want string
	}{
		{sonnet45, "us-east-1", "us." + sonnet45},
		{sonnet45, "eu-west-1", "eu." + sonnet45},
		{sonnet45, "ap-northeast-1", "jp." + sonnet45},
		{sonnet45, "ap-southeast-2", "au." + sonnet45},
		{sonnet45, "ap-south-1", "global." + sonnet45}, // no apac profile: global
		{sonnet45, "sa-east-1", "global." + sonnet45},  // no geography: global
		{sonnet45, "ca-central-1", "us." + sonnet45},
		{sonnet4, "ap-northeast-1", "apac." + sonnet4}, // no jp profile: apac
		{haiku35, "us-west-2", "us." + haiku35},
		{haiku35, "eu-west-1", haiku35}, // no eu and no global profile: base id
		{haiku3, "us-east-1", haiku3},   // served on demand by base id
		{"mistral.mistral-7b-instruct-v0:2", "us-west-2", "mistral.mistral-7b-instruct-v0:2"},
		{"claude-haiku-4-5", "us-east-1", "claude-haiku-4-5"},
	}
	for _, tt := range tests {
		if got := mustModel(t, c, tt.model).OnDemandID(tt.region); got != tt.want {
			t.Errorf("%s.OnDemandID(%s) = %q, want %q", tt.model, tt.region, got, tt.want)
		}
	}
}

func TestCheckMaxTokens(t *testing.T) {
	c := Default()
	tests := []struct {
		model string
		n     int
		want  string // "" = ok
	}{
		{sonnet45, 64000, ""},
		{sonnet45, 1, ""},
		{sonnet45, 64001, "max_tokens: 64001 exceeds the limit of 64000 for model " + sonnet45},
		{haiku35, 8193, "exceeds the limit of 8192 for model " + haiku35},
		{haiku3, 0, "max_tokens: 0 is below 1"},
		{titanV2, 10, "max_tokens: model " + titanV2 + " is an embedding model"},
		// Batch jobs reach the 300K-output beta's limit where the catalog has one.
		{"claude-haiku-5-5", 300000, ""},
		{"claude-haiku-5-5", 300001, "max_tokens: 300001 exceeds the batch limit of 300000 for model claude-haiku-5-5 (allowed: 1..300000; above its normal limit of 128000 the output-300k-2026-03-24 beta is sent for you)"},
		{"claude-sonnet-5", 300000, ""}, // the beta covers Sonnet 5 too (its model page, 2026-12-03)
		{"claude-fable-5-1", 128001, "max_tokens: 128001 exceeds the limit of 128000 for model claude-fable-5-1"},
	}
	for _, tt := range tests {
		err := mustModel(t, c, tt.model).CheckMaxTokens(tt.n, ModeBatch)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s.CheckMaxTokens(%d) = %v, want %q", tt.model, tt.n, err, tt.want)
		}
	}
}

// On demand keeps the normal limit, and says what batch mode allows; the
// beta header is asked for only above the normal limit.
func TestMaxTokensBatchBeta(t *testing.T) {
	m := &Model{ID: "x", Task: TaskText, Modes: []Mode{ModeBatch, ModeOnDemand}, MaxOutputTokens: 128000,
		BatchMaxOutput: &BatchMaxOutput{Tokens: 300000, BetaHeader: "output-300k-2026-03-24"}}
	tests := []struct {
		mode     Mode
		n        int
		want     string // "" = ok
		wantBeta string
	}{
		{ModeBatch, 128000, "", ""},
		{ModeBatch, 128001, "", "output-300k-2026-03-24"},
		{"", 300000, "", "output-300k-2026-03-24"},
		{ModeOnDemand, 128000, "", ""},
		{ModeOnDemand, 128001, "max_tokens: 128001 exceeds the limit of 128000 for model x in on_demand mode (allowed: 1..128000); batch mode allows up to 300000 with the output-300k-2026-03-24 beta", "output-300k-2026-03-24"},
	}
	for _, tt := range tests {
		err := m.CheckMaxTokens(tt.n, tt.mode)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != tt.want) {
			t.Errorf("CheckMaxTokens(%d, %q) = %v, want %q", tt.n, tt.mode, err, tt.want)
		}
		if got := m.BatchBeta(tt.n); got != tt.wantBeta {
			t.Errorf("BatchBeta(%d) = %q, want %q", tt.n, got, tt.wantBeta)
		}
	}
}

func TestIAMResources(t *testing.T) {
	c := Default()
	tests := []struct {
		model, region string
		fms, ips      []string
	}{
		{sonnet45, "us-east-1",
			[]string{"arn:aws:bedrock:us-east-1::foundation-model/" + sonnet45, "arn:aws:bedrock:*::foundation-model/" + sonnet45},
			[]string{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us." + sonnet45, "arn:aws:bedrock:us-east-1:123456789012:inference-profile/global." + sonnet45}},
		{haiku45, "ap-northeast-1",
			[]string{"arn:aws:bedrock:ap-northeast-1::foundation-model/" + haiku45, "arn:aws:bedrock:*::foundation-model/" + haiku45},
			[]string{"arn:aws:bedrock:ap-northeast-1:123456789012:inference-profile/jp." + haiku45, "arn:aws:bedrock:ap-northeast-1:123456789012:inference-profile/global." + haiku45}},
		{haiku35, "eu-west-1", // no profile usable from the EU
			[]string{"arn:aws:bedrock:eu-west-1::foundation-model/" + haiku35}, nil},
		{titanV2, "us-gov-west-1",
			[]string{"arn:aws-us-gov:bedrock:us-gov-west-1::foundation-model/" + titanV2}, nil},
		{"claude-sonnet-4-5", "us-east-1", nil, nil},
	}
	for _, tt := range tests {
		fms, ips := mustModel(t, c, tt.model).IAMResources(tt.region, "123456789012")
		if !slices.Equal(fms, tt.fms) || !slices.Equal(ips, tt.ips) {
			t.Errorf("%s in %s:\n got %v\n     %v\nwant %v\n     %v", tt.model, tt.region, fms, ips, tt.fms, tt.ips)
		}
	}
}

func TestFilter(t *testing.T) {
	c := Default()
	f := c.Filter(ProviderBedrock, []string{"us." + haiku45, sonnet45, "claude-haiku-4-5", "nope"})
	var ids []string
	for _, m := range f.All() {
		ids = append(ids, m.ID)
	}
	if want := []string{haiku45, sonnet45}; !slices.Equal(ids, want) {
		t.Errorf("Filter(bedrock, ...) = %v, want %v", ids, want)
	}
	if _, ok := f.Lookup("eu." + haiku45); !ok {
		t.Error("a kept model keeps all its profiles")
	}
	var anthropic int
	for _, m := range c.All() {
		if m.Provider == ProviderAnthropic {
			anthropic++
		}
	}
	if got := len(c.Filter(ProviderAnthropic, nil).All()); got != anthropic || got < 4 {
		t.Errorf("Filter(anthropic, nil) kept %d models, want all %d Anthropic API models", got, anthropic)
	}
	if got := c.Missing([]string{sonnet45, "nope", "us." + sonnet45, "eu." + haiku35}); !slices.Equal(got, []string{"nope", "eu." + haiku35}) {
		t.Errorf("Missing = %v", got)
	}
}

func TestListingGolden(t *testing.T) {
	var out []Listing
	for _, m := range Default().All() {
		out = append(out, m.Listing())
	}
	got, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "list_models.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("list_models rendering differs from %s; run go test ./shared/model -update and review the diff", path)
	}
	// The shape is exactly the documented one.
	var objs []map[string]any
	if err := json.Unmarshal(got, &objs); err != nil {
		t.Fatal(err)
	}
	// Every row has the documented keys; lifecycle and batch_max_output only
	// where the catalog knows them, and the account's columns only once its
	// facts are merged (TestWithAccount), never in the embedded catalog's own
	// rendering.
	required := []string{"as_of", "family", "id", "input_modalities", "max_output_tokens", "modes", "prices_per_million", "provider", "task"}
	optional := []string{"batch_max_output", "lifecycle", "prices_source", "price_sources"}
	for _, o := range objs {
		keys := slices.DeleteFunc(sortedKeysAny(o), func(k string) bool { return slices.Contains(optional, k) })
		if !slices.Equal(keys, required) {
			t.Errorf("listing keys %v, want %v (+ %v)", sortedKeysAny(o), required, optional)
		}
	}
}

func sortedKeysAny(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
