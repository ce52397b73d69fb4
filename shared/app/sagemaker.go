package app

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// NewSageMaker builds the SageMaker use cases over a runtime from the environment
// settings (shared with make dev, which passes the simulator's client).
func NewSageMaker(svc *service.Service, rt service.SageMakerRuntime) (*service.SageMaker, error) {
	m := &service.SageMaker{
		Svc: svc, Runtime: rt,
		Endpoints:   config.List(os.Getenv(config.EnvSageMakerEndpoints)),
		InputPrefix: blob.Join(svc.Bucket, config.SageMakerInputPrefix),
	}
	var err error
	if m.MaxResponseBytes, err = positiveInt(config.EnvSageMakerMaxResponseBytes, config.DefaultSageMakerMaxResponseBytes); err != nil {
		return nil, err
	}
	secs, err := positiveInt(config.EnvSageMakerDeadlineSeconds, config.DefaultSageMakerDeadlineSeconds)
	if err != nil {
		return nil, err
	}
	m.Deadline = time.Duration(secs) * time.Second
	return m, nil
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
