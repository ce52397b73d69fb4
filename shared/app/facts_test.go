package app_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/internal/awsstack"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

var srv *motoserver.Server

func TestMain(m *testing.M) { os.Exit(motoserver.Main(m, &srv)) }

const (
	haiku45 = "anthropic.claude-haiku-4-5-20251001-v1:0"
	palmyra = "writer.palmyra-x5-v1:0" // offered by the account, not in the catalog
)

// TestFromEnvLoadsAccountFacts: every function starts through app.FromEnv,
// on DynamoDB in moto here, and finds the account's stored model facts laid
// over its catalog: ingest prices an account-only model (its cost names the
// prices it lacks rather than being absent), validate splits by the account's
// batch quotas, and on demand paces at the account's runtime rates.
func TestFromEnvLoadsAccountFacts(t *testing.T) {
	st := awsstack.New(t, srv, map[string]string{config.EnvBedrockModels: haiku45 + "," + palmyra})
	now := time.Now().UTC()
	acct := model.Account{Region: "us-east-1", UpdatedAt: now, Bedrock: []model.AccountModel{
		{ID: haiku45, Provider: "Anthropic", Lifecycle: "ACTIVE", InferenceTypes: []string{"INFERENCE_PROFILE"},
			Input: []string{"TEXT"}, Output: []string{"TEXT"}, Access: model.AccessGranted,
			Quotas: &model.Quotas{MinRecordsPerJob: 100, MaxRecordsPerJob: 1234, MaxRecordsPerFile: 1234, RequestsPerMinute: 321, TokensPerMinute: 654_321}},
		{ID: palmyra, Provider: "Writer", Lifecycle: "ACTIVE", InferenceTypes: []string{"ON_DEMAND"},
			Input: []string{"TEXT"}, Output: []string{"TEXT"}, Access: model.AccessGranted,
			Quotas: &model.Quotas{MinRecordsPerJob: 100, MaxRecordsPerJob: 50_000}},
	}}
	data, err := json.Marshal(acct)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Store.PutSnapshot(t.Context(), "models#us-east-1", 0, data, now); err != nil {
		t.Fatal(err)
	}
	a, err := app.FromEnv(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	core := a.Graph.Core

	t.Run("ingest prices an account-only model", func(t *testing.T) {
		j := &job.Job{ID: "j1", Model: palmyra, Provider: job.ProviderBedrock, Mode: job.ModeBatch, InputTokens: 1000, OutputTokens: 100}
		core.Models().PriceJob(j)
		if j.Cost == nil || len(j.Cost.Unpriced) == 0 {
			t.Fatalf("cost of %s = %+v, want one that names its missing prices", palmyra, j.Cost)
		}
	})
	t.Run("validate splits by the account's quotas", func(t *testing.T) {
		prov, ok := core.Providers.Lookup(job.ProviderBedrock)
		if !ok {
			t.Fatal("no Bedrock provider")
		}
		if got := core.Models().LimitsFor(prov, core.Providers.Abilities(prov.Name()).QuotaLimited, haiku45).MaxRecordsPerPart; got != 1234 {
			t.Errorf("records per part %d, want the account's 1234", got)
		}
	})
	t.Run("on demand paces at the account's rates", func(t *testing.T) {
		if got, want := core.Models().RateOf(haiku45), (job.Rate{RequestsPerMinute: 321, TokensPerMinute: 654_321}); got != want {
			t.Errorf("rate %+v, want %+v (fallback %+v)", got, want, service.FallbackRate)
		}
	})
	if a.Facts == nil {
		t.Error("no Reloader: a warm function would keep the facts it started with")
	}
}
