package batch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// SubmitLease is how long a run holds a part it is submitting. It outlasts
// the slowest create (a 256 MB Message Batch body streamed from object
// storage, or a Lambda's 15-minute limit), so a create still on the wire is
// never raced by a reconciler run.
const SubmitLease = 15 * time.Minute

func newRunID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// claimPart takes the submitting lease of a queued part without a Ref. It
// returns the part as it was before the claim (nil when the part is not
// claimable: another run's lease is live, the part moved on, or the job's
// budget holds it) and the job. The budget is judged in the same conditional
// write (see budget.go).
func (s *Service) claimPart(ctx context.Context, id string, idx int, run string) (*job.Part, *job.Job, error) {
	var before *job.Part
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		before = nil
		if idx >= len(j.Parts) {
			return fmt.Errorf("job %s has no part %d", id, idx)
		}
		p := &j.Parts[idx]
		now := s.Clock.Now()
		if !startable(*p) || (p.SubmitLease != "" && now.Before(p.SubmitLeaseUntil)) {
			return store.ErrNoChange
		}
		if ok, err := applyBudget(j, idx); !ok {
			if err == nil {
				service.Settle(s.Providers.Get(j.Provider), j, now)
			}
			return err
		}
		cp := *p
		before = &cp
		p.SubmitLease, p.SubmitLeaseUntil = run, now.Add(SubmitLease)
		if p.SubmitTriedAt.IsZero() {
			p.SubmitTriedAt = now
		}
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return nil, j, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("claim job %s part %d: %w", id, idx, err)
	}
	return before, j, nil
}

// startable: a queued part without a Ref, or one cancelled while its create
// was on the wire (cancelling without a Ref), whose provider job is looked for
// so that it is stopped and accounted for, never left running unseen.
func startable(p job.Part) bool {
	return p.Ref == "" && (p.Status == job.StatusQueued || p.Status == job.StatusCancelling)
}

// StartPending reports whether a job has parts StartParts would take up.
func StartPending(j *job.Job) bool {
	for _, p := range j.Parts {
		if startable(p) {
			return true
		}
	}
	return false
}

// findable: a part with no Ref whose provider job, made by a create on the
// wire or tried with its outcome lost, can be looked for.
func findable(ab service.Abilities, p job.Part) bool {
	return p.Ref == "" && (p.SubmitLease != "" || !p.SubmitTriedAt.IsZero()) && ab.Finds()
}

// lookFor finds the provider job an earlier create of a part cancelled while
// that create was on the wire made; it never creates one. "" when it made none.
func (s *Service) lookFor(ctx context.Context, prov service.BatchProvider, j *job.Job, p job.Part, in service.BatchSubmit) (string, error) {
	ab := s.abilities(prov)
	if ab.FindNamed != nil && !p.SubmitTriedAt.IsZero() {
		ref, err := ab.FindNamed(ctx, p.Name)
		if err != nil {
			return "", &unknownOutcome{create: errors.New("an earlier create of this cancelled part ended unseen"), find: err}
		}
		return ref, nil
	}
	if ab.FindSubmitted == nil || p.SubmitTriedAt.IsZero() {
		return "", nil
	}
	ref, err := s.find(ctx, ab.FindSubmitted, j, p, in, p.SubmitTriedAt)
	if err != nil && !errors.Is(err, service.ErrSubmitUnproven) {
		return "", &unknownOutcome{create: errors.New("an earlier create of this cancelled part ended unseen"), find: err}
	}
	return ref, err
}

// releasePart drops run's lease on a part whose create made nothing.
func (s *Service) releasePart(ctx context.Context, id string, idx int, run string) (*job.Job, error) {
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		p := &j.Parts[idx]
		if p.SubmitLease != run {
			return store.ErrNoChange
		}
		p.SubmitLease, p.SubmitLeaseUntil = "", time.Time{}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return nil, fmt.Errorf("release job %s part %d: %w", id, idx, err)
	}
	return j, nil
}

// unknownOutcome: a create failed and the provider could not be asked whether
// it made the job anyway.
type unknownOutcome struct{ create, find error }

func (e *unknownOutcome) Error() string {
	return fmt.Sprintf("create failed (%v) and finding the job it may have made failed too: %v", e.create, e.find)
}

func (e *unknownOutcome) Unwrap() []error { return []error{e.create, e.find} }

// unprovenFind: provider jobs no part holds may be a part's, and none can be
// proved its yet (see service.Found). The part keeps its lease and is looked
// for again once the lease runs out; such a job is never adopted nor
// stopped, and it becomes provable when it ends (Anthropic ends every batch
// within 24 hours).
type unprovenFind struct {
	name string
	refs []string
}

func (e *unprovenFind) Error() string {
	return fmt.Sprintf("%s: provider jobs %s may be its and cannot be proved so until they end", e.name, strings.Join(e.refs, ", "))
}

func (e *unprovenFind) Unwrap() error { return service.ErrSubmitUnproven }

// find looks for the provider job a create of part p with an unknown outcome
// made. The finder lists the provider jobs of the part's shape created since
// its first try, split into those proved the part's (by a mark only its
// create carries) and those not provable yet; the store's Ref owners drop
// those other parts hold. One proved the part's is taken (a duplicate of it
// has ended, so there is nothing to stop); a free unproven one makes the part
// wait (an *unprovenFind); none means the create made nothing.
func (s *Service) find(ctx context.Context, finder func(context.Context, service.BatchSubmit, time.Time) (service.Found, error), j *job.Job, p job.Part, in service.BatchSubmit, since time.Time) (string, error) {
	found, err := finder(ctx, in, since)
	if err != nil {
		return "", err
	}
	free := func(refs []string) ([]string, error) {
		var out []string
		for _, ref := range refs {
			id, part, err := s.Store.RefOwner(ctx, j.Provider, ref)
			switch {
			case errors.Is(err, store.ErrNotFound):
				out = append(out, ref)
			case err != nil:
				return nil, err
			case id == j.ID && part == p.Index:
				return []string{ref}, nil // its Ref write was lost after the owner entry
			}
		}
		return out, nil
	}
	ours, err := free(found.Ours)
	if err != nil {
		return "", err
	}
	if len(ours) > 0 {
		if len(ours) > 1 {
			service.Logger(s.Log).WarnContext(ctx, "several ended provider jobs are the part's; the first is taken", "job_id", j.ID, "part", p.Index, "refs", ours)
		}
		return ours[0], nil
	}
	waiting, err := free(found.Unproven)
	if err != nil {
		return "", err
	}
	if len(waiting) > 0 {
		return "", &unprovenFind{name: in.Name, refs: waiting}
	}
	return "", nil
}

// create makes the provider job of a claimed part. A provider whose create
// takes an idempotency key (Bedrock's clientRequestToken = part name) returns
// the same job on a retry. For one without (Abilities.FindSubmitted), a part
// tried before is looked for first, and a create that failed with
// service.ErrSubmitUnknown (a server error or a lost answer after the send)
// is looked for after; one that may still be running (service.ErrSubmitInFlight)
// and is not listed yet keeps the part's lease, to be looked for again. A
// definite refusal is never looked for.
func (s *Service) create(ctx context.Context, prov service.BatchProvider, j *job.Job, p job.Part, in service.BatchSubmit) (string, error) {
	finder := s.abilities(prov).FindSubmitted
	if finder == nil {
		return prov.Submit(ctx, in)
	}
	since := p.SubmitTriedAt
	if !since.IsZero() {
		ref, err := s.find(ctx, finder, j, p, in, since)
		if err != nil {
			if errors.Is(err, service.ErrSubmitUnproven) {
				return "", err
			}
			return "", &unknownOutcome{create: errors.New("an earlier create of this part ended unseen"), find: err}
		}
		if ref != "" {
			service.Logger(s.Log).InfoContext(ctx, "found the provider job of an earlier create", "job_id", j.ID, "part", p.Index, "ref", ref)
			return ref, nil
		}
	} else {
		since = s.Clock.Now()
	}
	if err := s.takeSlot(ctx, j, p); err != nil {
		return "", err
	}
	ref, err := prov.Submit(ctx, in)
	if err == nil || !errors.Is(err, service.ErrSubmitUnknown) {
		return ref, err
	}
	found, ferr := s.find(ctx, finder, j, p, in, since)
	switch {
	case errors.Is(ferr, service.ErrSubmitUnproven):
		return "", ferr
	case ferr != nil:
		return "", &unknownOutcome{create: err, find: ferr}
	case found != "":
		service.Logger(s.Log).InfoContext(ctx, "create answered an error but made the provider job", "job_id", j.ID, "part", p.Index, "ref", found, "error", err)
		return found, nil
	case errors.Is(err, service.ErrSubmitInFlight):
		return "", &unknownOutcome{create: err, find: errNotListedYet}
	}
	return "", err
}

// errNotListedYet: a create that may still be running has made no job yet.
var errNotListedYet = errors.New("no provider job is listed yet, and the create may still be running")
