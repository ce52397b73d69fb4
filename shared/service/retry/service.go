package retry

import (
	"context"
	"log/slog"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Service runs retry_failed and the merged results view.
type Service struct {
	Jobs  jobStore
	Blobs service.Opener
	// Providers says whether the parent's provider is still configured.
	Providers providerSet
	Batch     Submitter
	Log       *slog.Logger
}

// jobStore is what retries read and write: jobs (the parent's retry
// list), and the records of a parent and of its retries.
type jobStore interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error)
	GetRecords(ctx context.Context, rs job.RecordSet, keys []job.RecordKey) ([]job.Record, error)
}

// providerSet looks a provider up by name.
type providerSet interface {
	Lookup(name string) (service.BatchProvider, bool)
}
