package handler

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	simsagemaker "github.com/mcpbatch/mcpbatch/shared/sim/sagemaker"
)

// BenchmarkSageMakerEventsLargeOutput: the sagemaker-events handler settling a
// success notification without responseBody whose output object is 1 MB (and
// 8 MB, to show memory does not grow with the output: at most ~350 KB is read
// and the record points at the object). Embedded store and object folder.
//
//	go test ./shared/handler/ -run '^$' -bench SageMakerEvents -benchmem
func BenchmarkSageMakerEventsLargeOutput(b *testing.B) {
	for _, size := range []int{1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("output-%dMB", size>>20), func(b *testing.B) {
			e := newSMEnv(b)
			ctx := context.Background()
			out := "s3://mcpbatch-data-bucket/sagemaker/output/bench.out"
			if _, err := e.blobs.Put(ctx, out, bytes.NewReader(bytes.Repeat([]byte("a"), size)), "text/plain"); err != nil {
				b.Fatal(err)
			}
			now := time.Now().UTC()
			for b.Loop() {
				b.StopTimer()
				id := job.NewID(now)
				if err := e.store.CreateJob(ctx, &job.Job{ID: id, Owner: "alice", Provider: job.ProviderSageMaker, Model: "demo-async",
					Status: job.StatusSubmitted, RecordCount: 1, Shards: 1, CreatedAt: now, ExpiresAt: job.ExpiresAt(now, 7)}); err != nil {
					b.Fatal(err)
				}
				ev, err := simsagemaker.SNSEvent("arn:aws:sns:us-east-1:123456789012:success", map[string]any{
					"awsRegion": "us-east-1", "invocationStatus": "Completed", "inferenceId": id, "eventVersion": "1.0",
					"eventSource": "aws:sagemaker", "eventName": "InferenceResult",
					"requestParameters":  map[string]string{"endpointName": "demo-async", "contentType": "text/plain"},
					"responseParameters": map[string]string{"contentType": "text/plain", "outputLocation": out},
				})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := e.router.Route(ctx, ev); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				j, err := e.store.GetJob(ctx, id)
				if err != nil || j.Status != job.StatusCompleted {
					b.Fatalf("job %v: %v", j, err)
				}
				b.StartTimer()
			}
		})
	}
}
