package batch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// SubmitRequest is a batch as a user submits it.
type SubmitRequest struct {
	Owner    string
	Model    string
	Name     string
	Records  []job.Input
	Params   job.Params
	TTLDays  int
	Progress func(done, total int) // optional, for long submits
	// Mode is auto (default), batch or on_demand; validate settles it to batch or on_demand.
	Mode string
	// ID is a caller-chosen job id (a pipeline run key); empty for a new random id.
	ID string
	// Pipeline tags a job a report pipeline submits.
	Pipeline *job.PipelineRun
	// Provider names a registered provider; empty picks the first that allows Model.
	Provider string
	// RetryOf is the parent of a retry_failed job.
	RetryOf string
	// Ordinals are a retry's records' input ordinals in the job first
	// retried, so its results list in that order (nil: their positions in
	// Records). ByID keys a retry of a job stored before ordinals by id,
	// as its parent (see service.KeyRecords).
	Ordinals []int
	ByID     bool
	// Notify is where the job's end is announced (checked by the caller, see notify.go).
	Notify *job.Notify
	// Index names the vector index an embedding job writes into (nil: none);
	// Submit settles it into Target.
	Index  *IndexRequest
	Target *job.IndexTarget
	// BudgetUSD caps the job's cost (0: none): Submit refuses a batch whose
	// estimate is over it.
	BudgetUSD float64
	// Deadline is when every record must have a result (zero: none): Submit
	// refuses one no plan can meet, and the reconciler stops unfinished batch
	// parts in time to run their records on demand (deadline.go).
	Deadline time.Time
	// Reuse answers records from earlier results of the owner's with the
	// same key (reuse.go); ReuseSampled allows it for sampled jobs.
	Reuse, ReuseSampled bool
	// reused are the records answered from the cache, results of the new
	// job; cached are the ids of records whose entry points at a live
	// result the job may not reuse (sampled), left pointing there; keys
	// are the records' cache keys by id (none: not keyed, see digester).
	reused []job.Record
	cached map[string]bool
	keys   map[string]string

	// Warnings go onto the job: what validation found the user should know
	// (a legacy model, a model only the account knows) and how records were
	// changed to fit the model's rules.
	Warnings []string

	// autoMode / autoTier: the mode / tier was left to auto; deadlineTokens:
	// the tokens per record a deadline's timing counts (checkDeadline).
	autoMode       bool
	autoTier       bool
	deadlineTokens int64
}

// Submit validates a batch, writes the provider input to object storage, starts the
// provider job(s) and returns the job at once.
func (s *Service) Submit(ctx context.Context, req SubmitRequest) (*job.Job, error) {
	if err := s.validate(&req); err != nil {
		return nil, err
	}
	if err := s.checkRunID(ctx, req.ID); err != nil {
		return nil, err
	}
	if done, err := s.reuse(ctx, &req); err != nil || done != nil {
		return done, err
	}
	md, err := s.checkMedia(ctx, &req, s.Providers.Get(req.Provider).Limits())
	if err != nil {
		return nil, err
	}
	if err := md.err(); err != nil {
		return nil, err
	}
	req.Warnings = append(req.Warnings, s.recordWarnings(&req, md)...)
	// Before the budget: a deadline may move an auto job on demand.
	if err := s.checkDeadline(&req, md); err != nil {
		return nil, err
	}
	if err := s.checkBudget(req, md); err != nil {
		return nil, err
	}
	t, err := s.prepareIndex(ctx, &req)
	if err != nil {
		return nil, err
	}
	req.Target = t
	if req.Mode == job.ModeOnDemand {
		j, err := s.OnDemand.SubmitOnDemand(ctx, req)
		if err == nil {
			err = s.writeEntries(ctx, &req, j)
		}
		return j, err
	}
	now := s.Clock.Now()
	id := job.NewID(now)
	if req.ID != "" {
		id = req.ID
	}
	prov := s.Providers.Get(req.Provider)
	n := len(req.Records)
	lines, sizes, invocation, err := s.encodeAll(req, prov, md)
	if err != nil {
		return nil, err
	}
	// sizes bound the rendered lines (images and documents inline), which
	// Bedrock echoes in its output lines.
	longest := 0
	for _, n := range sizes {
		longest = max(longest, n)
	}
	parts, err := service.Split(sizes, s.limitsFor(prov, req.Model))
	if err != nil {
		return nil, err
	}
	j := &job.Job{
		ID: id, Owner: req.Owner, Name: req.Name, Provider: req.Provider, Model: req.Model,
		Status: job.StatusQueued, RecordCount: n, Shards: job.ShardsFor(n), TTLDays: req.TTLDays,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: job.ExpiresAt(now, req.TTLDays),
		InputURI:  blob.Join(s.Bucket, "input", id),
		OutputURI: blob.Join(s.Bucket, "output", id),
		Mode:      job.ModeBatch, Pipeline: req.Pipeline, Index: req.Target, BudgetUSD: req.BudgetUSD,
		Deadline: req.Deadline, DeadlineTokens: req.deadlineTokens,
	}
	j.ExpiresAt = job.NewExpiresAt(j, now) // held while in flight; TTL counts from the end
	j.MaxInputLineBytes = longest
	j.AddWarning(req.Warnings...)
	estimates := s.partEstimates(req, md, parts)
	start := 0
	for i, size := range parts {
		p := job.Part{
			Index: i, Name: job.PartName(s.JobPrefix, id, i, len(parts)), Status: job.StatusQueued,
			RecordCount:    size,
			InputURI:       blob.Join(j.InputURI, fmt.Sprintf("part-%d", i+1), "records.jsonl"),
			OutputURI:      blob.Join(j.OutputURI, fmt.Sprintf("part-%d", i+1)) + "/",
			InvocationType: invocation,
		}
		if estimates != nil {
			p.EstimateUSD = estimates[i]
		}
		if err := s.writeInput(ctx, p.InputURI, lines[start:start+size], start, md); err != nil {
			return nil, err
		}
		start += size
		j.Parts = append(j.Parts, p)
	}
	if err := service.WriteIDs(ctx, s.Blobs, j, req.Records); err != nil {
		return nil, err
	}
	if err := service.KeyRecords(ctx, s.Blobs, j, req.Ordinals, req.ByID); err != nil {
		return nil, err
	}
	// The caller's records and settings, for retry_failed.
	if err := service.WriteInputs(ctx, s.Blobs, j, req.Records); err != nil {
		return nil, err
	}
	j.Params, j.RetryOf, j.Notify = &req.Params, req.RetryOf, req.Notify
	if err := req.StoreReused(ctx, s.Results, j); err != nil {
		return nil, err
	}
	if err := s.Store.CreateJob(ctx, j); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("%w: %s", service.ErrJobExists, id)
		}
		return nil, fmt.Errorf("store job %s: %w", id, err)
	}
	if err := s.writeEntries(ctx, &req, j); err != nil {
		return nil, err
	}
	return s.StartNew(ctx, prov, j)
}

// recordWarnings says how the records were changed to fit the model: the
// provider's (Abilities.JobWarnings) and the media path's (a text block added
// beside a document).
func (s *Service) recordWarnings(req *SubmitRequest, md *media) []string {
	var ws []string
	if warn := s.Providers.Abilities(req.Provider).JobWarnings; warn != nil {
		ws = warn(req.Model, req.Records, req.Params)
	}
	if md != nil {
		ws = append(ws, md.warnings...)
	}
	return ws
}

// DeadlineTokens is the tokens per record a deadline's timing counts, as the
// submit's checks fixed it (0: no deadline).
func (r SubmitRequest) DeadlineTokens() int64 { return r.deadlineTokens }
