// Package runtimeapp gives a function the Bedrock runtime calls it makes
// outside an on-demand run: the mcp function's dry-run token counts. It lives
// apart from package app so only the functions that call bedrock-runtime link it.
package runtimeapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
)

// Counter has the graph count a dry run's input tokens for Bedrock models with
// CountTokens (bedrock-runtime), as make dev does: the submit_batch
// documentation promises counted estimates.
func Counter(_ context.Context, e *app.Env) error {
	e.Deps.Counter = &bedrockrt.Model{Client: bedrockruntime.NewFromConfig(e.Config)}
	return nil
}
