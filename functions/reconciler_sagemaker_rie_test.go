//go:build linux

package functions_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	simsagemaker "github.com/mcpbatch/mcpbatch/shared/sim/sagemaker"
)

// TestReconcilerResendsLostAsyncRequest runs the built reconciler under the RIE
// with its AWS wiring: DynamoDB and S3 in moto, the SageMaker runtime client
// sent to the simulator (AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME). A job whose
// InvokeEndpointAsync answer and notification were both lost is re-sent from
// its kept request (the job id as InferenceId) and becomes submitted with
// SageMaker's output location; a job with no kept request and older than the
// longest async lifetime (7 h) is failed instead.
func TestReconcilerResendsLostAsyncRequest(t *testing.T) {
	st := newStack(t)
	ctx := t.Context()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sm := &simsagemaker.SageMakerSim{Blobs: blobs, Endpoints: []string{"demo-async"}}
	url, err := sm.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sm.Close() })
	st.extraEnv = []string{"AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME=" + url, "MCPBATCH_SAGEMAKER_ENDPOINTS=demo-async"}

	queued := func(created time.Time) *job.Job {
		return &job.Job{ID: job.NewID(created), Owner: "rie", Provider: job.ProviderSageMaker, Model: "demo-async", Status: job.StatusQueued,
			RecordCount: 1, Shards: 1, TTLDays: 1, CreatedAt: created, UpdatedAt: created, ExpiresAt: time.Now().Add(24 * time.Hour)}
	}
	lost := queued(time.Now().UTC().Add(-10 * time.Minute))
	gone := queued(time.Now().UTC().Add(-8 * time.Hour))
	for _, j := range []*job.Job{lost, gone} {
		if err := st.store.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	// What InvokeAsync keeps before it calls SageMaker.
	req, _ := json.Marshal(smsvc.AsyncInvocation{Endpoint: "demo-async", InferenceID: lost.ID, Body: []byte(`{"q":"resend me"}`), ContentType: "application/json"})
	if _, err := st.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(st.bucket), Key: aws.String("sagemaker/input/" + lost.ID + "/request.json"),
		Body: bytes.NewReader(req)}); err != nil {
		t.Fatal(err)
	}

	fn := startLambda(t, "reconciler", st)
	fn.invoke(t, readFile(t, "../events/schedule/reconcile.json"))

	inv := sm.Inventory()
	if len(inv) != 1 || inv[0].Ref != lost.ID || inv[0].Name != "demo-async" {
		t.Fatalf("SageMaker received %+v, want one re-sent request with InferenceId %s", inv, lost.ID)
	}
	got, err := st.store.GetJob(ctx, lost.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusSubmitted || !strings.HasPrefix(got.OutputURI, simsagemaker.DefaultSageMakerOutputPrefix) || got.FailureURI == "" {
		t.Fatalf("re-sent job = %s output %q failure %q", got.Status, got.OutputURI, got.FailureURI)
	}
	g, err := st.store.GetJob(ctx, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if g.Status != job.StatusFailed || !strings.Contains(g.Error, "7 h") {
		t.Fatalf("job without a kept request = %s %q, want failed after 7 h", g.Status, g.Error)
	}
	if err := sm.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
}
