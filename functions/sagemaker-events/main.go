// Command sagemaker-events settles SageMaker async inference jobs from the success and error SNS topics.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/sagemakerapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	a, err := app.FromEnv(context.Background())
	if err != nil {
		app.Logger().Error("init", "error", err)
		os.Exit(1)
	}
	if err := sagemakerapp.WithSageMaker(context.Background(), a); err != nil {
		a.Log.Error("init sagemaker", "error", err)
		os.Exit(1)
	}
	h := &handler.SageMakerEvents{Svc: a.SageMaker, Log: a.Log}
	lambda.Start(h.Handle)
}
