// Package reconcile is the scheduled safety net of the batch flow: for every
// registered provider it asks about jobs whose state event is overdue (or polls
// providers that send none), re-announces "Job Output Ready" for ingests that
// stalled and re-requests stalled on-demand runs (with doubling waits, failing
// the job after MaxRetries), keeps in-flight jobs from expiring, and submits
// parts queued behind a provider's per-model quota, oldest job first. One job
// that cannot be reconciled is logged and counted; the others go on.
package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// batchOps is the batch flow as the reconciler drives it.
type batchOps interface {
	StartParts(ctx context.Context, id string, room int) (*job.Job, int, error)
	StopHeld(ctx context.Context, id string) (*job.Job, error)
	ApplyState(ctx context.Context, id string, idx int, ev batch.ProviderEvent) (*job.Job, bool, job.Status, error)
	AfterStatus(ctx context.Context, j *job.Job) error
	QuotaOf(model string) int
	StopForDeadline(ctx context.Context, j *job.Job) (int, error)
}

// onDemandOps is the on-demand flow as the reconciler nudges it.
type onDemandOps interface {
	ContinueOnDemand(ctx context.Context, id string) error
}

// Service runs the reconciler.
type Service struct {
	Jobs      jobStore
	Providers providerSet
	// Bus carries the nudges of jobs whose ingest stalled (Job Output Ready).
	Bus       service.Publisher
	Telemetry service.Telemetry
	Clock     service.Clock
	Log       *slog.Logger
	Batch     batchOps
	// OnDemand resumes stalled on-demand runs (nil: they are left alone).
	OnDemand onDemandOps
	// StaleAfter is how long a job of a provider that pushes events may go
	// without one before the reconciler asks the provider (0: DefaultStaleAfter).
	StaleAfter time.Duration
	// ReconcileLimit bounds the jobs one run looks at per provider (0: DefaultReconcileLimit).
	ReconcileLimit int
	// Validations recovers file submits stuck validating (nil: none).
	Validations validations
}

// jobStore is what the reconciler reads and writes of jobs.
type jobStore interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	ListInFlight(ctx context.Context, provider string, updatedBefore time.Time, limit int) ([]*job.Job, error)
}

// providerSet are the providers whose jobs in flight are reconciled, with
// their abilities.
type providerSet interface {
	All() []service.BatchProvider
	Abilities(name string) service.Abilities
}

// validations is the file-submit flow as the reconciler uses it.
type validations interface {
	RecoverValidation(ctx context.Context, j *job.Job) (bool, error)
}

// Reconciler defaults.
const (
	DefaultStaleAfter     = 15 * time.Minute
	DefaultReconcileLimit = 1000
	// MaxRetries bounds how often a stalled job is nudged before it fails.
	MaxRetries = 5
)

// ReconcileReport says what one reconciler run did; Calls counts provider API
// calls, so a run's cost is visible and can be checked to scale with jobs in
// flight, not with all jobs ever stored.
type ReconcileReport struct {
	InFlight    int `json:"inFlight"`
	Polled      int `json:"polled"`
	Changed     int `json:"changed"`
	Submitted   int `json:"submitted"`
	Waiting     int `json:"waiting"`
	OutputReady int `json:"outputReady"`
	Resumed     int `json:"resumed"`
	// DeadlineStops counts batch parts stopped so their records meet a deadline on demand.
	DeadlineStops int `json:"deadlineStops"`
	Calls         int `json:"calls"`
	Errors        int `json:"errors"`
}

// Reconcile is one run of the reconciler. It is idempotent and safe to run
// twice at once: every change is a forward-only conditional write, and only the
// run whose write moved a job to ingesting announces its output. A job that
// cannot be reconciled is logged and counted, and the run goes on; the returned
// error joins them so the run shows as failed (and alarms) without starving others.
// For each registered provider, over its jobs in flight, oldest first:
//
//  1. Providers without a quota: submit parts that never reached the provider.
//  2. Ask the provider about every part it runs (for providers that push events,
//     only when the job has had no event for StaleAfter) and apply the answer as
//     an event; an ended job moves to ingesting and "Job Output Ready" goes out.
//  3. Quota-limited providers: submit queued parts while the model's quota has
//     room, oldest job first.
func (s *Service) Reconcile(ctx context.Context) (ReconcileReport, error) {
	var rep ReconcileReport
	var errs []error
	now := s.Clock.Now()
	limit := cmp.Or(s.ReconcileLimit, DefaultReconcileLimit)
	stale := now.Add(-cmp.Or(s.StaleAfter, DefaultStaleAfter))
	for _, prov := range s.Providers.All() {
		jobs, err := s.eachInFlight(ctx, prov.Name(), now, limit, func(j *job.Job) error {
			if j.Mode == job.ModeOnDemand || j.Redriving() {
				return errors.Join(s.hold(ctx, j), s.nudgeOnDemand(ctx, j, &rep))
			}
			return errors.Join(s.hold(ctx, j), s.stopForDeadline(ctx, j, &rep), s.reconcileJob(ctx, prov, j, stale, &rep))
		}, &errs)
		if err != nil {
			// This provider's jobs cannot be listed now; the others go on.
			service.Logger(s.Log).ErrorContext(ctx, "reconcile provider", "provider", prov.Name(), "error", err)
			errs = append(errs, err)
		}
		rep.InFlight += len(jobs)
		s.measureInFlight(ctx, prov.Name(), jobs, now)
		if s.Providers.Abilities(prov.Name()).QuotaLimited {
			s.startQueued(ctx, jobs, &rep, &errs)
		}
	}
	rep.Errors = len(errs)
	s.measureRecoveries(ctx, rep)
	lvl := slog.LevelInfo
	if rep.Errors > 0 {
		lvl = slog.LevelWarn
	}
	service.Logger(s.Log).Log(ctx, lvl, "reconcile run", "in_flight", rep.InFlight, "polled", rep.Polled, "changed", rep.Changed,
		"submitted", rep.Submitted, "waiting", rep.Waiting, "output_ready", rep.OutputReady, "resumed", rep.Resumed, "api_calls", rep.Calls, "errors", rep.Errors)
	if len(errs) > 0 {
		return rep, fmt.Errorf("%d jobs or providers could not be reconciled (the others were): %w", len(errs), errors.Join(errs...))
	}
	return rep, nil
}

// eachInFlight pages through a provider's jobs in flight, oldest first, up to
// limit, and calls fn on each. The store returns at most a page per call and
// only an upper bound on UpdatedAt; every job fn looks at is written (polled
// jobs are stamped), so its UpdatedAt moves past the run's start and the next
// call returns the next-oldest jobs. A page of jobs already seen ends the walk.
func (s *Service) eachInFlight(ctx context.Context, provider string, start time.Time, limit int, fn func(*job.Job) error, errs *[]error) ([]*job.Job, error) {
	seen := map[string]bool{}
	var all []*job.Job
	for len(all) < limit {
		size := min(job.MaxPageSize, limit-len(all))
		page, err := s.Jobs.ListInFlight(ctx, provider, start.Add(time.Nanosecond), size)
		if err != nil {
			return all, fmt.Errorf("list in-flight %s jobs: %w", provider, err)
		}
		fresh := 0
		for _, j := range page {
			if seen[j.ID] {
				continue
			}
			seen[j.ID] = true
			fresh++
			all = append(all, j)
			if err := fn(j); err != nil {
				// Logged and counted; the walk goes on with the next job.
				service.Logger(s.Log).ErrorContext(ctx, "reconcile job", "job_id", j.ID, "provider", provider, "error", err)
				*errs = append(*errs, err)
			}
		}
		if fresh == 0 || len(page) < size {
			break
		}
	}
	return all, nil
}

// hold keeps an in-flight job's expiry ahead of its provider's longest run
// (a job may wait behind a quota for longer than its TTL); it writes only when
// the expiry came within that hold of now.
func (s *Service) hold(ctx context.Context, j *job.Job) error {
	if probe := *j; !probe.Hold(s.Clock.Now()) {
		return nil
	}
	_, err := s.Jobs.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
		if !cur.Hold(s.Clock.Now()) {
			return store.ErrNoChange
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("hold the expiry of in-flight job %s: %w", j.ID, err)
	}
	return nil
}

// stopForDeadline stops the unfinished batch parts of a job whose deadline
// needs their records run on demand from now on (batch.StopForDeadline).
func (s *Service) stopForDeadline(ctx context.Context, j *job.Job, rep *ReconcileReport) error {
	n, err := s.Batch.StopForDeadline(ctx, j)
	rep.Calls += n
	rep.DeadlineStops += n
	return err
}

// reconcileJob asks the provider about a job's parts and applies the answers
// through the event path (forward only, so an event that arrives after all
// changes nothing).
func (s *Service) reconcileJob(ctx context.Context, prov service.BatchProvider, j *job.Job, stale time.Time, rep *ReconcileReport) error {
	if s.Validations != nil {
		if waiting, err := s.Validations.RecoverValidation(ctx, j); waiting {
			return err // no parts yet: nothing to ask a provider
		}
	}
	var errs []error
	ab := s.Providers.Abilities(prov.Name())
	if batch.HoldsParts(j) {
		// Parts held at the job's budget stop once nothing else of it runs,
		// whether or not the provider has room.
		if nj, err := s.Batch.StopHeld(ctx, j.ID); err != nil {
			errs = append(errs, err)
		} else {
			j = nj
		}
	}
	if batch.StartPending(j) && (!ab.QuotaLimited || !hasQueued(j)) {
		// Quota-limited queued parts start in startQueued; a part cancelled
		// while its create was on the wire only has its provider job looked
		// for, which takes no quota.
		nj, n, err := s.Batch.StartParts(ctx, j.ID, -1)
		rep.Calls += n
		rep.Submitted += n
		if err != nil {
			errs = append(errs, err)
		} else {
			j = nj
		}
	}
	last := j.LastEventAt
	if last.IsZero() {
		last = j.SubmittedAt
	}
	if ab.PushesEvents && last.After(stale) {
		return errors.Join(errs...)
	}
	start := s.Clock.Now()
	polled := false
	for _, p := range j.Parts {
		if p.Ref == "" || p.Status.Rank() >= job.StatusIngesting.Rank() {
			continue
		}
		polled = true
		st, err := prov.Get(ctx, p.Ref)
		rep.Calls++
		rep.Polled++
		if err != nil {
			errs = append(errs, fmt.Errorf("get %s job %s of job %s: %w", prov.Name(), p.Name, j.ID, err))
			continue
		}
		if err := s.applyPoll(ctx, j.ID, p, st, rep); err != nil {
			errs = append(errs, err)
		}
	}
	if !polled {
		if err := s.nudgeIngest(ctx, j, rep); err != nil {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	// Stamp the poll so the next run waits StaleAfter again, even when nothing
	// changed; it also moves the job behind the others in the in-flight index.
	_, err := s.Jobs.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
		if cur.Status.Terminal() || !cur.LastEventAt.Before(start) {
			return store.ErrNoChange
		}
		cur.LastEventAt = s.Clock.Now()
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) && !errors.Is(err, store.ErrNotFound) {
		errs = append(errs, fmt.Errorf("stamp poll of %s: %w", j.ID, err))
	}
	return errors.Join(errs...)
}

// applyPoll applies a provider's answer to its part. It publishes "Job Output
// Ready" only when this very write moved the job to ingesting, so two
// overlapping runs announce (and ingest) a job once.
func (s *Service) applyPoll(ctx context.Context, id string, p job.Part, st service.BatchState, rep *ReconcileReport) error {
	j, moved, was, err := s.Batch.ApplyState(ctx, id, p.Index, batch.ProviderEvent{JobName: p.Name, Ref: p.Ref, Status: st.Status, Message: st.Message})
	switch {
	case errors.Is(err, store.ErrNoChange), errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("apply status %s to job %s: %w", st.Status, id, err)
	case !moved:
		return nil
	}
	rep.Changed++
	if j.Status == job.StatusIngesting && was != job.StatusIngesting {
		rep.OutputReady++
		return s.Batch.AfterStatus(ctx, j)
	}
	if j.Status == job.StatusFailed || j.Status == job.StatusCancelled {
		return s.Batch.AfterStatus(ctx, j)
	}
	return nil
}

// startQueued submits queued parts of a quota-limited provider, oldest job first, while each
// model's quota (counted over the jobs in flight) has room.
func (s *Service) startQueued(ctx context.Context, inflight []*job.Job, rep *ReconcileReport, errs *[]error) {
	active := map[string]int{}
	var queued []*job.Job
	for _, j := range inflight {
		if j.Mode == job.ModeOnDemand {
			continue // runs on the runtime API, not as a batch job
		}
		for _, p := range j.Parts {
			if batch.OccupiesQuota(p) {
				active[j.Model]++
			}
		}
		if hasQueued(j) {
			queued = append(queued, j)
		}
	}
	slices.SortStableFunc(queued, func(a, b *job.Job) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	full := map[string]bool{}
	for _, j := range queued {
		room := s.Batch.QuotaOf(j.Model) - active[j.Model]
		if room <= 0 || full[j.Model] {
			// Keep order: nothing younger of this model starts before this one.
			full[j.Model] = true
			rep.Waiting++
			continue
		}
		nj, n, err := s.Batch.StartParts(ctx, j.ID, room)
		rep.Calls += n
		rep.Submitted += n
		active[j.Model] += n
		if err != nil {
			service.Logger(s.Log).ErrorContext(ctx, "start queued parts", "job_id", j.ID, "error", err)
			*errs = append(*errs, err)
		}
		if nj == nil {
			nj = j
		}
		if waitingParts(nj) > 0 {
			// A part held at its job's budget waits for that job, not for
			// room: it keeps nobody else waiting.
			rep.Waiting++
			full[j.Model] = true
		}
	}
}

// hasQueued: a part of j is queued (waiting for room, or held at its budget).
func hasQueued(j *job.Job) bool {
	for _, p := range j.Parts {
		if p.Status == job.StatusQueued {
			return true
		}
	}
	return false
}

// waitingParts counts the queued parts waiting for room at the provider.
func waitingParts(j *job.Job) int {
	n := 0
	for _, p := range j.Parts {
		if p.Status == job.StatusQueued && !p.Held {
			n++
		}
	}
	return n
}
