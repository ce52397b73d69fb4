// Package service holds the use cases (submit, get, results, cancel, list, provider
// events, ingest) over small ports. It imports no AWS SDK; shared/app wires adapters in.
package service

import (
	"context"
	"io"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// BatchSubmit asks a batch provider to start one provider job.
type BatchSubmit struct {
	Name        string // provider job name, also the idempotency token
	Model       string
	InputURI    string
	OutputURI   string
	Tags        map[string]string
	TimeoutHrs  int
	ClientToken string
}

// BatchState is a provider's view of one provider job.
type BatchState struct {
	Ref     string
	Name    string
	Status  string // the provider's own word
	Message string
}

// BatchProvider is a batch inference service (Bedrock today).
type BatchProvider interface {
	Submit(ctx context.Context, in BatchSubmit) (ref string, err error)
	Get(ctx context.Context, ref string) (BatchState, error)
	Stop(ctx context.Context, ref string) error
	// EncodeRecord renders input record i as one line in the provider's native
	// format; a *job.FieldError names records[i].<field>.
	EncodeRecord(i int, model string, in job.Input, p job.Params) ([]byte, error)
	// ParseOutputLine turns one output line into a record; an error is a bad line.
	ParseOutputLine(line []byte) (job.Record, error)
	// OutputFiles lists where a finished provider job put its result lines.
	OutputFiles(part job.Part) (files []string, manifest string)
}

// Blobs is the object storage the service uses.
type Blobs interface {
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
}

// Publisher sends events to the project bus.
type Publisher interface {
	Publish(ctx context.Context, detailType string, detail any) error
}

// Ingester streams output files into the store.
type Ingester interface {
	Ingest(ctx context.Context, j *job.Job, files []ingest.File, parse ingest.Parser, known func(string) bool) (ingest.Result, error)
}

var _ Blobs = blob.Store(nil)

// Clock is injectable for tests.
type Clock func() time.Time
