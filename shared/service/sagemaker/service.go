package sagemaker

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Service runs the SageMaker use cases: async invocations tracked as one-record
// jobs (InvokeEndpointAsync, completed by SNS notifications) and real-time
// InvokeEndpoint calls.
type Service struct {
	Jobs  jobStore
	Blobs service.Blobs
	// Results stores each job's one result.
	Results   store.Writer
	Telemetry service.Telemetry
	Clock     service.Clock
	Log       *slog.Logger
	// Bucket is the s3:// root of the inputs when InputPrefix is empty.
	Bucket string
	// InputAllow are s3:// prefixes open to every caller's input_uri.
	InputAllow []string
	// Runtime is the SageMaker runtime API (nil where only notifications are read).
	Runtime SageMakerRuntime
	// Endpoints are the endpoint names callers may invoke (deploy-time configuration).
	Endpoints []string
	// Deadline bounds one real-time invoke_endpoint call, retries included, so the
	// tool call ends inside the MCP client's own timeout.
	Deadline time.Duration
	// MaxResponseBytes caps a real-time response returned to the caller.
	MaxResponseBytes int
	// InputPrefix is where bodies over the inline limit are streamed (s3://bucket/sagemaker/input).
	InputPrefix string
	// Control reads and steers endpoints (nil: describe_endpoint and shift_traffic are unavailable).
	Control EndpointControl
	// Operators are the owners who may shift traffic (deploy-time configuration).
	Operators []string
	// InvocationTimeouts are deployed endpoints' InvocationTimeoutSeconds for calls that give none.
	InvocationTimeouts map[string]int
}

// jobStore is what the SageMaker flow reads and writes of its jobs.
type jobStore interface {
	CreateJob(ctx context.Context, j *job.Job) error
	GetJob(ctx context.Context, id string) (*job.Job, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	ListInFlight(ctx context.Context, provider string, updatedBefore time.Time, limit int) ([]*job.Job, error)
}
