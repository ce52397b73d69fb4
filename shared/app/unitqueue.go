package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"golang.org/x/sync/errgroup"

	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// SQSSender is the part of the SQS client the validation queue uses.
type SQSSender interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// sqsBatchMax is the most messages one SendMessageBatch takes (Amazon SQS
// API Reference, SendMessageBatch, read 2026-12-03).
const sqsBatchMax = 10

// sqsSendTries bounds the sends of a batch whose entries SQS refused in part.
const sqsSendTries = 4

// SQSUnits sends fan-out units to the validation queue (transfer.UnitQueue).
type SQSUnits struct {
	Client SQSSender
	URL    string
}

// sqsSendParallel bounds the batches sent at once: a plan of 100,000 units
// is 10,000 calls.
const sqsSendParallel = 8

// SendUnits sends units ten to a call, several calls at once, sending
// again the entries SQS refused (throttled) a few times before giving up.
func (q *SQSUnits) SendUnits(ctx context.Context, units []transfer.Unit) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(sqsSendParallel)
	for start := 0; start < len(units); start += sqsBatchMax {
		batch := units[start:min(start+sqsBatchMax, len(units))]
		g.Go(func() error { return q.sendBatch(gctx, batch) })
	}
	return g.Wait()
}

func (q *SQSUnits) sendBatch(ctx context.Context, batch []transfer.Unit) error {
	entries := make([]types.SendMessageBatchRequestEntry, len(batch))
	for i, u := range batch {
		body, err := json.Marshal(u)
		if err != nil {
			return fmt.Errorf("encode unit %s/%s/%d: %w", u.JobID, u.Kind, u.Index, err)
		}
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(body))}
	}
	for try := 1; len(entries) > 0; try++ {
		out, err := q.Client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
		if err != nil {
			return fmt.Errorf("send units: %w", err)
		}
		if len(out.Failed) == 0 {
			return nil
		}
		if try == sqsSendTries {
			f := out.Failed[0]
			return fmt.Errorf("send units: %d refused, e.g. %s: %s", len(out.Failed), aws.ToString(f.Code), aws.ToString(f.Message))
		}
		failed := map[string]bool{}
		for _, f := range out.Failed {
			failed[aws.ToString(f.Id)] = true
		}
		var again []types.SendMessageBatchRequestEntry
		for _, e := range entries {
			if failed[aws.ToString(e.Id)] {
				again = append(again, e)
			}
		}
		entries = again
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(try) * 100 * time.Millisecond):
		}
	}
	return nil
}
