package batch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// A provider whose create takes no idempotency key is asked, after a create
// with an unknown outcome, for the jobs of the part's shape made since (see
// find). Such a job is told apart from others of its shape only once it has
// ended (its results carry the part's mark), so two creates of the same shape
// pending at once would each wait on both jobs. So a create of such a
// provider first takes the slot of its provider
// and record count, and the slot is given back only once the create's outcome
// is written on the part (a Ref, a refusal, a cancel): a create of the same
// shape waits (the part stays queued, as for a busy provider) while another's
// outcome is unknown. The slot of a part that has since moved on (its Ref is
// written, it ended, its job is gone) is taken over.

// errSlotBusy: another part's create of the same shape has an unknown outcome.
var errSlotBusy = errors.Join(service.ErrProviderBusy, errors.New("another create of the same size has an outcome not known yet"))

func createSlot(provider string, records int) string {
	return "create#" + provider + "#" + strconv.Itoa(records)
}

func slotHolder(j *job.Job, p job.Part) string { return j.ID + "#" + strconv.Itoa(p.Index) }

// takeSlot takes the create slot of part p (it may hold it already).
func (s *Service) takeSlot(ctx context.Context, j *job.Job, p job.Part) error {
	key, me := createSlot(j.Provider, p.RecordCount), slotHolder(j, p)
	for range 3 {
		cur, err := s.Store.Slot(ctx, key)
		if err != nil {
			return err
		}
		if cur == me {
			return nil
		}
		if cur != "" {
			pending, err := s.pendingCreate(ctx, cur)
			if err != nil {
				return err
			}
			if pending {
				return errSlotBusy
			}
		}
		ok, err := s.Store.SwapSlot(ctx, key, cur, me)
		if err != nil || ok {
			return err
		}
	}
	return errSlotBusy
}

// pendingCreate reports whether holder ("job#part") still has a create whose
// outcome is not written: a part without a Ref that may yet be submitted or
// looked for.
func (s *Service) pendingCreate(ctx context.Context, holder string) (bool, error) {
	id, idx, ok := strings.Cut(holder, "#")
	n, err := strconv.Atoi(idx)
	if !ok || err != nil {
		return false, nil
	}
	j, err := s.Store.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the holder of a create slot %s: %w", holder, err)
	}
	if n >= len(j.Parts) {
		return false, nil
	}
	p := j.Parts[n]
	return p.SubmitLease != "" && startable(p), nil
}

// giveSlot gives back part p's create slot once its outcome is written.
func (s *Service) giveSlot(ctx context.Context, j *job.Job, p job.Part) {
	if _, err := s.Store.SwapSlot(ctx, createSlot(j.Provider, p.RecordCount), slotHolder(j, p), ""); err != nil {
		service.Logger(s.Log).WarnContext(ctx, "give back a create slot", "job_id", j.ID, "part", p.Index, "error", err)
	}
}

// slotTaken reports whether another part's pending create holds p's slot.
func (s *Service) slotTaken(ctx context.Context, j *job.Job, p job.Part) (bool, error) {
	cur, err := s.Store.Slot(ctx, createSlot(j.Provider, p.RecordCount))
	if err != nil || cur == "" || cur == slotHolder(j, p) {
		return false, err
	}
	return s.pendingCreate(ctx, cur)
}
