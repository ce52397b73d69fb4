//go:build linux

package functions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
)

// anthropicForRIE starts the Anthropic simulator and puts its API key in a
// (moto) secret, as the stack does; env points a function at both.
func anthropicForRIE(t *testing.T, st *stack, key string) (*simanthropic.AnthropicSim, string, []string) {
	t.Helper()
	as := &simanthropic.AnthropicSim{APIKey: key}
	url, err := as.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { as.Close() })
	sm := secretsmanager.NewFromConfig(aws.Config{Region: region, BaseEndpoint: aws.String(st.endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", "")})
	sec, err := sm.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: aws.String(st.table + "-anthropic"), SecretString: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	return as, url, []string{"MCPBATCH_ANTHROPIC_SECRET_ARN=" + aws.ToString(sec.ARN), "MCPBATCH_ANTHROPIC_BASE_URL=" + url}
}

// TestReconcilerFinishesAnthropicBatch runs the built reconciler under the RIE
// on a scheduled event: it reads the API key from Secrets Manager (moto), asks
// the Anthropic simulator about a batch that has ended, moves the job to
// ingesting and announces its output.
func TestReconcilerFinishesAnthropicBatch(t *testing.T) {
	st := newStack(t)
	ctx := context.Background()
	const key = "sk-ant-rie-test"
	as, url, env := anthropicForRIE(t, st, key)
	st.extraEnv = env

	client := anthropic.New(option.WithAPIKey(key), option.WithBaseURL(url))
	b, err := client.Create(ctx, strings.NewReader(`{"requests":[{"custom_id":"r1","params":{"model":"claude-haiku-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	j := &job.Job{ID: job.NewID(now), Owner: "rie", Provider: job.ProviderAnthropic, Model: "claude-haiku-4-5", Status: job.StatusInProgress,
		RecordCount: 1, Shards: 1, TTLDays: 1, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(24 * time.Hour),
		Parts: []job.Part{{Index: 0, Name: "mcpbatch-x", Ref: b.ID, Status: job.StatusInProgress, ProviderStatus: wire.StatusInProgress,
			RecordCount: 1, InputURI: "s3://" + st.bucket + "/input/x/part-1/records.jsonl", OutputURI: "s3://" + st.bucket + "/output/x/part-1/"}}}
	if err := st.store.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	as.Step()

	fn := startLambda(t, "reconciler", st)
	out := fn.invoke(t, readFile(t, "../events/schedule/reconcile.json"))
	var rep struct {
		InFlight, Polled, OutputReady, Errors int
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("response %s: %v", out, err)
	}
	if rep.InFlight != 1 || rep.Polled != 1 || rep.OutputReady != 1 || rep.Errors != 0 {
		t.Fatalf("report = %s", out)
	}
	got, err := st.store.GetJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusIngesting || !got.OutputReadyPublished {
		t.Fatalf("job = %s published=%v, want ingesting and announced", got.Status, got.OutputReadyPublished)
	}
	if strings.Contains(fn.out.String(), key) {
		t.Error("the API key appears in the function's logs")
	}
}
