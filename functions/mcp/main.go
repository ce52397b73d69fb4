// Command mcp is the MCP server behind the Lambda Function URL (RESPONSE_STREAM;
// AWS_IAM or bearer-token auth, chosen at deploy time).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/announceapp"
	"github.com/mcpbatch/mcpbatch/shared/app/auth"
	"github.com/mcpbatch/mcpbatch/shared/app/mcpapp"
	"github.com/mcpbatch/mcpbatch/shared/app/remoteapp"
	"github.com/mcpbatch/mcpbatch/shared/app/runtimeapp"
	"github.com/mcpbatch/mcpbatch/shared/app/sagemakerapp"
	"github.com/mcpbatch/mcpbatch/shared/app/vectorsapp"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
)

func main() {
	ctx := context.Background()
	vw := &vectorsapp.Wiring{}
	a, err := app.FromEnv(ctx, remoteapp.Providers, sagemakerapp.Runtime, runtimeapp.Counter, vw.Option)
	app.Must("init", err)
	owner, err := auth.OwnerFromEnv(a.Config)
	app.Must("init auth", err)
	reports, err := a.ReportsReader()
	app.Must("init report pipelines", err)
	srv := mcpapp.New(a.Graph, mcpapp.Parts{Links: a.S3, Reports: reports, Notify: announceapp.Checker(a),
		Indexes: vw.Tools(a, &bedrockrt.Model{Client: bedrockruntime.NewFromConfig(a.Config)}), Log: a.Log})
	lambdaurl.Start(app.ReloadModelFacts(srv.Handler(owner), a.Facts))
}
