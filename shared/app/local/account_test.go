package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

const (
	haiku45  = "anthropic.claude-haiku-4-5-20251001-v1:0"
	palmyra  = "writer.palmyra-x5-v1:0"
	opus41   = "anthropic.claude-opus-4-1-20250805-v1:0"
	sonnet4  = "anthropic.claude-sonnet-4-20250514-v1:0"
	sonnet37 = "anthropic.claude-3-7-sonnet-20250219-v1:0"
)

// newAccountSuite is the local suite over acct (nil: the make dev account).
func newAccountSuite(t *testing.T, dir string, acct *simbedrock.Account) *local.Suite {
	return newAccountSuiteOn(t, sqliteWiring, dir, acct)
}

// newAccountSuiteOn is newAccountSuite on wiring w.
func newAccountSuiteOn(t *testing.T, w wiring, dir string, acct *simbedrock.Account) *local.Suite {
	t.Helper()
	l, err := local.New(context.Background(), w.options(t, local.Options{Dir: dir, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Account: acct}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestAccountFactsRefresh: the cold start reads the simulated account through
// the real Bedrock, Service Quotas and Anthropic SDK clients, stores the
// snapshot, and the catalog answers with the merged facts; a second cold
// start within a day reads the stored snapshot and asks the account nothing.
func TestAccountFactsRefresh(t *testing.T) {
	dir := t.TempDir()
	acct := simbedrock.NewAccount()
	l := newAccountSuite(t, dir, acct)
	for _, op := range []string{"ListFoundationModels", "ListInferenceProfiles", "ListServiceQuotas"} {
		if acct.Calls(op) == 0 {
			t.Errorf("%s was not called at the cold start", op)
		}
	}
	if n, want := acct.Calls("GetFoundationModelAvailability"), len(acct.Models()); n != want {
		t.Errorf("GetFoundationModelAvailability called %d times, want one per text or embedding model (%d)", n, want)
	}
	a, err := l.Models.Load(t.Context())
	if err != nil || a.Version != 1 || len(a.Gaps) > 0 {
		t.Fatalf("stored snapshot: %+v, %v", a, err)
	}
	lookup := func(id string) *model.Model {
		t.Helper()
		m, ok := l.Service.Core.Models().LookupModel(id)
		if !ok {
			t.Fatalf("%s is not in the merged catalog", id)
		}
		return m
	}
	cases := []struct {
		id                string
		source, access    string
		lifecycle         string
		minRecords        int
		profilesInclude   string
		priced, hasQuotas bool
	}{
		{haiku45, model.SourceBoth, model.AccessGranted, model.LifecycleActive, 100, "simapp0000001", true, true},
		{"amazon.nova-lite-v1:0", model.SourceBoth, model.AccessGranted, model.LifecycleActive, 100, "us.amazon.nova-lite-v1:0", true, true}, // quota names with the model first
		{sonnet45, model.SourceBoth, model.AccessGranted, model.LifecycleLegacy, 100, "global." + sonnet45, true, true},
		{sonnet4, model.SourceBoth, model.AccessGranted, model.LifecycleEndOfLife, 100, "global." + sonnet4, true, true},
		{sonnet37, model.SourceBoth, model.AccessGranted, model.LifecycleEndOfLife, 100, "us." + sonnet37, true, true},
		{opus41, model.SourceBoth, model.AccessDenied, model.LifecycleLegacy, 100, "", true, true},
		{palmyra, model.SourceAccount, model.AccessGranted, model.LifecycleActive, 100, "us." + palmyra, false, true},
		{"amazon.titan-embed-text-v2:0", model.SourceBoth, model.AccessGranted, model.LifecycleActive, 100, "", true, true},
		{"cohere.embed-english-v3", model.SourceBoth, model.AccessGranted, model.LifecycleActive, 0, "", true, false},
	}
	for _, c := range cases {
		m := lookup(c.id)
		f := m.Account
		if f == nil || f.Source != c.source || f.Access != c.access || m.Lifecycle == nil || m.Lifecycle.Status != c.lifecycle {
			t.Errorf("%s: facts %+v lifecycle %+v; want source %s access %s lifecycle %s", c.id, f, m.Lifecycle, c.source, c.access, c.lifecycle)
			continue
		}
		// Every model has the simulated account's on-demand rates; hasQuotas is about batch quotas.
		if f.Quotas == nil || f.Quotas.RequestsPerMinute != 200 || f.Quotas.TokensPerMinute != 400_000 {
			t.Errorf("%s: on-demand rates %+v, want the simulated account's 200 requests and 400,000 tokens per minute", c.id, f.Quotas)
			continue
		}
		if (f.Quotas.MaxRecordsPerJob > 0) != c.hasQuotas || (c.hasQuotas && (f.Quotas.MinRecordsPerJob != c.minRecords || f.Quotas.MaxRecordsPerJob != 50000 ||
			f.Quotas.MaxInputFileBytes != 1<<30 || f.Quotas.MaxJobBytes != 5<<30 || f.Quotas.MaxConcurrentJobs != 20)) {
			t.Errorf("%s: quotas %+v", c.id, f.Quotas)
		}
		if c.profilesInclude != "" && !slices.Contains(f.Profiles, c.profilesInclude) {
			t.Errorf("%s: profiles %v lack %s", c.id, f.Profiles, c.profilesInclude)
		}
		if got := m.Prices.Input != nil || m.Prices.BatchInput != nil; got != c.priced {
			t.Errorf("%s: priced %v, want %v", c.id, got, c.priced)
		}
	}
	if m := lookup(palmyra); !slices.Equal(m.Modes, []model.Mode{model.ModeBatch, model.ModeOnDemand}) || m.OnDemandID(sim.DefaultRegion) != "us."+palmyra {
		t.Errorf("account-only model: modes %v, on-demand id %s", m.Modes, m.OnDemandID(sim.DefaultRegion))
	}
	if m := lookup("claude-haiku-4-5"); m.Account == nil || m.Account.Source != model.SourceBoth || m.MaxOutputTokens != 64000 {
		t.Errorf("GET /v1/models: Haiku 4.5 %+v, max output %d", m.Account, m.MaxOutputTokens)
	}
	i := slices.IndexFunc(a.Anthropic, func(f model.AnthropicFacts) bool { return f.ID == "claude-opus-4-5" })
	if i < 0 || a.Anthropic[i].Lifecycle != "deprecated" || a.Anthropic[i].DeprecatedAt != "2026-11-23" || !slices.Contains(a.Anthropic[i].Capabilities, "batch") {
		t.Errorf("GET /v1/models through the SDK: Opus 4.5 %+v", a.Anthropic)
	}

	// A second cold start within the day: the stored snapshot, no account reads.
	l.Close()
	again := simbedrock.NewAccount()
	l2 := newAccountSuite(t, dir, again)
	if n := again.Calls("ListFoundationModels"); n != 0 {
		t.Errorf("a cold start with a fresh snapshot read the account %d times", n)
	}
	if m, _ := l2.Service.Core.Models().LookupModel(opus41); m == nil || m.Account == nil || m.Account.Access != model.AccessDenied {
		t.Errorf("second start: the stored facts are not laid over the catalog: %+v", m)
	}
}

// submitReq is a batch of n records for m: Claude prompts, or a native body
// for a model the suite has no encoder for.
func submitReq(m string, n int) batch.SubmitRequest {
	req := batch.SubmitRequest{Owner: "alice", Model: m}
	for i := range n {
		in := job.Input{ID: fmt.Sprintf("r%04d", i)}
		if strings.HasPrefix(m, "anthropic.") {
			in.Prompt = fmt.Sprintf("fact %d", i)
		} else {
			in.ModelInput = json.RawMessage(`{"messages":[{"role":"user","content":[{"text":"hello"}]}]}`)
		}
		req.Records = append(req.Records, in)
	}
	return req
}

// TestAccountOnlyModelAccepted: a model the account offers and the catalog
// lacks is accepted, with a warning on the job, and its cost comes out unpriced.
var _ = flow("AccountOnlyModelAccepted", func(t *testing.T, w wiring) {
	l := newAccountSuiteOn(t, w, t.TempDir(), nil)
	j, err := l.Service.Batch.Submit(t.Context(), submitReq(palmyra, 150))
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if j.Mode != job.ModeBatch || len(j.Warnings) != 1 || !strings.Contains(j.Warnings[0], "not priced") {
		t.Fatalf("job mode %s warnings %q", j.Mode, j.Warnings)
	}
	got, err := l.Service.Queries.Get(t.Context(), "alice", j.ID)
	if err != nil || !slices.Equal(got.Warnings, j.Warnings) {
		t.Fatalf("get_job warnings %q, %v", got.Warnings, err)
	}
	got.InputTokens, got.OutputTokens = 1000, 500
	l.Service.Core.Models().PriceJob(got)
	if got.Cost == nil || got.Cost.TotalUSD != 0 || !slices.Equal(got.Cost.Unpriced, []string{"batch_input", "batch_output"}) {
		t.Errorf("cost %+v: want unpriced batch_input and batch_output", got.Cost)
	}
})

// TestNoAccessRefused: a model the account has no access to is refused at
// submit with the way to get access, and nothing is stored.
func TestNoAccessRefused(t *testing.T) {
	l := newAccountSuite(t, t.TempDir(), nil)
	_, err := l.Service.Batch.Submit(t.Context(), submitReq(opus41, 150))
	var fe *job.FieldError
	if !errors.As(err, &fe) || fe.Field != "model" || !strings.Contains(err.Error(), "request access to "+opus41+" in the Bedrock console") {
		t.Fatalf("submit: %v; want a model error asking to request access", err)
	}
	jobs, _, err := l.Service.Queries.List(t.Context(), "alice", service.ListQuery{})
	if err != nil || len(jobs) != 0 {
		t.Errorf("jobs after a refused submit: %d, %v", len(jobs), err)
	}
}

// TestQuotasMoveThresholds: the account's quotas, read from the Service
// Quotas simulator, set the on-demand threshold of auto mode and the split,
// in place of the documented defaults.
func TestQuotasMoveThresholds(t *testing.T) {
	cases := []struct {
		name      string
		quotas    func(*simbedrock.BatchQuotas)
		records   int
		wantMode  string
		wantParts int
	}{
		{"defaults: 150 records run as a batch", nil, 150, job.ModeBatch, 1},
		{"minimum raised to 500: 150 records run on demand", func(q *simbedrock.BatchQuotas) { q.MinRecords = 500 }, 150, job.ModeOnDemand, 0},
		{"minimum raised to 500: 600 records run as a batch", func(q *simbedrock.BatchQuotas) { q.MinRecords = 500 }, 600, job.ModeBatch, 1},
		{"records per job lowered to 1,000: 2,500 records in 3 parts", func(q *simbedrock.BatchQuotas) { q.MaxRecords = 1000 }, 2500, job.ModeBatch, 3},
		{"records per file lowered to 800: 2,500 records in 4 parts", func(q *simbedrock.BatchQuotas) { q.MaxRecordsPerFile = 800 }, 2500, job.ModeBatch, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acct := simbedrock.NewAccount()
			if c.quotas != nil {
				acct.Update(haiku45, func(m *simbedrock.AccountModel) { c.quotas(m.Batch) })
			}
			l := newAccountSuite(t, t.TempDir(), acct)
			// Validation settles auto mode; only batch submits go further
			// (an on-demand run would call the runtime simulator 150 times).
			req := submitReq(haiku45, c.records)
			if _, err := l.Service.Batch.ValidateParams(&req); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if req.Mode != c.wantMode {
				t.Fatalf("mode %s, want %s", req.Mode, c.wantMode)
			}
			if c.wantMode != job.ModeBatch {
				return
			}
			j, err := l.Service.Batch.Submit(t.Context(), submitReq(haiku45, c.records))
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			if j.Mode != job.ModeBatch || len(j.Parts) != c.wantParts {
				t.Errorf("mode %s with %d parts, want batch with %d", j.Mode, len(j.Parts), c.wantParts)
			}
		})
	}
}

// TestListModelsAccountColumns: list_models shows, per row, the source, the
// lifecycle, the access, the quotas, the profiles usable here and as_of.
func TestListModelsAccountColumns(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	out := call[mcpserver.ListModelsOut](t, cs, "list_models", map[string]any{})
	rows := map[string]model.Listing{}
	for _, r := range out.Models {
		rows[r.ID] = r
	}
	for id, want := range map[string]struct{ source, access, lifecycle string }{
		palmyra:  {model.SourceAccount, model.AccessGranted, model.LifecycleActive},
		opus41:   {model.SourceBoth, model.AccessDenied, model.LifecycleLegacy},
		sonnet45: {model.SourceBoth, model.AccessGranted, model.LifecycleLegacy},
		sonnet4:  {model.SourceBoth, model.AccessGranted, model.LifecycleEndOfLife},
		sonnet37: {model.SourceBoth, model.AccessGranted, model.LifecycleEndOfLife},
	} {
		r, ok := rows[id]
		if !ok {
			t.Errorf("%s missing from list_models", id)
			continue
		}
		if r.Source != want.source || r.Access != want.access || r.Lifecycle == nil || r.Lifecycle.Status != want.lifecycle ||
			r.Quotas == nil || len(r.Profiles) == 0 || r.AccountAsOf == "" {
			t.Errorf("%s: %+v %+v", id, r.AccountListing, r.Lifecycle)
		}
	}
}

// TestAccountOnlyModelConverseBatch: a model only the account knows runs a
// Converse batch job end to end from plain prompts (no family body needed),
// with its tokens counted, its cost unpriced and the warning on the job.
func TestAccountOnlyModelConverseBatch(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": palmyra, "records": records(120), "mode": "batch", "max_tokens": 100})
	if len(h.Warnings) == 0 || !strings.Contains(strings.Join(h.Warnings, " "), "not priced") {
		t.Errorf("submit warnings %q, want the unpriced model named", h.Warnings)
	}
	j := s.finish(cs, h.JobID)
	if j.Status != "completed" || j.Mode != "batch" || j.Succeeded != 120 || j.InputTokens == 0 || j.OutputTokens == 0 {
		t.Fatalf("job %+v", j)
	}
	if j.Cost == nil || j.Cost.TotalUSD != 0 || !slices.Equal(j.Cost.Unpriced, []string{"batch_input", "batch_output"}) {
		t.Errorf("cost %+v: want unpriced batch_input and batch_output", j.Cost)
	}
	if r := allResults(t, cs, h.JobID, "succeeded", 100)[0]; !strings.HasPrefix(r.Output, "[simulated]") {
		t.Errorf("record %s output %q", r.ID, r.Output)
	}
}

// TestBatchFromAccountQuotas: open-weight models take batch jobs because the
// simulated account lists batch quotas for them under its own names
// ("OpenAI GPT OSS 120b", "Qwen3 235B", "DeepSeek v3"); Mistral 7B, without
// them, is refused a batch job naming why and runs on demand under auto.
func TestBatchFromAccountQuotas(t *testing.T) {
	l := newAccountSuite(t, t.TempDir(), nil)
	a, err := l.Models.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.UnmatchedQuotas) > 0 {
		t.Errorf("quota names no model took: %v", a.UnmatchedQuotas)
	}
	for _, id := range []string{"openai.gpt-oss-120b-1:0", "openai.gpt-oss-20b-1:0", "qwen.qwen3-235b-a22b-2507-v1:0", "deepseek.v3-v1:0"} {
		m, ok := l.Service.Core.Models().LookupModel(id)
		if !ok || !m.Supports(model.ModeBatch) || m.Account == nil || m.Account.Quotas == nil || m.Account.Quotas.MaxJobBytes != 5<<30 {
			t.Errorf("%s: modes %v, facts %+v; want batch from the account's quotas", id, m.Modes, m.Account)
		}
	}
	const small = "mistral.mistral-7b-instruct-v0:2"
	if m, _ := l.Service.Core.Models().LookupModel(small); m == nil || m.Supports(model.ModeBatch) {
		t.Fatalf("%s: %+v, want on demand only", small, m)
	}
	req := submitReq(small, 150)
	req.Mode = job.ModeBatch
	_, err = l.Service.Batch.Submit(t.Context(), req)
	if err == nil || !strings.Contains(err.Error(), "no batch inference quotas") {
		t.Fatalf("batch submit to %s: %v, want a refusal naming the missing batch quotas", small, err)
	}
	req.Mode = job.ModeAuto
	j, err := l.Service.Batch.Submit(t.Context(), req)
	if err != nil || j.Mode != job.ModeOnDemand {
		t.Fatalf("auto submit to %s: %+v, %v; want on demand", small, j, err)
	}
}
