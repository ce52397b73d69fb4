package app

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkbedrock "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/app/lambdaenv"
	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/bus"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockbatch"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/refresh"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

// Logger is the JSON logger every function uses (lambdaenv.Logger).
func Logger() *slog.Logger { return lambdaenv.Logger() }

// AWS is the suite wired to real AWS services from the stack's environment.
type AWS struct {
	// Config is the AWS configuration loaded once per container.
	Config aws.Config
	Graph  *graph.Graph
	S3     *s3blob.Store
	Log    *slog.Logger
	// Facts reads the account's stored model facts (quotas, account-only
	// models, on-demand rates) again while the container stays warm; FromEnv
	// laid them over the catalog at start (nil: none can be stored). Every
	// function starts this one way, so validate splits by the account's
	// quotas, ingest prices its models and on demand paces at its rates.
	Facts *refresh.Reloader
}

// Env is what an Option sees while the graph is being put together.
type Env struct {
	Config aws.Config
	Log    *slog.Logger
	S3     *s3blob.Store
	Deps   graph.Deps
}

// Option adds what one function needs beyond the common adapters (the
// Anthropic provider, the SageMaker or bedrock-runtime client). Each lives in
// its own package so only the functions that call that API link its SDK.
type Option func(ctx context.Context, e *Env) error

// FromEnv builds clients once per Lambda container from the environment the
// stack sets, applies opts, and builds the service graph.
func FromEnv(ctx context.Context, opts ...Option) (*AWS, error) {
	log := Logger()
	env := map[string]string{}
	for _, name := range []string{config.EnvTable, config.EnvBucket, config.EnvBus, config.EnvBedrockRoleARN} {
		v, err := config.Must(name)
		if err != nil {
			return nil, err
		}
		env[name] = v
	}
	cfg, err := lambdaenv.Config()
	if err != nil {
		return nil, err
	}
	blobs := s3blob.New(s3.NewFromConfig(cfg), s3blob.Options{})
	bucket := "s3://" + strings.TrimPrefix(env[config.EnvBucket], "s3://")
	e := &Env{Config: cfg, Log: log, S3: blobs, Deps: graph.Deps{
		Store: dynamostore.New(dynamodb.NewFromConfig(cfg), env[config.EnvTable],
			dynamostore.WithOverflow(blobs, bucket+"/"+config.PrefixJobs)),
		Blobs: blobs, Log: log,
		Bus:       &bus.EventBridge{Client: eventbridge.NewFromConfig(cfg), BusName: env[config.EnvBus], Source: config.EventSource},
		Bucket:    bucket,
		JobPrefix: config.Get(config.EnvJobPrefix, config.DefaultJobPrefix),
		Providers: []service.BatchProvider{&bedrockbatch.Provider{Client: bedrock.New(sdkbedrock.NewFromConfig(cfg), log), RoleARN: env[config.EnvBedrockRoleARN], ModelIDs: models()}},
		// One EMF emitter per function: its stdout is the log stream CloudWatch extracts metrics from.
		Metrics: &metrics.Emitter{W: os.Stdout, Namespace: config.Get(config.EnvMetricsNamespace, metrics.DefaultNamespace)},
	}}
	if err := Settings(&e.Deps); err != nil {
		return nil, err
	}
	for _, o := range opts {
		if err := o(ctx, e); err != nil {
			return nil, err
		}
	}
	if err := Catalog(&e.Deps, cfg.Region); err != nil {
		return nil, err
	}
	g := graph.New(e.Deps)
	return &AWS{Config: cfg, Graph: g, S3: blobs, Log: log, Facts: LoadModelFacts(ctx, g.Core, log)}, nil
}

// Fresh has each invocation of an event handler first reload the stored
// model facts when the ones read are older than the Reloader's period (the
// event functions' ReloadModelFacts; nil r: h as it is).
func Fresh[E any](r *refresh.Reloader, h func(context.Context, E) error) func(context.Context, E) error {
	if r == nil {
		return h
	}
	return func(ctx context.Context, ev E) error {
		r.Maybe(ctx)
		return h(ctx, ev)
	}
}

func models() []string {
	if m := config.List(os.Getenv(config.EnvBedrockModels)); len(m) > 0 {
		return m
	}
	return config.DefaultBedrockModels
}

// Must ends a Lambda's init on err (lambdaenv.Must).
func Must(what string, err error) { lambdaenv.Must(what, err) }

// AddProvider is an Option adding the batch provider mk builds over the
// function's configuration and object storage; mk returns nil when the
// provider is not configured. It lets a provider package (anthropicsdk) stay
// out of package app, so the providers function does not link the graph.
func AddProvider(mk func(ctx context.Context, cfg aws.Config, blobs *s3blob.Store, log *slog.Logger) service.BatchProvider) Option {
	return func(ctx context.Context, e *Env) error {
		if p := mk(ctx, e.Config, e.S3, e.Log); p != nil {
			e.Deps.Providers = append(e.Deps.Providers, p)
		}
		return nil
	}
}
