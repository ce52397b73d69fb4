// Package sagemakerapp wires the SageMaker clients. It lives apart from
// package app so only the functions that call SageMaker (mcp, reconciler)
// link them.
package sagemakerapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	sdksm "github.com/aws/aws-sdk-go-v2/service/sagemaker"
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

// Control gives the graph the endpoint control clients: the SageMaker control
// plane, Application Auto Scaling and CloudWatch (describe_endpoint,
// shift_traffic, the cold-start note of an async call).
func Control(_ context.Context, e *app.Env) error {
	e.Deps.SageMakerControl = &sagemaker.Control{
		SageMaker: sdksm.NewFromConfig(e.Config),
		Scaling:   applicationautoscaling.NewFromConfig(e.Config),
		Metrics:   cloudwatch.NewFromConfig(e.Config),
	}
	return nil
}
