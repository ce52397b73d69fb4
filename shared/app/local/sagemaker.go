package local

import (
	"context"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	sdksm "github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker/smcontrol"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simsagemaker "github.com/mcpbatch/mcpbatch/shared/sim/sagemaker"
)

// SimEndpoints are the endpoints make dev allows and simulates when
// MCPBATCH_SAGEMAKER_ENDPOINTS is not set: an async endpoint with one
// instance, a real-time one, a real-time canary pair at 90/10 and an async
// endpoint scaled to zero (its first request waits for a simulated start).
var SimEndpoints = []string{"demo-async", "demo-realtime", "demo-canary", "demo-async-zero"}

// simEndpointConfigs are the variants and scaling of the simulated endpoints;
// start is how long the scaled-to-zero endpoint takes to start an instance.
func simEndpointConfigs(start time.Duration) []simsagemaker.SageMakerEndpoint {
	return []simsagemaker.SageMakerEndpoint{
		{Name: "demo-async", Async: true, MinCapacity: 0, MaxCapacity: 2},
		{Name: "demo-realtime"},
		{Name: "demo-canary", MinCapacity: 1, MaxCapacity: 4, Variants: []simsagemaker.SageMakerVariant{
			{Name: "primary", Weight: 90, Instances: 1}, {Name: "canary", Weight: 10, Instances: 1}}},
		{Name: "demo-async-zero", Async: true, MinCapacity: 0, MaxCapacity: 2, StartDelay: start,
			Variants: []simsagemaker.SageMakerVariant{{Name: "AllTraffic", Weight: 1, Instances: 0}}},
	}
}

// DevOperators may shift traffic in make dev when MCPBATCH_SAGEMAKER_OPERATORS
// is not set: the dev key's owner and the -auth none caller.
var DevOperators = []string{DevKeyName, "local-dev"}

// SageMakerLocal is make dev's SageMaker: the runtime simulator on a loopback
// port, reached by the real sagemakerruntime client; its SNS notifications go
// over the local bus to the same handler the sagemaker-events Lambda runs.
type SageMakerLocal struct {
	Sim *simsagemaker.SageMakerSim
	URL string
}

// startSageMaker starts the SageMaker runtime simulator and gives d its
// client and endpoints.
func (l *Suite) startSageMaker(o Options, blobs blob.Store, d *graph.Deps) error {
	endpoints := config.List(os.Getenv(config.EnvSageMakerEndpoints))
	if len(endpoints) == 0 {
		endpoints = SimEndpoints
	}
	operators := config.List(os.Getenv(config.EnvSageMakerOperators))
	if len(operators) == 0 {
		operators = DevOperators
	}
	s := &simsagemaker.SageMakerSim{
		Blobs: blobs, Log: o.Log, Endpoints: endpoints, AsyncDelay: o.StepDelay, EndpointConfigs: simEndpointConfigs(2 * o.StepDelay),
		OutputPrefix:  blob.Join(Bucket, config.SageMakerOutputPrefix),
		FailurePrefix: blob.Join(Bucket, config.SageMakerFailurePrefix),
		Emit:          func(_ context.Context, ev []byte) { l.Bus.Send(ev) },
	}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	l.started(s)
	// The real SDK clients, every one pointed at the simulator.
	cfg := aws.Config{
		Region:       sim.DefaultRegion,
		Credentials:  credentials.NewStaticCredentialsProvider("simulated", "simulated", ""),
		BaseEndpoint: aws.String(url),
		HTTPClient:   sim.HTTPClient(),
	}
	d.SageMakerRuntime = sagemaker.New(sagemakerruntime.NewFromConfig(cfg), o.Log)
	d.SageMakerControl = &smcontrol.Control{
		SageMaker: sdksm.NewFromConfig(cfg), Scaling: applicationautoscaling.NewFromConfig(cfg), Metrics: cloudwatch.NewFromConfig(cfg),
	}
	d.SageMakerEndpoints = endpoints
	d.SageMakerOperators = operators
	l.SageMaker = &SageMakerLocal{Sim: s, URL: url}
	return nil
}
