// Command reconciler runs on a schedule: it polls Anthropic batches in flight,
// recovers Bedrock jobs whose state event was lost, submits queued jobs
// when the model's quota has room, and refreshes the account's model facts
// once a day.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/accountapp"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	// Probing for lost SageMaker notifications reads S3 only: no runtime client.
	a, err := app.FromEnv(ctx, anthropicapp.Provider)
	app.Must("init", err)
	models := accountapp.FromAWS(a)
	accountapp.Warm(ctx, models)
	h := &handler.Reconciler{Svc: a.Graph.Reconciler, SageMaker: a.Graph.SageMaker, Models: models, Log: a.Log}
	lambda.Start(handler.TolerantResult(h.Handle))
}
