// Command validate checks a file submit's input on "Input Validation Requested":
// every line parsed and checked (duplicate ids by fingerprint, a record cap),
// the provider inputs written, the job started; an invalid file fails the job
// with the first problems and their line numbers. It is sized for a 1 GiB file,
// which the mcp function (60 s, 512 MB) could not read in time. A job over
// many files is planned here and checked in units the same function reads
// from the validation queue (SQS), in parallel.
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	a, err := app.FromEnv(ctx, app.AddProvider(anthropicsdk.Provider))
	app.Must("init", err)
	tr := a.Graph.Transfer
	if url := os.Getenv(config.EnvValidateQueue); url != "" {
		tr.Units = &app.SQSUnits{Client: sqs.NewFromConfig(a.Config), URL: url}
	}
	validate := handler.Tolerant(app.Fresh(a.Facts, (&handler.Validate{Svc: tr, Log: a.Log}).Handle))
	units := &handler.Units{Svc: tr, Log: a.Log}
	// The queue's batches and the bus's events reach one function.
	lambda.Start(func(ctx context.Context, raw json.RawMessage) (any, error) {
		if ev, ok := sqsEvent(raw); ok {
			if a.Facts != nil {
				a.Facts.Maybe(ctx) // the model facts refreshed as for an event (app.Fresh)
			}
			return units.Handle(ctx, ev)
		}
		return nil, validate(ctx, raw)
	})
}

// sqsEvent reads raw as an SQS batch when it is one.
func sqsEvent(raw json.RawMessage) (events.SQSEvent, bool) {
	var ev events.SQSEvent
	if json.Unmarshal(raw, &ev) != nil || len(ev.Records) == 0 || ev.Records[0].EventSource != "aws:sqs" {
		return ev, false
	}
	return ev, true
}
