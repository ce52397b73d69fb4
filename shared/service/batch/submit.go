package batch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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
	// result the job may not reuse (sampled), left pointing there.
	reused []job.Record
	cached map[string]bool

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
	md, err := s.checkMedia(ctx, &req, s.Provider(req.Provider).Limits())
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
	now := s.Now()
	id := job.NewID(now)
	if req.ID != "" {
		id = req.ID
	}
	prov := s.Provider(req.Provider)
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
	parts, err := service.Split(sizes, s.LimitsFor(prov, req.Model))
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
	if err := s.WriteIDs(ctx, j, req.Records); err != nil {
		return nil, err
	}
	if err := s.KeyRecords(ctx, j, req.Ordinals, req.ByID); err != nil {
		return nil, err
	}
	// The caller's records and settings, for retry_failed.
	if err := s.WriteInputs(ctx, j, req.Records); err != nil {
		return nil, err
	}
	j.Params, j.RetryOf, j.Notify = &req.Params, req.RetryOf, req.Notify
	if err := req.StoreReused(ctx, s.ResultsWriter(), j); err != nil {
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
// provider's (service.JobWarner) and the media path's (a text block added
// beside a document).
func (s *Service) recordWarnings(req *SubmitRequest, md *media) []string {
	var ws []string
	if w, ok := s.Provider(req.Provider).(service.JobWarner); ok {
		ws = w.JobWarnings(req.Model, req.Records, req.Params)
	}
	if md != nil {
		ws = append(ws, md.warnings...)
	}
	return ws
}

// StartNew starts the parts of a job just stored, as many as the provider's
// quota leaves room for.
func (s *Service) StartNew(ctx context.Context, prov service.BatchProvider, j *job.Job) (*job.Job, error) {
	room, err := s.roomAtSubmit(ctx, prov, j)
	if err != nil {
		return nil, err
	}
	j, _, err = s.StartParts(ctx, j.ID, room)
	return j, err
}

// StartParts submits up to room queued parts (room < 0: all). A full provider
// quota leaves a part queued for the reconciler; any other provider error fails
// the job with the provider's message. A job's budget may hold parts (see
// budget.go); when the held parts stop, the job moves to ingesting here.
//
// Each part is claimed first with a submitting lease (a conditional write), so
// a reconciler run that overlaps a slow create leaves the part alone. A Ref
// never overwrites another: a second provider job made for a part that has one,
// or one that arrives for a part cancelled meanwhile, is stopped at once.
func (s *Service) StartParts(ctx context.Context, id string, room int) (*job.Job, int, error) {
	j, err := s.Store.GetJob(ctx, id)
	if err != nil {
		return nil, 0, fmt.Errorf("reload job %s: %w", id, err)
	}
	if j.BudgetUSD > 0 && StartPending(j) {
		j = s.recordSpent(ctx, j)
	}
	prov := s.Provider(j.Provider)
	before := j.Status
	run := newRunID()
	started := 0
	var errs []error
	for _, p := range j.Parts {
		if !startable(p) {
			continue
		}
		if room >= 0 && started >= room && p.Status == job.StatusQueued {
			j, err = s.markWaiting(ctx, id, p.Index)
			if err != nil {
				return nil, started, err
			}
			continue
		}
		if _, canFind := prov.(service.BatchFinder); canFind && p.Status == job.StatusQueued {
			// Read first, so a part waiting for the slot writes nothing.
			taken, err := s.slotTaken(ctx, j, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if taken {
				continue
			}
		}
		idx := p.Index
		claimed, cj, err := s.claimPart(ctx, id, idx, run)
		if err != nil {
			return nil, started, err
		}
		j = cj
		if claimed == nil {
			continue // another run is submitting it, or it moved on
		}
		in := service.BatchSubmit{
			Name: p.Name, ClientToken: p.Name, Model: j.Model, InputURI: p.InputURI, OutputURI: p.OutputURI,
			TimeoutHrs: s.TimeoutHours, Tags: map[string]string{"mcpbatch:job": j.ID, "mcpbatch:owner-hash": service.OwnerTag(j.Owner)},
			Records: p.RecordCount, InvocationType: p.InvocationType, BetaHeaders: s.betaHeaders(j),
		}
		var ref string
		if claimed.Status == job.StatusCancelling {
			ref, err = s.lookFor(ctx, prov, j, *claimed, in)
		} else {
			ref, err = s.create(ctx, prov, j, *claimed, in)
		}
		now := s.Now()
		var unknown *unknownOutcome
		if errors.Is(err, service.ErrSubmitUnproven) {
			// A provider job that may be the part's (or another part's whose
			// Ref is not written yet, or another system's) cannot be told
			// apart yet: keep the lease and look again once it runs out.
			s.Logger().WarnContext(ctx, "provider jobs may be the part's and cannot be proved so yet; part stays leased", "job_id", id, "part", idx, "error", err)
			continue
		}
		if errors.As(err, &unknown) {
			// The create may have made a job we cannot see yet: keep the lease;
			// after it runs out the next run looks for the job before creating.
			s.Logger().WarnContext(ctx, "provider job of part unknown; part stays leased", "job_id", id, "part", idx, "error", err)
			errs = append(errs, err)
			continue
		}
		if _, canFind := prov.(service.BatchFinder); canFind {
			// The outcome is known (and written below): others may create.
			defer s.giveSlot(ctx, j, *claimed)
		}
		if busy(err) {
			// The provider cannot take it now: stay queued; the reconciler retries.
			s.Logger().InfoContext(ctx, "provider busy; part stays queued", "job_id", id, "part", idx, "error", err)
			if j, err = s.releasePart(ctx, id, idx, run); err != nil {
				return nil, started, err
			}
			if j, err = s.markWaiting(ctx, id, idx); err != nil {
				return nil, started, err
			}
			room = started // no more tries this time: the quota is full
			continue
		}
		if err == nil {
			started++
		}
		var stop string
		j, err = s.updatePart(ctx, id, idx, func(part *job.Part) {
			stop = ""
			part.SubmitLease, part.SubmitLeaseUntil = "", time.Time{}
			switch {
			case err != nil && part.Status == job.StatusQueued:
				part.Status = job.StatusFailed
				part.ProviderStatus = "SubmitFailed"
				part.Message = prov.Limits().Title + " refused the job: " + err.Error()
			case err != nil && part.Status == job.StatusCancelling && part.Ref == "":
				part.Status = job.StatusCancelled // no provider job of it can be adopted
			case err != nil:
			case ref == "":
				if part.Status == job.StatusCancelling && part.Ref == "" {
					part.Status = job.StatusCancelled // its create made nothing
				}
			case part.Ref != "" && part.Ref != ref:
				stop = ref // a second job for the part: the first one stays
			case part.Status.Terminal() || part.Status == job.StatusCancelling:
				// Cancelled while the create was on the wire.
				part.Ref = ref
				stop = ref
			default:
				part.Ref = ref
				if job.CanMove(part.Status, job.StatusSubmitted) {
					part.Status = job.StatusSubmitted
					part.ProviderStatus = prov.SubmittedStatus()
				}
			}
		}, now)
		if err != nil {
			return nil, started, err
		}
		if stop != "" {
			s.Logger().WarnContext(ctx, "stopping a provider job that arrived for a part cancelled or already started", "job_id", id, "part", idx, "ref", stop)
			if serr := prov.Stop(ctx, stop); serr != nil {
				errs = append(errs, fmt.Errorf("stop provider job %s of job %s part %d: %w", stop, id, idx, serr))
			}
		}
		if j.SubmittedAt.IsZero() && ref != "" && stop == "" {
			j, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error { j.SubmittedAt = now; j.LastEventAt = now; return nil })
			if err != nil {
				return nil, started, fmt.Errorf("stamp submit of %s: %w", id, err)
			}
		}
	}
	if j.Status == job.StatusFailed || (j.Status == job.StatusCancelled && before != job.StatusCancelled) {
		s.PublishCompleted(ctx, j)
	}
	if j.Status == job.StatusIngesting && before != job.StatusIngesting {
		// The held parts stopped at the budget and nothing else runs: the
		// parts that ran are ingested.
		if err := s.AfterStatus(ctx, j); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		s.Logger().ErrorContext(ctx, "start parts", "job_id", id, "error", errors.Join(errs...))
	}
	return j, started, nil
}

func (s *Service) updatePart(ctx context.Context, id string, idx int, fn func(*job.Part), now time.Time) (*job.Job, error) {
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		if idx < 0 || idx >= len(j.Parts) {
			return fmt.Errorf("job %s has no part %d", id, idx)
		}
		fn(&j.Parts[idx])
		s.Settle(j, now)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update job %s part %d: %w", id, idx, err)
	}
	return j, nil
}

// encodeAll renders every record in the provider's format once: the lengths
// split the job, the lines are its input files. A record that cannot be encoded
// is reported here, before anything is stored. A record with images or
// documents is encoded around a placeholder (see media) and its size is a
// bound on its rendered length.
func (s *Service) encodeAll(req SubmitRequest, prov service.BatchProvider, md *media) ([][]byte, []int, string, error) {
	lines := make([][]byte, len(req.Records))
	sizes := make([]int, len(req.Records))
	inv := NewInvocationCheck(prov)
	for i := range req.Records {
		in := req.Records[i]
		if md != nil && md.bad[i] {
			continue // a dry run: its problems are reported already
		}
		if err := inv.Add(i, in); err != nil {
			return nil, nil, "", err
		}
		in.ID = job.ProviderRecordID(i) // the caller's id stays with us (ids.jsonl)
		enc := func(in job.Input) ([]byte, error) { return prov.EncodeRecord(i, req.Model, in, req.Params) }
		line, size, ok, err := md.encode(i, in, enc)
		if !ok {
			line, err = enc(in)
			size = len(line)
		}
		if err != nil {
			return nil, nil, "", err
		}
		lines[i], sizes[i] = line, size
		if req.Progress != nil && (i+1)%1000 == 0 {
			req.Progress(i+1, len(req.Records))
		}
	}
	return lines, sizes, inv.Type, nil
}

// InvocationCheck settles a job's invocation type from its records, for
// providers that have several (service.InvocationTyper); Type stays "" for
// the others.
type InvocationCheck struct {
	typer service.InvocationTyper
	Type  string
	first int
}

// NewInvocationCheck is the check for prov's jobs.
func NewInvocationCheck(prov service.BatchProvider) *InvocationCheck {
	t, _ := prov.(service.InvocationTyper)
	return &InvocationCheck{typer: t}
}

// Add takes record i into account: an error when it needs another
// invocation type than the records before it.
func (c *InvocationCheck) Add(i int, in job.Input) error {
	if c.typer == nil {
		return nil
	}
	t := c.typer.InvocationFor(in)
	switch {
	case c.Type == "":
		c.Type, c.first = t, i
	case t != c.Type:
		return job.Fieldf(fmt.Sprintf("records[%d]", i), "needs a %s provider job but records[%d] needs %s: one job runs one way; give prompts/messages (or Converse model_input) and native model_input bodies in separate jobs", t, c.first, c.Type)
	}
	return nil
}

// writeInput streams lines as JSONL to uri; lines[k] is record start+k, whose
// images and documents md renders in place.
func (s *Service) writeInput(ctx context.Context, uri string, lines [][]byte, start int, md *media) error {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 256<<10)
		for k, line := range lines {
			if err := md.writeLine(ctx, w, start+k, line); err != nil {
				pw.CloseWithError(err)
				return
			}
			w.WriteByte('\n')
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := s.Blobs.Put(ctx, uri, pr, "application/jsonl"); err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("write input %s: %w", uri, err)
	}
	return nil
}

// betaHeaders are the beta flags a job's provider creates must send: the
// catalog's batch-output beta when max_tokens is above the normal maximum
// (submit allowed it for batch mode only).
func (s *Service) betaHeaders(j *job.Job) []string {
	if j.Params == nil {
		return nil
	}
	m, ok := s.LookupModel(j.Model)
	if !ok {
		return nil
	}
	if b := m.BatchBeta(j.Params.MaxTokens); b != "" {
		return []string{b}
	}
	return nil
}

// DeadlineTokens is the tokens per record a deadline's timing counts, as the
// submit's checks fixed it (0: no deadline).
func (r SubmitRequest) DeadlineTokens() int64 { return r.deadlineTokens }
