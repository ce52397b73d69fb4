// Command ondemand runs on-demand jobs record by record through bedrock-runtime on
// "On-Demand Run Requested", continuing across invocations from a checkpoint.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/awsreports"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	a, err := app.FromEnv(ctx)
	if err == nil {
		err = awsreports.OnDemandFromEnv(ctx, a)
	}
	if err != nil {
		app.Logger().Error("init", "error", err)
		os.Exit(1)
	}
	h := &handler.OnDemand{Svc: a.Service, Log: a.Log}
	lambda.Start(h.Handle)
}
