// Package sagemakerapp wires the SageMaker runtime client. It lives apart from
// package app so only the functions that call SageMaker (mcp, sagemaker-events)
// link it.
package sagemakerapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
)

// WithSageMaker sets a.SageMaker: the SageMaker use cases over the runtime API
// client and the suite's store, bucket and bus.
func WithSageMaker(ctx context.Context, a *app.AWS) error {
	m, err := app.NewSageMaker(a.Service, sagemaker.New(sagemakerruntime.NewFromConfig(a.Config), a.Log))
	if err != nil {
		return err
	}
	a.SageMaker = m
	return nil
}
