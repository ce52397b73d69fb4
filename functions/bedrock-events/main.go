// Command bedrock-events applies Bedrock "Batch Inference Job State Change" events.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	a, err := app.FromEnv(context.Background())
	app.Must("init", err)
	h := &handler.BedrockEvents{Svc: a.Graph.Batch, Log: a.Log}
	lambda.Start(handler.Tolerant(app.Fresh(a.Facts, h.Handle)))
}
