package app

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
)

// PipelinesFile is where a function finds the pipelines config: the env var, or
// pipelines.json beside the bootstrap (the build copies it into the asset).
func PipelinesFile() string {
	if f := os.Getenv(config.EnvPipelinesFile); f != "" {
		return f
	}
	exe, err := os.Executable()
	if err != nil {
		return "pipelines.json"
	}
	return filepath.Join(filepath.Dir(exe), "pipelines.json")
}

// ReportsReader is the runner the mcp function's report tools use: it reads runs
// and reports and requests runs over the bus, and never notifies. It returns
// nil, nil when the function was deployed without a pipelines file.
func (a *AWS) ReportsReader() (*pipeline.Runner, error) {
	cfgFile, err := pipeline.Load(PipelinesFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	bucket := a.Graph.Core.Bucket
	return &pipeline.Runner{
		Config: cfgFile, Svc: a.Graph.Batch, Jobs: a.Graph.Core.Store, Blobs: a.S3, Bus: a.Graph.Core.Bus,
		Bucket: bucket, TopicARN: os.Getenv(config.EnvReportTopic), Log: a.Log,
		SourceFor: func(p *pipeline.Pipeline, date string) (pipeline.Source, error) {
			return pipeline.BlobSource{Blobs: a.S3, Prefix: pipeline.Expand(p.Source.S3Prefix, bucket, date)}, nil
		},
	}, nil
}
