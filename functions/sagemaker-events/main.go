// Command sagemaker-events settles SageMaker async inference jobs from the success and error SNS topics.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/sagemakerapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	a, err := app.FromEnv(ctx, sagemakerapp.Runtime)
	app.Must("init", err)
	h := &handler.SageMakerEvents{Svc: a.Graph.SageMaker, Log: a.Log}
	lambda.Start(app.Fresh(a.Facts, h.Handle))
}
