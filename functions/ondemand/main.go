// Command ondemand runs on-demand jobs record by record through bedrock-runtime on
// "On-Demand Run Requested", continuing across invocations from a checkpoint.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/awsreports"
	"github.com/mcpbatch/mcpbatch/shared/app/vectorsapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	vw := &vectorsapp.Wiring{}
	a, err := app.FromEnv(ctx, awsreports.OnDemandModel, vw.Option)
	app.Must("init", err)
	h := &handler.OnDemand{Svc: a.Graph.OnDemandRuns, Log: a.Log}
	lambda.Start(handler.Tolerant(app.Fresh(a.Facts, h.Handle)))
}
