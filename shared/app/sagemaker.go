package app

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
)

// Settings reads the deployment's settings that need no client from the
// environment into d (after Bucket is set): SageMaker endpoints and limits,
// the batch quota and the reconciler's staleness. make dev reads the same.
func Settings(d *graph.Deps) error {
	d.SageMakerEndpoints = config.List(os.Getenv(config.EnvSageMakerEndpoints))
	d.SageMakerOperators = config.List(os.Getenv(config.EnvSageMakerOperators))
	var err error
	if d.SageMakerInvocationTimeouts, err = config.EndpointSeconds(os.Getenv(config.EnvSageMakerInvocationTimeouts)); err != nil {
		return err
	}
	d.SageMakerInputPrefix = blob.Join(d.Bucket, config.SageMakerInputPrefix)
	if d.SageMakerMaxResponseBytes, err = positiveInt(config.EnvSageMakerMaxResponseBytes, config.DefaultSageMakerMaxResponseBytes); err != nil {
		return err
	}
	secs, err := positiveInt(config.EnvSageMakerDeadlineSeconds, config.DefaultSageMakerDeadlineSeconds)
	if err != nil {
		return err
	}
	d.SageMakerDeadline = time.Duration(secs) * time.Second
	if v := os.Getenv(config.EnvBedrockQuota); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: %q is not a quota of at least 1", config.EnvBedrockQuota, v)
		}
		d.DefaultQuota = n
	}
	if d.Quota, err = config.Quotas(os.Getenv(config.EnvBedrockQuotas)); err != nil {
		return err
	}
	d.InputAllow = config.List(os.Getenv(config.EnvInputAllow))
	if err := service.CheckInputAllow(d.InputAllow); err != nil {
		return fmt.Errorf("%s: %w", config.EnvInputAllow, err)
	}
	d.StaleAfter, err = config.Minutes(config.EnvStaleMinutes)
	return err
}

func positiveInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("environment variable %s=%q: want a positive integer", name, v)
	}
	return n, nil
}
