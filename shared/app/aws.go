package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	sdkbedrock "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/bus"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

// Logger is the JSON logger every function uses; MCPBATCH_LOG_LEVEL picks the level.
func Logger() *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(config.Get(config.EnvLogLevel, "INFO")))
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// AWS is the suite wired to real AWS services from the stack's environment.
type AWS struct {
	// Config is the AWS configuration loaded once per container; the provider
	// wiring (anthropicapp, sagemakerapp, awsreports) builds its clients from it.
	Config  aws.Config
	Service *service.Service
	S3      *s3blob.Store
	Log     *slog.Logger

	// SageMaker runs the SageMaker async and real-time use cases; set by
	// sagemakerapp.WithSageMaker in the functions that serve them.
	SageMaker *service.SageMaker
}

// FromEnv builds clients once per Lambda container from the environment the stack sets.
func FromEnv(ctx context.Context) (*AWS, error) {
	log := Logger()
	env := map[string]string{}
	for _, name := range []string{config.EnvTable, config.EnvBucket, config.EnvBus, config.EnvBedrockRoleARN} {
		v, err := config.Must(name)
		if err != nil {
			return nil, err
		}
		env[name] = v
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	st := dynamostore.New(dynamodb.NewFromConfig(cfg), env[config.EnvTable])
	blobs := s3blob.New(s3.NewFromConfig(cfg), s3blob.Options{})
	bucket := "s3://" + strings.TrimPrefix(env[config.EnvBucket], "s3://")
	svc := &service.Service{
		Store: st, Blobs: blobs, Log: log,
		Bus:       &bus.EventBridge{Client: eventbridge.NewFromConfig(cfg), BusName: env[config.EnvBus], Source: config.EventSource},
		Providers: service.NewRegistry(&BedrockProvider{Client: bedrock.New(sdkbedrock.NewFromConfig(cfg), log), RoleARN: env[config.EnvBedrockRoleARN], ModelIDs: models()}),
		Bucket:    bucket,
		JobPrefix: config.Get(config.EnvJobPrefix, config.DefaultJobPrefix),
	}
	// Submit side of on-demand runs; only the ondemand function gives it a model
	// (OnDemandFromEnv), so the other binaries do not link the runtime client.
	svc.OnDemand = &service.OnDemand{}
	svc.Ingester = &ingest.Ingester{Blobs: blobs, Records: st, Checkpoints: svc, ResultsPrefix: bucket + "/results", Log: log}
	return &AWS{Config: cfg, Service: svc, S3: blobs, Log: log}, nil
}

func models() []string {
	if m := config.List(os.Getenv(config.EnvBedrockModels)); len(m) > 0 {
		return m
	}
	return config.DefaultBedrockModels
}

// Must ends a Lambda's init on err: a function that cannot wire itself must not
// take events it would only fail (Lambda reports the init error and retries).
func Must(what string, err error) {
	if err != nil {
		Logger().Error(what, "error", err)
		os.Exit(1)
	}
}
