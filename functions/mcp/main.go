// Command mcp is the MCP server behind the Lambda Function URL (RESPONSE_STREAM;
// AWS_IAM or bearer-token auth, chosen at deploy time).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicapp"
	"github.com/mcpbatch/mcpbatch/shared/app/auth"
	"github.com/mcpbatch/mcpbatch/shared/app/sagemakerapp"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

func main() {
	ctx := context.Background()
	a, err := app.FromEnv(ctx)
	app.Must("init", err)
	app.Must("init anthropic", anthropicapp.WithAnthropic(ctx, a))
	app.Must("init sagemaker", sagemakerapp.WithSageMaker(ctx, a))
	owner, err := auth.OwnerFromEnv(a.Config)
	app.Must("init auth", err)
	reports, err := a.ReportsReader()
	app.Must("init report pipelines", err)
	srv := &mcpserver.Server{Svc: a.Service, Presign: a.S3, Uploads: a.S3, SageMaker: a.SageMaker, Log: a.Log, Version: app.Version}
	if reports != nil {
		srv.Reports = reports
	}
	lambdaurl.Start(srv.Handler(owner))
}
