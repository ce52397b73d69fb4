// Command providers makes the provider calls the mcp function does not link
// (package remote): Anthropic Message Batches through the official SDK, and
// the SageMaker endpoint control plane. mcp invokes it synchronously.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/app/endpointsapp"
	"github.com/mcpbatch/mcpbatch/shared/app/lambdaenv"
	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/remote"
)

func main() {
	ctx := context.Background()
	log := lambdaenv.Logger()
	cfg, err := lambdaenv.Config()
	lambdaenv.Must("init", err)
	srv := &remote.Server{Control: endpointsapp.New(cfg), Log: log}
	// A key that cannot be read ends the init, so Lambda tries again on the
	// next call rather than keeping an instance that refuses Anthropic.
	c, err := anthropicsdk.Load(ctx, cfg, s3blob.New(s3.NewFromConfig(cfg), s3blob.Options{}))
	lambdaenv.Must("init: read the Anthropic API key", err)
	if c != nil {
		srv.Anthropic = c
	} else {
		log.InfoContext(ctx, "no Anthropic API key configured; Anthropic calls are refused")
	}
	lambda.Start(srv.Handle)
}
