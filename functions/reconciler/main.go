// Command reconciler runs on a schedule: it polls Anthropic batches in flight,
// recovers Bedrock jobs whose state event was lost, submits queued jobs when
// the model's quota has room, re-sends SageMaker async requests whose answer
// and notification were both lost, and refreshes the account's model facts
// once a day.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/accountapp"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/app/sagemakerapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	a, err := app.FromEnv(ctx, app.AddProvider(anthropicsdk.Provider), sagemakerapp.Runtime)
	app.Must("init", err)
	models := accountapp.FromAWS(a)
	accountapp.Warm(ctx, models)
	h := &handler.Reconciler{Svc: a.Graph.Reconciler, SageMaker: a.Graph.SageMaker, Models: models, Log: a.Log}
	lambda.Start(handler.TolerantResult(h.Handle))
}
