// Command ingest streams a finished job's output JSONL into DynamoDB on "Job Output Ready".
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/app/vectorsapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	vw := &vectorsapp.Wiring{}
	a, err := app.FromEnv(ctx, app.AddProvider(anthropicsdk.Provider), vw.Option)
	app.Must("init", err)
	h := &handler.Ingest{Svc: a.Graph.Batch, Log: a.Log}
	lambda.Start(handler.Tolerant(app.Fresh(a.Facts, h.Handle)))
}
