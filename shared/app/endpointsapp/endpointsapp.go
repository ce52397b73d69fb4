// Package endpointsapp wires the SageMaker endpoint control clients (the
// control plane, Application Auto Scaling, CloudWatch). It lives apart from
// sagemakerapp so only the mcp function links these SDKs, not the reconciler.
package endpointsapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	sdksm "github.com/aws/aws-sdk-go-v2/service/sagemaker"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker/smcontrol"
)

// Control gives the graph the endpoint control clients: describe_endpoint,
// shift_traffic and the cold-start note of an async call.
func Control(_ context.Context, e *app.Env) error {
	e.Deps.SageMakerControl = &smcontrol.Control{
		SageMaker: sdksm.NewFromConfig(e.Config),
		Scaling:   applicationautoscaling.NewFromConfig(e.Config),
		Metrics:   cloudwatch.NewFromConfig(e.Config),
	}
	return nil
}
