// Command mcp is the MCP server behind the Lambda Function URL (RESPONSE_STREAM, AWS_IAM).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

func main() {
	a, err := app.FromEnv(context.Background())
	if err != nil {
		app.Logger().Error("init", "error", err)
		os.Exit(1)
	}
	srv := &mcpserver.Server{Svc: a.Service, Presign: a.S3, Log: a.Log, Version: app.Version}
	srv.SageMaker = a.SageMaker
	lambdaurl.Start(srv.Handler(app.IAMOwner))
}
