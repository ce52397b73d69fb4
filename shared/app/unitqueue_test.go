package app_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// Units sent reach the queue, ten a call, each once, as the validate
// function's event source reads them (moto_server's SQS).
func TestSQSUnitsReachTheQueue(t *testing.T) {
	ctx := context.Background()
	client := sqs.NewFromConfig(srv.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.Endpoint) })
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("validation-units")})
	if err != nil {
		t.Fatal(err)
	}
	var sent []transfer.Unit
	for i := range 23 {
		sent = append(sent, transfer.Unit{JobID: "j1", Kind: transfer.UnitCheck, Index: i, URI: "s3://b/k", Start: int64(i) << 20, Units: 23, Shards: 1})
	}
	if err := (&app.SQSUnits{Client: client, URL: aws.ToString(q.QueueUrl)}).SendUnits(ctx, sent); err != nil {
		t.Fatal(err)
	}
	var got []int
	for range 20 {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			var u transfer.Unit
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &u); err != nil {
				t.Fatal(err)
			}
			if u != sent[u.Index] {
				t.Errorf("unit %d arrived as %+v", u.Index, u)
			}
			got = append(got, u.Index)
			client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle})
		}
	}
	slices.Sort(got)
	if len(got) != 23 || got[0] != 0 || got[22] != 22 || len(slices.Compact(got)) != 23 {
		t.Errorf("received units %v, want 0..22 once each", got)
	}
}

// flakySQS refuses some entries of each batch a number of times.
type flakySQS struct {
	refuse  int // calls that refuse entry "1"
	calls   int
	entries [][]string
}

func (f *flakySQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.calls++
	var ids []string
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		ids = append(ids, aws.ToString(e.Id))
		if aws.ToString(e.Id) == "1" && f.calls <= f.refuse {
			out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("ThrottlingException"), Message: aws.String("slow down")})
		}
	}
	f.entries = append(f.entries, ids)
	return out, nil
}

// Entries SQS refuses are sent again, alone, and a batch refused past the
// tries is an error naming SQS's reason.
func TestSQSUnitsResendRefusedEntries(t *testing.T) {
	ctx := context.Background()
	units := []transfer.Unit{{JobID: "j", Index: 0}, {JobID: "j", Index: 1}, {JobID: "j", Index: 2}}
	f := &flakySQS{refuse: 2}
	if err := (&app.SQSUnits{Client: f, URL: "q"}).SendUnits(ctx, units); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"0", "1", "2"}, {"1"}, {"1"}}; !slices.EqualFunc(f.entries, want, slices.Equal[[]string]) {
		t.Errorf("sent %v, want %v", f.entries, want)
	}
	err := (&app.SQSUnits{Client: &flakySQS{refuse: 100}, URL: "q"}).SendUnits(ctx, units)
	if err == nil || !strings.Contains(err.Error(), "ThrottlingException") {
		t.Errorf("err %v, want the refusal named", err)
	}
}
