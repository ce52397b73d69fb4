//go:build linux

package functions_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockbatch"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// TestValidateFanoutUnderRIE: a job over a folder of two files, validated by
// the built validate bootstrap alone: the event plans it and sends check
// units to the queue (moto's SQS), and each batch the queue hands back, as
// the event source would, runs a unit and sends the next phase, until the
// job fails on a duplicate id across the files named by file and line.
func TestValidateFanoutUnderRIE(t *testing.T) {
	st := newStack(t)
	ctx := t.Context()
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", ""), BaseEndpoint: aws.String(st.endpoint)}
	q := sqs.NewFromConfig(cfg)
	made, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(st.bus + "-units")})
	if err != nil {
		t.Fatal(err)
	}
	url := aws.ToString(made.QueueUrl)
	fn := startLambda(t, "validate", st, config.EnvValidateQueue+"="+url)

	folder := "inputs/" + service.OwnerTag("alice") + "/corpus/"
	for f, at := range map[string]int{"a.jsonl": 7, "b.jsonl": 61} {
		var b strings.Builder
		for i := range 80 {
			id := fmt.Sprintf("%s-%d", f, i)
			if i == at {
				id = "twice"
			}
			fmt.Fprintf(&b, `{"id":%q,"prompt":"p%d"}`+"\n", id, i)
		}
		if _, err := st.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(folder + f), Body: strings.NewReader(b.String())}); err != nil {
			t.Fatal(err)
		}
	}
	bus := &published{}
	d := graph.Deps{Store: st.store, Blobs: s3blob.New(st.s3, s3blob.Options{}), Bus: bus, Log: slog.New(slog.DiscardHandler),
		Bucket: "s3://" + st.bucket, JobPrefix: jobPrefix,
		Providers: []service.BatchProvider{&bedrockbatch.Provider{ModelIDs: config.DefaultBedrockModels}}}
	if err := app.Catalog(&d, region); err != nil {
		t.Fatal(err)
	}
	j, err := graph.New(d).Transfer.SubmitFile(ctx, transfer.FileSubmitRequest{
		SubmitRequest: batch.SubmitRequest{Owner: "alice", Model: "anthropic.claude-haiku-4-5-20251001-v1:0"},
		InputURI:      "s3://" + st.bucket + "/" + folder,
	})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := json.Marshal(bus.events[0])
	acknowledged(t, fn.invoke(t, ev))

	units := 0
	for range 20 {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			batch := events.SQSEvent{Records: []events.SQSMessage{{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body),
				EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:" + region + ":123456789012:units"}}}
			raw, _ := json.Marshal(batch)
			var resp events.SQSEventResponse
			if err := json.Unmarshal(fn.invoke(t, raw), &resp); err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("unit %s: response %+v, %v", aws.ToString(m.Body), resp, err)
			}
			units++
			q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		}
	}
	got, err := st.store.GetJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := `file b.jsonl line 62: duplicate id "twice" (also file a.jsonl line 8)`
	if got.Status != job.StatusFailed || !strings.Contains(got.Error, want) || len(got.Parts) != 0 {
		t.Fatalf("after %d units: status %s, error %q; want failed naming %s", units, got.Status, got.Error, want)
	}
	if units < 4 { // two check units, one id shard, the finish
		t.Errorf("%d units ran, want the plan's phases", units)
	}
}
