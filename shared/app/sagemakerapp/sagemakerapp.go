// Package sagemakerapp wires the SageMaker runtime client. It lives apart from
// package app so only the functions that call SageMaker (mcp, reconciler)
// link it.
package sagemakerapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
)

// Runtime gives the graph the SageMaker runtime API client: invocations, and
// the reconciler's re-send of an async request whose answer was lost.
func Runtime(_ context.Context, e *app.Env) error {
	e.Deps.SageMakerRuntime = sagemaker.New(sagemakerruntime.NewFromConfig(e.Config), e.Log)
	return nil
}
