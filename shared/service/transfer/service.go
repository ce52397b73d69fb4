package transfer

import (
	"context"
	"log/slog"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Service runs uploads, file submits and exports.
type Service struct {
	Jobs  jobStore
	Blobs service.Blobs
	// Bus carries the events that move file submits on (validation, units).
	Bus       service.Publisher
	Telemetry service.Telemetry
	Providers *service.Registry
	Models    service.Models
	// InputAllow are s3:// prefixes open to every caller's input_uri.
	InputAllow []string
	Clock      service.Clock
	Log        *slog.Logger
	// Bucket is the s3:// root of uploads, inputs and exports; JobPrefix
	// prefixes part names.
	Bucket, JobPrefix string
	Batch             batchStarter
	// Results pages through a job's stored results (exports).
	Results ResultsPager
	// Merged reads results merged over a job's retries (export latest).
	Merged MergedResults
	// Units carries the units of jobs over many files (see fanout.go); nil
	// refuses such jobs at validation.
	Units UnitQueue
	// UnitBytes is the input one check unit reads (0: DefaultUnitBytes).
	UnitBytes int64
	// Parquet writes format=parquet exports (nil: that format fails).
	Parquet NewTable
}

// jobStore is what file submits, uploads and exports read and write: jobs,
// and the slots that keep one validation of a job at a time.
type jobStore interface {
	CreateJob(ctx context.Context, j *job.Job) error
	GetJob(ctx context.Context, id string) (*job.Job, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	Slot(ctx context.Context, key string) (holder string, err error)
	SwapSlot(ctx context.Context, key, old, next string) (bool, error)
}

// inputs are where a caller's input_uri may point.
func (s *Service) inputs() service.CallerInputs {
	return service.CallerInputs{Bucket: s.Bucket, Allow: s.InputAllow}
}

// limitsFor are prov's limits for a model (the account's quotas laid over
// them where the provider counts jobs against quotas).
func (s *Service) limitsFor(prov service.BatchProvider, modelID string) service.BatchLimits {
	return s.Models.LimitsFor(prov, s.Providers.Abilities(prov.Name()).QuotaLimited, modelID)
}

// ResultsPager pages through a job's stored results (the query flow).
type ResultsPager interface {
	ResultsPage(ctx context.Context, owner string, q service.ResultsQuery) (service.ResultsPage, error)
}

// MergedResults pages through a job's results with each record's newest
// outcome across its retries.
type MergedResults interface {
	LatestResults(ctx context.Context, owner string, q service.ResultsQuery) (service.ResultsPage, error)
}
