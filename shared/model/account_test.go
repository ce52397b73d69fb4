package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseQuotaName(t *testing.T) {
	cases := []struct {
		name, kind, model string
		ok                bool
	}{
		{"Minimum number of records per batch inference job for Claude 3 Haiku", "min_records", "Claude 3 Haiku", true},
		{"Records per batch inference job for Claude 3 Haiku", "records_per_job", "Claude 3 Haiku", true},
		{"Records per input file per batch inference job for Nova Lite", "records_per_file", "Nova Lite", true},
		{"Batch inference input file size (in GB) for Llama 3.3 70B Instruct", "file_bytes", "Llama 3.3 70B Instruct", true},
		{"Batch inference job size (in GB) for Claude Sonnet 4.5", "job_bytes", "Claude Sonnet 4.5", true},
		{"Sum of in-progress and submitted batch inference jobs using a base model for Claude Haiku 4.5", "concurrent", "Claude Haiku 4.5", true},
		// Word order seen for some models: the model first, or "(in GB)" last.
		{"Claude 3.5 Sonnet v2 batch inference job size (in GB)", "job_bytes", "Claude 3.5 Sonnet v2", true},
		{"Batch inference input file size for Nova Pro (in GB)", "file_bytes", "Nova Pro", true},
		{"Nova Micro records per batch inference job", "records_per_job", "Nova Micro", true},
		{"Minimum number of records per batch inference job  for  Titan Text Embeddings V2", "min_records", "Titan Text Embeddings V2", true},
		// On-demand rates (the deadline's timing).
		{"On-demand InvokeModel requests per minute for Anthropic Claude 3 Haiku", "requests_per_minute", "Anthropic Claude 3 Haiku", true},
		{"On-demand InvokeModel tokens per minute for Claude Haiku 4.5", "tokens_per_minute", "Claude Haiku 4.5", true},
		{"Cross-Region InvokeModel tokens per minute for Anthropic Claude Sonnet 4.5", "tokens_per_minute", "Anthropic Claude Sonnet 4.5", true},
		{"On-demand model inference requests per minute for Anthropic Claude 3 Haiku", "requests_per_minute", "Anthropic Claude 3 Haiku", true},
		// Not batch quotas or rates of a base model.
		{"Model invocation max tokens per day for Claude Haiku 4.5", "", "", false},
		{"On-demand InvokeModel tokens per minute for", "", "", false},
		{"Sum of in-progress and submitted batch inference jobs using a custom model", "", "", false},
		{"Records per batch inference job", "", "", false},
	}
	for _, c := range cases {
		kind, m, ok := ParseQuotaName(c.name)
		if kind != c.kind || m != c.model || ok != c.ok {
			t.Errorf("ParseQuotaName(%q) = %q, %q, %v; want %q, %q, %v", c.name, kind, m, ok, c.kind, c.model, c.ok)
		}
	}
}

// testCatalog is a small catalog: one Bedrock model with a successor, one
// Anthropic model, filtered to allow an id only the account knows.
func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := Parse([]byte(`{"prices_as_of":"2026-11-30","models":[
 {"id":"anthropic.claude-x-v1:0","provider":"bedrock","family":"claude","name":"Claude X","task":"text","modes":["batch","on_demand"],
  "profiles":{"us":"us.anthropic.claude-x-v1:0","eu":"eu.anthropic.claude-x-v1:0"},"on_demand_requires_profile":true,
  "max_output_tokens":8192,"context_window":200000,"input_modalities":["text"],"prices":{"batch_input":1,"batch_output":5},
  "lifecycle":{"status":"active","successor":"anthropic.claude-y-v1:0"}},
 {"id":"anthropic.claude-y-v1:0","provider":"bedrock","family":"claude","name":"Claude Y","task":"text","modes":["batch"],
  "max_output_tokens":8192,"context_window":200000,"input_modalities":["text"],"prices":{"batch_input":2}},
 {"id":"claude-x","provider":"anthropic","family":"claude","name":"Claude X","task":"text","modes":["batch"],
  "max_output_tokens":8192,"context_window":200000,"input_modalities":["text"],"prices":{"batch_input":1}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c.Filter("", []string{"anthropic.claude-x-v1:0", "claude-x", "qwen.qwen9-v1:0", "amazon.only-embed-v1:0", "claude-new"})
}

func TestWithAccount(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	acct := &Account{Region: "us-east-1", UpdatedAt: now.Add(-time.Hour),
		Bedrock: []AccountModel{
			{ID: "anthropic.claude-x-v1:0", Name: "Claude X", Provider: "Anthropic", Lifecycle: "LEGACY", LegacySince: "2026-10-01", EndOfLife: "2027-04-01",
				InferenceTypes: []string{"INFERENCE_PROFILE"}, Output: []string{"TEXT"}, Access: AccessGranted,
				Quotas: &Quotas{MinRecordsPerJob: 50, MaxRecordsPerJob: 20000, MaxConcurrentJobs: 10}},
			{ID: "qwen.qwen9-v1:0", Name: "Qwen9", Provider: "Qwen", Lifecycle: "ACTIVE", InferenceTypes: []string{"ON_DEMAND"},
				Input: []string{"TEXT", "IMAGE"}, Output: []string{"TEXT"}, Access: AccessDenied, Quotas: &Quotas{MaxRecordsPerJob: 50000}},
			{ID: "amazon.only-embed-v1:0", Name: "Embed", Provider: "Amazon", Output: []string{"EMBEDDING"}},
			{ID: "meta.not-allowed-v1:0", Name: "Not allowed", Provider: "Meta", Output: []string{"TEXT"}, InferenceTypes: []string{"ON_DEMAND"}},
			{ID: "old.eol-v1:0", Name: "Old", Provider: "Old", Lifecycle: "LEGACY", EndOfLife: "2026-06-19", Output: []string{"TEXT"}},
		},
		Profiles: []AccountProfile{
			{ID: "us.anthropic.claude-x-v1:0", Type: "SYSTEM_DEFINED", Status: "ACTIVE", Models: []string{"anthropic.claude-x-v1:0", "anthropic.claude-x-v1:0"}},
			{ID: "global.anthropic.claude-x-v1:0", Type: "SYSTEM_DEFINED", Status: "ACTIVE", Models: []string{"anthropic.claude-x-v1:0"}},
			{ID: "abc123", ARN: "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123", Type: "APPLICATION", Status: "ACTIVE", Models: []string{"anthropic.claude-x-v1:0"}},
		},
		Anthropic: []AnthropicFacts{{ID: "claude-x", MaxTokens: 16000, MaxInputTokens: 1000000}, {ID: "claude-new", MaxTokens: 64000, MaxInputTokens: 200000, Capabilities: []string{"batch", "pdf_input"}}},
	}
	base := testCatalog(t)
	merged := base.Apply(acct, now)

	cases := []struct {
		id      string
		present bool
		check   func(t *testing.T, m *Model)
	}{
		{"anthropic.claude-x-v1:0", true, func(t *testing.T, m *Model) {
			f := m.Account
			if f.Source != SourceBoth || f.Access != AccessGranted || f.Quotas.MinRecordsPerJob != 50 {
				t.Errorf("facts %+v", f)
			}
			l := m.Lifecycle
			if l.Status != LifecycleLegacy || l.LegacySince != "2026-10-01" || l.EndOfLife != "2027-04-01" || l.Successor != "anthropic.claude-y-v1:0" {
				t.Errorf("lifecycle %+v: the account's status and dates with the catalog's successor", l)
			}
			if m.Prices.BatchInput == nil || *m.Prices.BatchInput != 1 {
				t.Error("prices come from the catalog")
			}
			if m.Profiles["global"] != "global.anthropic.claude-x-v1:0" || m.Profiles["eu"] != "eu.anthropic.claude-x-v1:0" {
				t.Errorf("profiles %v: the account's added, the catalog's kept", m.Profiles)
			}
			if want := []string{"abc123", "global.anthropic.claude-x-v1:0", "us.anthropic.claude-x-v1:0"}; !slices.Equal(f.Profiles, want) {
				t.Errorf("usable profiles %v, want %v", f.Profiles, want)
			}
		}},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123", true, func(t *testing.T, m *Model) {
			if m.ID != "anthropic.claude-x-v1:0" {
				t.Errorf("application profile resolves to %s", m.ID)
			}
		}},
		{"qwen.qwen9-v1:0", true, func(t *testing.T, m *Model) {
			if m.Account.Source != SourceAccount || m.Account.Access != AccessDenied || m.Provider != ProviderBedrock || m.Task != TaskText {
				t.Errorf("account-only %+v %+v", m, m.Account)
			}
			if !slices.Equal(m.Modes, []Mode{ModeBatch, ModeOnDemand}) || !slices.Equal(m.InputModalities, []string{"text", "image"}) {
				t.Errorf("modes %v modalities %v", m.Modes, m.InputModalities)
			}
			if c := m.Cost(Usage{Input: 10, Output: 10}, BasisBatch); c.Priced || len(c.Missing) != 2 {
				t.Errorf("cost %+v: want unpriced", c)
			}
		}},
		{"amazon.only-embed-v1:0", false, nil}, // not a text model: needs a native body the suite cannot guess
		{"meta.not-allowed-v1:0", false, nil},  // offered, but this deployment does not allow it
		{"old.eol-v1:0", false, nil},
		{"claude-x", true, func(t *testing.T, m *Model) {
			if m.MaxOutputTokens != 16000 || m.ContextWindow != 1000000 || m.Account.Source != SourceBoth {
				t.Errorf("anthropic row %d/%d %+v", m.MaxOutputTokens, m.ContextWindow, m.Account)
			}
		}},
		{"claude-new", true, func(t *testing.T, m *Model) {
			if m.Provider != ProviderAnthropic || m.MaxOutputTokens != 64000 || !slices.Contains(m.InputModalities, "document") {
				t.Errorf("anthropic-only %+v", m)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			m, ok := base.Lookup(c.id)
			if ok != c.present {
				t.Fatalf("Lookup(%s) through the overlay = %v, want %v", c.id, ok, c.present)
			}
			if m2, _ := merged.Lookup(c.id); m2 != m {
				t.Error("the overlay and the merged catalog disagree")
			}
			if ok {
				c.check(t, m)
			}
		})
	}
	if len(base.All()) != 4 {
		t.Errorf("All() = %d models through the overlay, want 4", len(base.All()))
	}
	if base.Apply(nil, now); len(base.All()) != 2 || base.All()[0].Account != nil {
		t.Error("Apply(nil) must remove the overlay")
	}
}

func TestWithAccountLifecycle(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		am   AccountModel
		want string
	}{
		{"active", AccountModel{Lifecycle: "ACTIVE"}, LifecycleActive},
		{"legacy", AccountModel{Lifecycle: "LEGACY", LegacySince: "2026-01-01", EndOfLife: "2027-01-01"}, LifecycleLegacy},
		{"end of life today", AccountModel{Lifecycle: "LEGACY", EndOfLife: "2026-12-01"}, LifecycleEndOfLife},
		{"end of life past, status still active", AccountModel{Lifecycle: "ACTIVE", EndOfLife: "2026-06-19"}, LifecycleEndOfLife},
		{"a status the SDK does not know", AccountModel{Lifecycle: "RETIRING"}, LifecycleActive},
	}
	for _, c := range cases {
		if got := lifecycleOf(&c.am, nil, now); got.Status != c.want {
			t.Errorf("%s: %s, want %s", c.name, got.Status, c.want)
		}
	}
	// The catalog's reading stands where it is stricter (an operator marks a
	// model, or an end of life is announced before the account shows it).
	stricterCases := []struct {
		name    string
		am      AccountModel
		catalog Lifecycle
		want    string
		eol     string
	}{
		{"catalog end of life over an active account", AccountModel{Lifecycle: "ACTIVE"}, Lifecycle{Status: LifecycleEndOfLife, EndOfLife: "2026-06-19"}, LifecycleEndOfLife, "2026-06-19"},
		{"catalog legacy over an active account", AccountModel{Lifecycle: "ACTIVE"}, Lifecycle{Status: LifecycleLegacy, EndOfLife: "2099-01-01"}, LifecycleLegacy, "2099-01-01"},
		{"catalog's announced date passed", AccountModel{Lifecycle: "LEGACY"}, Lifecycle{Status: LifecycleLegacy, EndOfLife: "2026-11-30"}, LifecycleEndOfLife, "2026-11-30"},
		{"account further along", AccountModel{Lifecycle: "LEGACY", EndOfLife: "2027-01-01"}, Lifecycle{Status: LifecycleActive}, LifecycleLegacy, "2027-01-01"},
		{"account active, catalog's date fills in", AccountModel{Lifecycle: "ACTIVE"}, Lifecycle{Status: LifecycleActive, EndOfLife: "2028-01-01"}, LifecycleActive, "2028-01-01"},
	}
	for _, c := range stricterCases {
		c.catalog.Successor = "next"
		got := lifecycleOf(&c.am, &c.catalog, now)
		if got.Status != c.want || got.EndOfLife != c.eol || got.Successor != "next" {
			t.Errorf("%s: %+v, want %s ending %s with the successor", c.name, got, c.want, c.eol)
		}
	}
	anthropic := []struct {
		name string
		af   AnthropicFacts
		want string
	}{
		{"active", AnthropicFacts{Lifecycle: "active"}, LifecycleActive},
		{"deprecated", AnthropicFacts{Lifecycle: "deprecated", DeprecatedAt: "2026-11-23"}, LifecycleLegacy},
		{"deprecated, retirement overdue", AnthropicFacts{Lifecycle: "deprecated", RetiresAt: "2026-11-30"}, LifecycleEndOfLife},
		{"retired", AnthropicFacts{Lifecycle: "retired", RetiresAt: "2026-06-15"}, LifecycleEndOfLife},
	}
	for _, c := range anthropic {
		if got := anthropicLifecycle(&c.af, nil, now); got.Status != c.want {
			t.Errorf("anthropic %s: %s, want %s", c.name, got.Status, c.want)
		}
	}
	if anthropicLifecycle(&AnthropicFacts{}, nil, now) != nil {
		t.Error("no lifecycle from the API: the catalog's stands")
	}
}

func TestWithAccountProfilesGap(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m, _ := testCatalog(t).WithAccount(&Account{UpdatedAt: now, Gaps: []string{GapProfiles}}, now).Lookup("anthropic.claude-x-v1:0")
	if len(m.Profiles) != 2 || m.Account.Profiles != nil || m.Account.Source != SourceCatalog || m.Account.Access != AccessUnknown {
		t.Errorf("with profiles unread the catalog's stand: %v %+v", m.Profiles, m.Account)
	}
}

// On-demand and cross-Region rates of one model both apply to a run that may
// go either way: the smaller is kept, whichever comes first.
func TestSetQuotaRatesKeepTheStricter(t *testing.T) {
	for _, order := range [][]float64{{400_000, 200_000}, {200_000, 400_000}, {0, 200_000}, {200_000, 0}} {
		var q Quotas
		for _, v := range order {
			q.SetQuota("tokens_per_minute", v)
		}
		if q.TokensPerMinute != 200_000 {
			t.Errorf("tokens per minute set %v = %v, want 200000", order, q.TokensPerMinute)
		}
	}
	var q Quotas
	q.SetQuota("requests_per_minute", 50)
	q.SetQuota("requests_per_minute", 200)
	if q.RequestsPerMinute != 50 {
		t.Errorf("requests per minute = %v, want 50", q.RequestsPerMinute)
	}
}

// TestBatchFromQuotas: a Bedrock model takes batch jobs where the account
// lists batch quotas for it, whatever the catalog's modes say; without them
// batch is taken away, saying why; with the quotas unread the catalog's
// modes stand.
func TestBatchFromQuotas(t *testing.T) {
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	c, err := Parse([]byte(`{"prices_as_of":"2026-11-30","models":[
 {"id":"qwen.q-v1:0","provider":"bedrock","family":"qwen","name":"Q","task":"text","modes":["on_demand"],
  "max_output_tokens":8192,"context_window":200000,"input_modalities":["text"]},
 {"id":"mistral.m-v1:0","provider":"bedrock","family":"mistral","name":"M","task":"text","modes":["batch","on_demand"],
  "max_output_tokens":8192,"context_window":200000,"input_modalities":["text"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	acct := func(gaps ...string) *Account {
		return &Account{Region: "us-east-1", UpdatedAt: now, Gaps: gaps, Bedrock: []AccountModel{
			{ID: "qwen.q-v1:0", Name: "Q", Provider: "Qwen", InferenceTypes: []string{"ON_DEMAND"}, Output: []string{"TEXT"},
				Quotas: &Quotas{MaxJobBytes: 5 << 30, TokensPerMinute: 1000}},
			{ID: "mistral.m-v1:0", Name: "M", Provider: "Mistral AI", InferenceTypes: []string{"ON_DEMAND"}, Output: []string{"TEXT"},
				Quotas: &Quotas{TokensPerMinute: 1000}},
		}}
	}
	cases := []struct {
		gaps          []string
		qwen, mistral []Mode
	}{
		{nil, []Mode{ModeBatch, ModeOnDemand}, []Mode{ModeOnDemand}},
		{[]string{GapQuotas + ": AccessDeniedException: not authorized"}, []Mode{ModeOnDemand}, []Mode{ModeBatch, ModeOnDemand}},
	}
	for _, tc := range cases {
		m := c.WithAccount(acct(tc.gaps...), now)
		q, _ := m.Lookup("qwen.q-v1:0")
		mi, _ := m.Lookup("mistral.m-v1:0")
		if !slices.Equal(q.Modes, tc.qwen) || !slices.Equal(mi.Modes, tc.mistral) {
			t.Errorf("gaps %v: modes %v and %v, want %v and %v", tc.gaps, q.Modes, mi.Modes, tc.qwen, tc.mistral)
		}
		if tc.gaps == nil && (!strings.Contains(mi.Account.Batch, "no batch inference quotas") || !strings.Contains(mi.Account.Batch, "us-east-1") ||
			!strings.Contains(q.Account.Batch, "lists batch inference quotas")) {
			t.Errorf("why: %q / %q", q.Account.Batch, mi.Account.Batch)
		}
	}
}

// A gap is recorded with its error ("ListInferenceProfiles: throttled"),
// after the pages read before it: the profiles stay the catalog's then too.
func TestWithAccountGapWithError(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	firstPage := []AccountProfile{{ID: "us.anthropic.claude-x-v1:0", Type: "SYSTEM_DEFINED", Models: []string{"anthropic.claude-x-v1:0"}}}
	m, _ := testCatalog(t).WithAccount(&Account{UpdatedAt: now, Profiles: firstPage, Gaps: []string{GapProfiles + ": ThrottlingException: rate exceeded"}}, now).Lookup("anthropic.claude-x-v1:0")
	if len(m.Profiles) != 2 || m.Account.Profiles != nil {
		t.Errorf("with profiles unread the catalog's stand: %v %+v", m.Profiles, m.Account)
	}
}

// TestWithProfiles: an allow-list takes the us., eu. and global. profiles of
// its Bedrock models, those the account offers, without repeating one.
func TestWithProfiles(t *testing.T) {
	c := testCatalog(t)
	ids := []string{"anthropic.claude-x-v1:0", "claude-x", "us.anthropic.claude-x-v1:0"}
	if got, want := c.WithProfiles(ids, nil), append(slices.Clone(ids), "eu.anthropic.claude-x-v1:0"); !slices.Equal(got, want) {
		t.Errorf("WithProfiles = %v, want %v", got, want)
	}
	none := func(string) bool { return false }
	if got := c.WithProfiles(ids[:2], none); !slices.Equal(got, ids[:2]) {
		t.Errorf("with nothing offered: %v, want %v", got, ids[:2])
	}
}
