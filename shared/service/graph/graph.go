// Package graph builds the service graph, once, for the Lambdas (shared/app)
// and for make dev (shared/app/local): the two differ only in the adapters
// they pass in Deps.
package graph

import (
	"log/slog"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/ondemand"
	"github.com/mcpbatch/mcpbatch/shared/service/query"
	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
	"github.com/mcpbatch/mcpbatch/shared/service/retry"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Deps are the adapters and settings of one deployment.
type Deps struct {
	Store store.Store
	Blobs service.Blobs
	Bus   service.Publisher
	Log   *slog.Logger
	Now   service.Clock
	// Bucket is the s3:// URI root of job inputs, outputs and big results.
	Bucket string
	// JobPrefix prefixes provider job names.
	JobPrefix string
	// Providers are the batch providers, in the order a submit without a
	// provider tries them.
	Providers []service.BatchProvider
	// Catalog is the model catalog restricted to the models the providers
	// allow (nil: the embedded catalog); Region picks on-demand profiles.
	Catalog *model.Catalog
	Region  string
	// InputAllow are s3:// prefixes open to every caller's input_uri.
	InputAllow []string
	// Metrics receives the flows' measurements (nil: none).
	Metrics service.Metrics

	// OnDemandModel is the runtime API of on-demand runs (nil: on-demand jobs
	// are taken and queued, but this process does not run them).
	OnDemandModel ondemand.OnDemandModel
	// Counter counts a dry run's input tokens for Bedrock models (nil: the
	// OnDemandModel's CountTokens, when it has one). A function that does not
	// run on-demand jobs (mcp) still counts its dry runs with it.
	Counter batch.TokenCounter
	// OnDemandConcurrency bounds parallel calls per run (0: the default).
	OnDemandConcurrency int

	// Vectors writes embedding jobs into their vector index (nil: a submit
	// naming an index is refused).
	Vectors batch.VectorSink

	// SageMakerRuntime is the SageMaker runtime API (nil: notifications and
	// probes only); the other SageMaker settings follow.
	SageMakerRuntime          smsvc.SageMakerRuntime
	SageMakerEndpoints        []string
	SageMakerDeadline         time.Duration
	SageMakerMaxResponseBytes int
	SageMakerInputPrefix      string
	// SageMakerControl reads and steers endpoints (describe_endpoint, shift_traffic,
	// the cold-start note); SageMakerOperators may shift traffic.
	SageMakerControl   smsvc.EndpointControl
	SageMakerOperators []string
	// SageMakerInvocationTimeouts are deployed async endpoints' default InvocationTimeoutSeconds.
	SageMakerInvocationTimeouts map[string]int

	// Batch and reconciler settings (zero: the packages' defaults).
	TimeoutHours   int
	Quota          map[string]int
	DefaultQuota   int
	StaleAfter     time.Duration
	ReconcileLimit int
}

// Graph is every use case, wired, each flow a named field (none embedded,
// so a caller names the flow it uses): Batch answers submit and cancel and
// the batch events; Queries answers get, list and results.
type Graph struct {
	// Batch is the batch flow: submit, cancel, events, ingest.
	Batch        *batch.Service
	Queries      *query.Service
	Core         *service.Core
	OnDemandRuns *ondemand.Service
	SageMaker    *smsvc.Service
	Transfer     *transfer.Service
	Reconciler   *reconcile.Service
	// Retry serves retry_failed and the merged results of retried jobs.
	Retry *retry.Service
}

// contentUser is an on-demand model that reads image and document sources.
type contentUser interface{ UseContent(*content.Store) }

// New builds the graph.
func New(d Deps) *Graph {
	core := &service.Core{
		Store: d.Store, Blobs: d.Blobs, Bus: d.Bus, Log: d.Log, Clock: d.Now,
		Providers: service.NewRegistry(d.Providers...), Bucket: d.Bucket, JobPrefix: d.JobPrefix,
		Catalog: d.Catalog, Region: d.Region, InputAllow: d.InputAllow, Metrics: d.Metrics,
	}
	counter := d.Counter
	if counter == nil {
		counter, _ = d.OnDemandModel.(batch.TokenCounter)
	}
	for _, m := range []any{d.OnDemandModel, d.Counter} {
		if cu, ok := m.(contentUser); ok && d.Blobs != nil {
			// Submits hold each record's s3:// sources to its caller's upload area;
			// the runtime reads them from the uploads prefix of the same storage.
			cu.UseContent(&content.Store{Opener: batch.BlobOpener{Blobs: d.Blobs}, Prefix: blob.Join(d.Bucket, "uploads") + "/"})
		}
	}
	od := &ondemand.Service{Jobs: d.Store, Blobs: d.Blobs, Bus: d.Bus, Results: core.ResultsWriter(), Telemetry: core.Telemetry(),
		Models: core.Models(), Providers: core.Providers, Clock: d.Now, Log: d.Log, Bucket: d.Bucket, JobPrefix: d.JobPrefix,
		Model: d.OnDemandModel, Concurrency: d.OnDemandConcurrency, Vectors: d.Vectors}
	b := &batch.Service{Store: d.Store, Blobs: d.Blobs, Bus: d.Bus, Results: core.ResultsWriter(), Telemetry: core.Telemetry(),
		Providers: core.Providers, Models: core.Models(), InputAllow: d.InputAllow, Clock: d.Now, Log: d.Log, Bucket: d.Bucket, JobPrefix: d.JobPrefix,
		OnDemand: od, RefuseCancel: smsvc.RefuseCancel, Counter: counter,
		TimeoutHours: d.TimeoutHours, Quota: d.Quota, DefaultQuota: d.DefaultQuota, Vectors: d.Vectors}
	b.Ingester = &ingest.Ingester{Blobs: d.Blobs, Records: d.Store, Checkpoints: b, ResultsPrefix: service.ResultsPrefix(d.Bucket), Log: service.Logger(d.Log),
		MaxLineBytesFor: core.Models().OutputLineCap}
	q := &query.Service{Jobs: d.Store, Records: d.Store}
	rt := &retry.Service{Jobs: d.Store, Blobs: d.Blobs, Providers: core.Providers, Batch: b, Log: d.Log}
	tr := Transfer(core, b)
	tr.Results, tr.Merged = q, rt
	rc := Reconciler(core, b, tr)
	rc.OnDemand, rc.StaleAfter, rc.ReconcileLimit = od, d.StaleAfter, d.ReconcileLimit
	return &Graph{
		Batch: b, Queries: q, Core: core, OnDemandRuns: od,
		SageMaker: &smsvc.Service{Jobs: d.Store, Blobs: d.Blobs, Results: core.ResultsWriter(), Telemetry: core.Telemetry(),
			Clock: d.Now, Log: d.Log, Bucket: d.Bucket, InputAllow: d.InputAllow,
			Runtime: d.SageMakerRuntime, Endpoints: d.SageMakerEndpoints,
			Deadline: d.SageMakerDeadline, MaxResponseBytes: d.SageMakerMaxResponseBytes, InputPrefix: d.SageMakerInputPrefix,
			Control: d.SageMakerControl, Operators: d.SageMakerOperators, InvocationTimeouts: d.SageMakerInvocationTimeouts},
		Transfer:   tr,
		Reconciler: rc,
		Retry:      rt,
	}
}

// Reconciler is the reconciler over core's adapters, the batch flow b and
// the file submits' recovery v; New adds on-demand resumes and its settings.
func Reconciler(core *service.Core, b *batch.Service, v *transfer.Service) *reconcile.Service {
	return &reconcile.Service{Jobs: core.Store, Providers: core.Providers, Bus: core.Bus, Telemetry: core.Telemetry(), Clock: core.Clock, Log: core.Log,
		Batch: b, Validations: v}
}

// Transfer is the transfer flow over core's adapters and the batch flow b;
// New adds its results pages and merged results.
func Transfer(core *service.Core, b *batch.Service) *transfer.Service {
	return &transfer.Service{Jobs: core.Store, Blobs: core.Blobs, Bus: core.Bus, Telemetry: core.Telemetry(), Providers: core.Providers,
		Models: core.Models(), InputAllow: core.InputAllow, Clock: core.Clock, Log: core.Log, Bucket: core.Bucket, JobPrefix: core.JobPrefix, Batch: b}
}
