// Package batch runs jobs on batch providers: submit (validation, the split into
// provider jobs, input files), starting parts within a provider's job quota
// and the job's budget (budget.go), cancel, provider state changes (events and
// polls) and ingest of the output.
// Everything provider-specific is asked of the service.BatchProvider the job
// names; on-demand runs are handed to the on-demand flow.
package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Ingester streams output files into the store.
type Ingester interface {
	Ingest(ctx context.Context, j *job.Job, files []ingest.File, parse ingest.Parser, resolve ingest.IDResolver) (ingest.Result, error)
}

// onDemandSubmitter takes the submits that run on demand.
type onDemandSubmitter interface {
	SubmitOnDemand(ctx context.Context, req SubmitRequest) (*job.Job, error)
}

// Service runs the batch use cases. Its fields are its dependencies.
type Service struct {
	Store store.Store
	Blobs service.Blobs
	// Bus carries the events that move jobs on (output ready, on-demand runs).
	Bus service.Publisher
	// Results stores the records of ended parts.
	Results   store.Writer
	Telemetry service.Telemetry
	Providers *service.Registry
	Models    service.Models
	// InputAllow are s3:// prefixes open to every caller's input references.
	InputAllow []string
	Clock      service.Clock
	Log        *slog.Logger
	// Bucket is the s3:// root of job inputs and outputs; JobPrefix prefixes
	// provider job names so the event rule matches only this stack's jobs.
	Bucket, JobPrefix string
	Ingester          Ingester
	// OnDemand takes small jobs on demand (nil: batch only).
	OnDemand onDemandSubmitter
	// RefuseCancel refuses cancel_job for jobs no provider can stop (nil: none).
	RefuseCancel func(*job.Job) error
	// TimeoutHours is the provider job timeout (Bedrock: 24..168; 0: the provider's default).
	TimeoutHours int
	// Quota is the per-model limit of submitted + in-progress jobs of a
	// quota-limited provider; models not listed get DefaultQuota (0: the package's DefaultQuota).
	Quota        map[string]int
	DefaultQuota int
	// Vectors writes embedding jobs' vectors into their index (nil: submits
	// naming an index are refused).
	Vectors VectorSink
	// Counter counts a sample of a dry run's records exactly (nil: the
	// estimate stays at one token per 4 characters).
	Counter TokenCounter
}

// inputs are where a caller's input references may point.
func (s *Service) inputs() service.CallerInputs {
	return service.CallerInputs{Bucket: s.Bucket, Allow: s.InputAllow}
}

// abilities are what prov declared, as the registry holds them.
func (s *Service) abilities(prov service.BatchProvider) service.Abilities {
	return s.Providers.Abilities(prov.Name())
}

// limitsFor are prov's limits for a model (the account's quotas laid over
// them where the provider counts jobs against quotas).
func (s *Service) limitsFor(prov service.BatchProvider, modelID string) service.BatchLimits {
	return s.Models.LimitsFor(prov, s.abilities(prov).QuotaLimited, modelID)
}

// runsOnDemand: a job of prov may run on demand here (the provider's models
// may, and this deployment runs on-demand jobs).
func (s *Service) runsOnDemand(prov service.BatchProvider) bool {
	return s.OnDemand != nil && s.abilities(prov).OnDemand
}

// Cancel stops a job's provider jobs. Cancelling a finished job is not an error:
// it reports the status the job already has.
func (s *Service) Cancel(ctx context.Context, owner, id string) (*job.Job, error) {
	j, err := service.OwnedJob(ctx, s.Store, owner, id)
	if err != nil {
		return nil, err
	}
	if j.Redriving() {
		return s.cancelRedrive(ctx, j)
	}
	if j.Status.Terminal() || j.Status == job.StatusIngesting {
		return j, nil
	}
	if s.RefuseCancel != nil {
		if err := s.RefuseCancel(j); err != nil {
			return nil, err
		}
	}
	prov := s.Providers.Get(j.Provider)
	for _, p := range j.Parts {
		if p.Ref == "" || p.Status.Rank() >= job.StatusCancelling.Rank() {
			continue
		}
		if err := prov.Stop(ctx, p.Ref); err != nil {
			return nil, fmt.Errorf("stop provider job %s: %w", p.Name, err)
		}
	}
	now := s.Clock.Now()
	j, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		changed := false
		if j.Redrive != nil && !j.Redrive.Started {
			// A cancel wins over the deadline: what the stopped parts
			// produced is read, nothing is re-driven, the job ends cancelled.
			j.Redrive = nil
			changed = true
		}
		for i := range j.Parts {
			p := &j.Parts[i]
			switch {
			case j.Mode == job.ModeOnDemand && p.Status == job.StatusInProgress:
				// A run is under way (or died and will be resumed): it sees
				// cancelling at its next checkpoint, keeps that chunk's counts
				// and ends the job cancelled; nothing it stored goes uncounted.
				p.Status = job.StatusCancelling
				p.CancelRequested = true
				changed = true
			case findable(s.abilities(prov), *p) && job.CanMove(p.Status, job.StatusCancelling):
				// A create is on the wire, or was tried and died with its
				// outcome unknown (its lease may since have gone, the part
				// queued again behind the quota): the provider job it made,
				// once found, is stopped and ingested like any cancelled
				// part's (see StartParts).
				p.Status = job.StatusCancelling
				p.CancelRequested = true
				changed = true
			case p.Ref == "" && !p.Status.Terminal():
				// Never reached the provider: nothing to stop, nothing to ingest.
				p.Status = job.StatusCancelled
				changed = true
			case job.CanMove(p.Status, job.StatusCancelling):
				p.Status = job.StatusCancelling
				p.CancelRequested = true
				changed = true
			}
		}
		if j.Status == job.StatusValidating && len(j.Parts) == 0 {
			// A file submit whose input is still being checked: nothing reached a
			// provider, and the validation leaves a cancelled job alone.
			j.Status = job.StatusCancelled
			changed = true
		}
		if !changed {
			return store.ErrNoChange
		}
		service.Settle(s.Providers.Get(j.Provider), j, now)
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return nil, fmt.Errorf("mark job %s cancelling: %w", id, err)
	}
	if j.Status == job.StatusCancelled {
		s.Telemetry.PublishCompleted(ctx, j)
	}
	return j, nil
}
