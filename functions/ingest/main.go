// Command ingest streams a finished job's output JSONL into DynamoDB on "Job Output Ready".
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
	h := &handler.Ingest{Svc: a.Service, Log: a.Log}
	lambda.Start(h.Handle)
}
