// Command mcp is the MCP server behind the Lambda Function URL (RESPONSE_STREAM);
// the stack's auth mode (iam or token) decides how a caller is named.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/auth"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

func main() {
	ctx := context.Background()
	a, err := app.FromEnv(ctx)
	if err != nil {
		app.Logger().Error("init", "error", err)
		os.Exit(1)
	}
	if err := app.WithAnthropic(context.Background(), a); err != nil {
		app.Logger().Error("init", "error", err)
		os.Exit(1)
	}
	owner, err := auth.OwnerFromEnv(ctx)
	if err != nil {
		a.Log.Error("init auth", "error", err)
		os.Exit(1)
	}
	srv := &mcpserver.Server{Svc: a.Service, Presign: a.S3, Uploads: a.S3, Log: a.Log, Version: app.Version}
	srv.SageMaker = a.SageMaker
	if r, err := a.ReportsReader(); err != nil {
		a.Log.Error("init: report pipelines", "error", err)
		os.Exit(1)
	} else if r != nil {
		srv.Reports = r
	}
	lambdaurl.Start(srv.Handler(owner))
}
