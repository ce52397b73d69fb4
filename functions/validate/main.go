// Command validate checks a file submit's input on "Input Validation Requested":
// every line parsed and checked (duplicate ids by fingerprint, a record cap),
// the provider inputs written, the job started; an invalid file fails the job
// with the first problems and their line numbers. It is sized for a 1 GiB file,
// which the mcp function (60 s, 512 MB) could not read in time.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	a, err := app.FromEnv(ctx, app.AddProvider(anthropicsdk.Provider))
	app.Must("init", err)
	h := &handler.Validate{Svc: a.Graph.Transfer, Log: a.Log}
	lambda.Start(handler.Tolerant(app.Fresh(a.Facts, h.Handle)))
}
