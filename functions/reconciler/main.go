// Command reconciler runs on a schedule: it polls Anthropic batches in flight,
// recovers Bedrock jobs whose state event was lost, and submits queued jobs
// when the model's quota has room.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	a, err := app.FromEnv(ctx)
	app.Must("init", err)
	app.Must("init anthropic", anthropicapp.WithAnthropic(ctx, a))
	// Probing for lost SageMaker notifications reads S3 only: no runtime client.
	sm, err := app.NewSageMaker(a.Service, nil)
	app.Must("init sagemaker", err)
	h := &handler.Reconciler{Svc: a.Service, SageMaker: sm, Log: a.Log}
	lambda.Start(h.Handle)
}
