package local

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// SimEndpoints are the endpoints make dev allows and simulates when
// MCPBATCH_SAGEMAKER_ENDPOINTS is not set.
var SimEndpoints = []string{"demo-async", "demo-realtime"}

// SageMakerLocal is make dev's SageMaker: the runtime simulator on a loopback
// port, reached by the real sagemakerruntime client; its SNS notifications go
// over the local bus to the same handler the sagemaker-events Lambda runs.
type SageMakerLocal struct {
	Sim *sim.SageMakerSim
	URL string
}

// startSageMaker starts the SageMaker runtime simulator and gives d its
// client and endpoints.
func (l *Suite) startSageMaker(o Options, blobs blob.Store, d *graph.Deps) error {
	endpoints := config.List(os.Getenv(config.EnvSageMakerEndpoints))
	if len(endpoints) == 0 {
		endpoints = SimEndpoints
	}
	s := &sim.SageMakerSim{
		Blobs: blobs, Log: o.Log, Endpoints: endpoints, AsyncDelay: o.StepDelay,
		OutputPrefix:  blob.Join(Bucket, config.SageMakerOutputPrefix),
		FailurePrefix: blob.Join(Bucket, config.SageMakerFailurePrefix),
		Emit:          func(_ context.Context, ev []byte) { l.Bus.Send(ev) },
	}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	client := sagemakerruntime.NewFromConfig(aws.Config{
		Region:      sim.DefaultRegion,
		Credentials: credentials.NewStaticCredentialsProvider("simulated", "simulated", ""),
	}, func(opts *sagemakerruntime.Options) { opts.BaseEndpoint = aws.String(url) })
	d.SageMakerRuntime = sagemaker.New(client, o.Log)
	d.SageMakerEndpoints = endpoints
	l.SageMaker = &SageMakerLocal{Sim: s, URL: url}
	return nil
}

func (l *Suite) closeSageMaker() error {
	if l.SageMaker == nil {
		return nil
	}
	return l.SageMaker.Sim.Close()
}
