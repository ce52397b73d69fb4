// Package endpointsapp builds the SageMaker endpoint control clients (the
// control plane, Application Auto Scaling, CloudWatch). It lives apart from
// sagemakerapp so only the providers function links these SDKs: the mcp
// function reaches them through it (package remote).
package endpointsapp

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	sdksm "github.com/aws/aws-sdk-go-v2/service/sagemaker"

	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker/smcontrol"
)

// New is the control of describe_endpoint, shift_traffic and the cold-start
// note of an async call, over cfg's clients.
func New(cfg aws.Config) *smcontrol.Control {
	return &smcontrol.Control{
		SageMaker: sdksm.NewFromConfig(cfg),
		Scaling:   applicationautoscaling.NewFromConfig(cfg),
		Metrics:   cloudwatch.NewFromConfig(cfg),
	}
}
