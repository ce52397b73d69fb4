package batch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// checkDeadline holds a submit's deadline: it must be in the future, the
// model must have an on-demand path to re-drive unfinished records on, and
// running every record on demand at the account's quota must end before it
// (else no plan can meet it). It fixes the tokens per record the timing
// counts, and takes the Flex tier away from an on-demand run whose deadline
// leaves no room for Flex's slower service.
func (s *Service) checkDeadline(req *SubmitRequest, md *media) error {
	if req.Deadline.IsZero() {
		return nil
	}
	now := s.Clock.Now()
	if !req.Deadline.After(now) {
		return job.Fieldf("deadline", "%s is not in the future (now %s); give an RFC 3339 time ahead of now, or omit deadline",
			req.Deadline.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	prov := s.Providers.Get(req.Provider)
	m, _ := s.Models.LookupModel(req.Model)
	if !s.runsOnDemand(prov) || m == nil || !m.Supports(model.ModeOnDemand) {
		return job.Fieldf("deadline", "cannot be held for %s on %s: a deadline re-drives unfinished records on demand, and this model has no on-demand path here; omit deadline", req.Model, prov.Name())
	}
	n := len(req.Records)
	in, _ := s.estimate(*req, md)
	out := req.outputTokens(0, n)
	req.deadlineTokens = (in+int64(n)-1)/int64(max(n, 1)) + (out+int64(n)-1)/int64(max(n, 1))
	rate := s.Models.RateOf(req.Model)
	need := job.OnDemandTime(n, req.deadlineTokens, rate)
	if left := req.Deadline.Sub(now); need > left {
		return job.Fieldf("deadline", "%s is %s away, but even running all %d records on demand at the account's quota for %s (%s) takes about %s (estimate: %d tokens per record, estimated input + max_tokens %d or a record's own); set a later deadline, submit fewer records or lower max_tokens",
			req.Deadline.UTC().Format(time.RFC3339), left.Round(time.Second), n, req.Model, rateText(rate), need.Round(time.Second), req.deadlineTokens, req.Params.MaxTokens)
	}
	pressed := !now.Before(job.StopBatchBy(req.Deadline, need))
	if pressed && req.autoMode && req.Mode == job.ModeBatch && n <= job.MaxOnDemandRecords && checkMaxTokens(m, req.Params.MaxTokens, job.ModeOnDemand) == nil {
		// No time for a batch job to run before its parts would be stopped.
		req.Mode = job.ModeOnDemand
		req.Params.Tier = ""
		req.Warnings = append(req.Warnings, fmt.Sprintf("the deadline %s leaves no time for a batch job (its records need about %s on demand, plus the margin): the job runs on demand (standard tier) from the start",
			req.Deadline.UTC().Format(time.RFC3339), need.Round(time.Second)))
		return nil
	}
	if req.Mode == job.ModeOnDemand && req.autoTier && req.Params.Tier == model.TierFlex && pressed {
		req.Params.Tier = ""
		req.Warnings = append(req.Warnings, fmt.Sprintf("the deadline %s leaves no room for the flex tier's slower service (the run needs about %s on demand): the run uses standard",
			req.Deadline.UTC().Format(time.RFC3339), need.Round(time.Second)))
	}
	return nil
}

func rateText(r job.Rate) string {
	return fmt.Sprintf("%.0f requests and %.0f tokens per minute", r.RequestsPerMinute, r.TokensPerMinute)
}

// StopBatchBy is when the unfinished batch parts of j must be stopped for its
// records to be re-driven on demand before its deadline (zero: j has no
// deadline or nothing left to stop). Once the deadline stopped parts, a part
// that reached the provider since (its create was on the wire) is due at once.
func (s *Service) StopBatchBy(j *job.Job) time.Time {
	if j.Deadline.IsZero() || j.Mode != job.ModeBatch || j.Status.Terminal() || (j.Redrive != nil && j.Redrive.Started) {
		return time.Time{}
	}
	n := 0
	for _, p := range j.Parts {
		if stoppable(p) || queuedUnsent(p) {
			n += p.RecordCount
		}
	}
	switch {
	case n == 0:
		return time.Time{}
	case j.Redrive != nil:
		return j.Redrive.StoppedAt
	}
	return job.StopBatchBy(j.Deadline, job.OnDemandTime(n, j.DeadlineTokens, s.Models.RateOf(j.Model)))
}

// stoppable: a part the provider runs and has not ended or been asked to stop.
func stoppable(p job.Part) bool {
	return p.Ref != "" && p.Status.Rank() < job.StatusCancelling.Rank()
}

// queuedUnsent: a part that never reached the provider and no create is on the wire for.
func queuedUnsent(p job.Part) bool {
	return p.Ref == "" && p.SubmitLease == "" && p.Status == job.StatusQueued
}

// NotSubmitted is the provider_status of a part the deadline dropped before
// it reached the provider: it waits, with nothing to read, for the re-drive.
const NotSubmitted = "NotSubmitted"

// StopForDeadline is the reconciler's deadline step for one job: once the
// time StopBatchBy names has come, every batch part not finished is stopped
// (Bedrock StopModelInvocationJob; a part never submitted is dropped: it goes
// straight to ingesting, with no output), and the job is marked for a
// re-drive: ingest reads what the stopped parts produced, then runs the
// records they left without a result on demand (startRedrive). A stop the
// provider refuses (the part ended meanwhile) leaves that part to its own
// end. It reports how many parts it stopped.
//
// The re-drive is recorded on the job before any stop is sent: a stop's own
// events may be applied before this step writes again, and a run that dies
// after a stop must leave the job marked, or the part's end would read as a
// cancel of the job and its unfinished records would never run. A later run
// finds the mark (StopBatchBy is then its time) and stops what still runs.
func (s *Service) StopForDeadline(ctx context.Context, j *job.Job) (int, error) {
	by := s.StopBatchBy(j)
	if by.IsZero() || s.Clock.Now().Before(by) {
		return 0, nil
	}
	now := s.Clock.Now()
	var errs []error
	marked, err := s.Store.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
		if cur.Status.Terminal() || cur.Status == job.StatusIngesting {
			return store.ErrNoChange
		}
		var changed []int
		heldStopped := false
		for i := range cur.Parts {
			p := &cur.Parts[i]
			switch {
			case queuedUnsent(*p) && p.Held:
				// Held at the budget: it ends so (its records fail as held, for
				// retry_failed), never re-driven on demand at about twice the
				// batch price, past the budget.
				p.Status, p.ProviderStatus = job.StatusIngesting, StoppedAtBudget
				heldStopped = true
				continue
			case queuedUnsent(*p):
				p.Status, p.ProviderStatus = job.StatusIngesting, NotSubmitted
			case stoppable(*p) && (cur.Redrive == nil || !slices.Contains(cur.Redrive.Parts, p.Index)):
			default:
				continue
			}
			changed = append(changed, p.Index)
		}
		if len(changed) == 0 {
			if heldStopped {
				service.Settle(s.Providers.Get(cur.Provider), cur, now)
				return nil
			}
			return store.ErrNoChange
		}
		if cur.Redrive == nil {
			cur.Redrive = &job.Redrive{StoppedAt: now}
			cur.AddWarning(fmt.Sprintf("deadline %s: the batch parts not finished by %s were stopped; what they produced is kept, the rest runs on demand (standard tier) in this job",
				cur.Deadline.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
		}
		for _, i := range changed {
			if !slices.Contains(cur.Redrive.Parts, i) {
				cur.Redrive.Parts = append(cur.Redrive.Parts, i)
			}
		}
		service.Settle(s.Providers.Get(cur.Provider), cur, now)
		return nil
	})
	wrote := err == nil
	switch {
	case errors.Is(err, store.ErrNoChange):
		if marked, err = s.Store.GetJob(ctx, j.ID); err != nil {
			return 0, fmt.Errorf("reload job %s: %w", j.ID, err)
		}
	case err != nil:
		return 0, fmt.Errorf("record deadline stop of %s: %w", j.ID, err)
	}
	if marked.Redrive == nil || marked.Status.Terminal() {
		return 0, nil
	}
	prov := s.Providers.Get(j.Provider)
	var stopped []int
	for _, p := range marked.Parts {
		if !stoppable(p) || !slices.Contains(marked.Redrive.Parts, p.Index) {
			continue
		}
		if err := prov.Stop(ctx, p.Ref); err != nil {
			errs = append(errs, fmt.Errorf("stop %s of job %s for its deadline: %w", p.Name, j.ID, err))
			continue
		}
		stopped = append(stopped, p.Index)
	}
	last := marked
	if len(stopped) > 0 {
		nj, err := s.Store.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
			moved := false
			for i := range cur.Parts {
				if p := &cur.Parts[i]; slices.Contains(stopped, p.Index) && job.CanMove(p.Status, job.StatusCancelling) {
					p.Status, p.CancelRequested, moved = job.StatusCancelling, true, true
				}
			}
			if !moved {
				return store.ErrNoChange // the stops' own events came first
			}
			service.Settle(s.Providers.Get(cur.Provider), cur, s.Clock.Now())
			return nil
		})
		switch {
		case errors.Is(err, store.ErrNoChange):
		case err != nil:
			errs = append(errs, fmt.Errorf("record deadline stop of %s: %w", j.ID, err))
		default:
			last, wrote = nj, true
		}
		service.Logger(s.Log).InfoContext(ctx, "batch parts stopped for the deadline", "job_id", j.ID, "parts", stopped, "deadline", j.Deadline, "stop_by", by)
	}
	if wrote {
		// Parts never submitted may have been the last ones: read the output now.
		errs = append(errs, s.AfterStatus(ctx, last))
	}
	return len(stopped), errors.Join(errs...)
}

// cancelRedrive asks a running re-drive to stop: the run ends the job
// cancelled at its next checkpoint, every result it stored counted.
func (s *Service) cancelRedrive(ctx context.Context, j *job.Job) (*job.Job, error) {
	nj, err := s.Store.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
		if !cur.Redriving() || cur.Redrive.CancelRequested {
			return store.ErrNoChange
		}
		cur.Redrive.CancelRequested = true
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return j, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cancel the deadline re-drive of %s: %w", j.ID, err)
	}
	return nj, nil
}

// redriveRunner starts a re-drive's on-demand run (the on-demand flow).
type redriveRunner interface {
	ContinueOnDemand(ctx context.Context, id string) error
}

// startRedrive runs on demand, in the same job, the records a deadline-stopped
// job's batch parts left without a result, once their output is read (res):
// the records stored now are the batch path's and are never run again. It
// writes the run's input (the caller's records of those ids), sets the run up
// on the job (still ingesting, so a repeated "Job Output Ready" reads nothing
// twice) and asks the on-demand flow to run it. false: every record has a
// result, and ingest finishes the job as usual.
func (s *Service) startRedrive(ctx context.Context, j *job.Job, res ingest.Result) (bool, error) {
	// Without the run's own results: a second "Job Output Ready" read after
	// the run stored some then writes the same input file again, never a
	// shorter one under the running re-drive's offset.
	have, counts, err := service.StoredResults(ctx, s.Store, j, job.PathOnDemand)
	if err != nil {
		return false, err
	}
	uri := blob.Join(j.InputURI, "redrive", "records.jsonl")
	n, err := s.writeUnproduced(ctx, j, have, uri)
	if err != nil || n == 0 {
		return false, err
	}
	runner, ok := s.OnDemand.(redriveRunner)
	if !ok {
		return false, nil // no on-demand flow: the records stay without a result
	}
	now := s.Clock.Now()
	id := j.ID
	nj, err := s.Store.UpdateJob(ctx, id, func(cur *job.Job) error {
		if cur.Status != job.StatusIngesting || cur.Redrive == nil || cur.Redrive.Started {
			return store.ErrNoChange
		}
		p := job.Params{}
		if cur.Params != nil {
			p = *cur.Params
		}
		p.Tier = "" // deadline pressure: standard, never the slower flex
		r := cur.Redrive
		r.Started, r.Records = true, n
		r.BatchSucceeded, r.BatchFailed = counts.Succeeded, counts.Failed
		r.BatchInputTokens, r.BatchOutputTokens = res.InputTokens, res.OutputTokens
		r.BatchCacheReadTokens, r.BatchCacheWriteTokens = res.CacheReadTokens, res.CacheWriteTokens
		cur.OnDemand = &job.OnDemand{Params: p, Concurrency: job.DefaultOnDemandConcurrency, InputURI: uri}
		cur.BadLines = res.BadLines
		cur.SyncOnDemandCounts()
		s.Models.PriceJob(cur)
		cur.Checkpoint = nil
		cur.ProviderStatus = "OnDemandRedrive"
		cur.Touch(now)
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return true, nil // another ingest set it up
	}
	if err != nil {
		return false, fmt.Errorf("set up the deadline re-drive of %s: %w", id, err)
	}
	service.Logger(s.Log).InfoContext(ctx, "deadline re-drive: unfinished batch records run on demand", "job_id", id, "records", n,
		"batch_succeeded", nj.Redrive.BatchSucceeded, "batch_failed", nj.Redrive.BatchFailed)
	if err := runner.ContinueOnDemand(ctx, id); err != nil {
		// The run is set up; the reconciler re-requests a run that does not start.
		service.Logger(s.Log).ErrorContext(ctx, "request the deadline re-drive run", "job_id", id, "error", err)
	}
	return true, nil
}

// writeUnproduced writes to uri the caller's records of j that have no
// result (not in have), as the on-demand runner reads them, and counts them.
func (s *Service) writeUnproduced(ctx context.Context, j *job.Job, have map[string]bool, uri string) (int, error) {
	ordinal, err := service.Ordinals(ctx, s.Blobs, j)
	if err != nil {
		return 0, err
	}
	rc, err := service.OpenKept(ctx, s.Blobs, j, service.InputsURI(j))
	if err != nil {
		return 0, fmt.Errorf("open the caller records of %s: %w", j.ID, err)
	}
	defer rc.Close()
	n, pos := 0, 0
	// The run's line k is the job's record ords[k]: results stay in input order.
	var ords []int
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(rc, 256<<10)
		w := bufio.NewWriterSize(pw, 256<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var in struct {
					ID string `json:"id"`
				}
				if uerr := json.Unmarshal(line, &in); uerr != nil {
					pw.CloseWithError(fmt.Errorf("caller records of %s: %w", j.ID, uerr))
					return
				}
				if !have[in.ID] {
					o, ok := ordinal(pos)
					if !ok {
						pw.CloseWithError(fmt.Errorf("caller records of %s: no ordinal for line %d", j.ID, pos+1))
						return
					}
					ords = append(ords, o)
					n++
					w.Write(line)
					if line[len(line)-1] != '\n' {
						w.WriteByte('\n')
					}
				}
				pos++
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := s.Blobs.Put(ctx, uri, pr, "application/jsonl"); err != nil {
		pr.CloseWithError(err)
		return 0, fmt.Errorf("write the re-drive input of %s: %w", j.ID, err)
	}
	if err := service.WriteOrdinals(ctx, s.Blobs, service.RunOrdinalsURI(uri), ords); err != nil {
		return 0, fmt.Errorf("write the re-drive ordinals of %s: %w", j.ID, err)
	}
	return n, nil
}
