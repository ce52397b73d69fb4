// Command reconciler runs on a schedule: it polls Anthropic batches in flight,
// recovers Bedrock jobs whose state event was lost, and submits queued jobs
// when the model's quota has room.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	a, err := app.FromEnv(context.Background())
	if err != nil {
		app.Logger().Error("init", "error", err)
		os.Exit(1)
	}
	if err := anthropicapp.WithAnthropic(context.Background(), a); err != nil {
		app.Logger().Error("init", "error", err)
		os.Exit(1)
	}
	// Probing for lost SageMaker notifications reads S3 only: no runtime client.
	sm, err := app.NewSageMaker(a.Service, nil)
	if err != nil {
		app.Logger().Error("init", "error", err)
		os.Exit(1)
	}
	h := &handler.Reconciler{Svc: a.Service, SageMaker: sm, Log: a.Log}
	lambda.Start(h.Handle)
}
