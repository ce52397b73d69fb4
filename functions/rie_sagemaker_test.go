package functions_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/job"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// The samples in events/sagemaker all name this inference (= job) and output object.
const (
	smJobID     = "01jc3v9k2m4n5p6q7r8s9t0v1w"
	smOutBucket = "mcpbatch-data-bucket"
	smOutKey    = "sagemaker/output/3f2b9c1e8d7a4b6c.out"
	smAnswer    = `{"label":"positive","score":0.97}`
)

// TestSageMakerEventsUnderRIE runs the built sagemaker-events bootstrap under the
// Lambda RIE against moto (DynamoDB, S3, EventBridge) with the SNS samples, in an
// order that exercises the test notification, reading the output object,
// a contradicting late error and a duplicate.
func TestSageMakerEventsUnderRIE(t *testing.T) {
	st := newStack(t)
	ctx := t.Context()
	now := time.Now().UTC()
	if err := st.store.CreateJob(ctx, &job.Job{
		ID: smJobID, Owner: "arn:aws:iam::123456789012:user/alice", Provider: job.ProviderSageMaker, Model: "demo-async",
		Status: job.StatusSubmitted, ProviderStatus: smsvc.SageMakerAccepted, RecordCount: 1, Shards: 1, TTLDays: 7,
		CreatedAt: now, ExpiresAt: job.ExpiresAt(now, 7), OutputURI: "s3://" + smOutBucket + "/" + smOutKey,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(smOutBucket)}); err != nil && !strings.Contains(err.Error(), "BucketAlready") {
		t.Fatal(err)
	}
	if _, err := st.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(smOutBucket), Key: aws.String(smOutKey), Body: strings.NewReader(smAnswer)}); err != nil {
		t.Fatal(err)
	}
	fn := startLambda(t, "sagemaker-events", st)
	steps := []struct {
		sample     string
		wantStatus job.Status
	}{
		{"test-notification.json", job.StatusSubmitted},
		{"success-without-body.json", job.StatusCompleted},
		{"error.json", job.StatusCompleted},
		{"success-with-body.json", job.StatusCompleted},
	}
	for _, s := range steps {
		t.Run(s.sample, func(t *testing.T) {
			acknowledged(t, fn.invoke(t, readFile(t, "../events/sagemaker/"+s.sample)))
			j, err := st.store.GetJob(ctx, smJobID)
			if err != nil {
				t.Fatal(err)
			}
			if j.Status != s.wantStatus {
				t.Fatalf("status %s, want %s", j.Status, s.wantStatus)
			}
			recs, _, err := st.store.ListRecords(ctx, j.RecordSet(), store.RecordQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if s.wantStatus == job.StatusCompleted && (len(recs) != 1 || recs[0].Output != smAnswer || recs[0].Status != job.RecordSucceeded) {
				t.Fatalf("records %+v", recs)
			}
		})
	}
}
