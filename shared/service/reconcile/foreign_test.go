package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// lostFirstCreate is the Anthropic provider whose first create answers a
// 529 without making a batch: an outcome the service cannot know.
type lostFirstCreate struct {
	*anthropicbatch.Fetching
	once sync.Once
}

func (l *lostFirstCreate) Submit(ctx context.Context, in service.BatchSubmit) (string, error) {
	lost := false
	l.once.Do(func() { lost = true })
	if lost {
		return "", errors.Join(service.ErrSubmitUnknown, errors.New("create message batch: HTTP 529: Overloaded (test double)"))
	}
	return l.Fetching.Submit(ctx, in)
}

// foreignBatch creates a batch of n requests as another system in the same
// Anthropic organization would: its own custom_ids, nothing of ours.
func foreignBatch(t *testing.T, c *anthropicsdk.Calls, n int) string {
	t.Helper()
	var reqs []string
	for i := range n {
		reqs = append(reqs, fmt.Sprintf(`{"custom_id":"other-%d","params":{"model":%q,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}}`, i, claude))
	}
	b, err := c.Client.Create(context.Background(), strings.NewReader(`{"requests":[`+strings.Join(reqs, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	return b.ID
}

// A create with an unknown outcome never takes, nor stops, a batch of the
// same size that another system made in the organization meanwhile: the
// part waits until such a batch can be told apart, then makes its own, and
// the job completes from its own batch.
func TestLostCreateLeavesForeignBatchesAlone(t *testing.T) {
	for _, foreign := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d foreign", foreign), func(t *testing.T) {
			var calls *anthropicsdk.Calls
			h := newFaultyHarness(t, faults{provider: func(p service.BatchProvider) service.BatchProvider {
				ap := p.(*anthropicbatch.Fetching)
				calls = ap.Calls.(*anthropicsdk.Calls)
				return &lostFirstCreate{Fetching: ap}
			}})
			h.sim.ErrorEvery = 0
			theirs := map[string]bool{}
			for range foreign {
				theirs[foreignBatch(t, calls, 5)] = true
			}
			j := h.submit(5, 1)
			for round := range 12 {
				got, err := h.job(j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if ref := got.Parts[0].Ref; theirs[ref] {
					t.Fatalf("round %d: the part took the foreign batch %s", round, ref)
				}
				if got.Status.Terminal() {
					break
				}
				h.sim.Step()
				h.clock.Add(batch.SubmitLease + time.Minute)
				if err := h.reconcile(); err != nil {
					t.Logf("reconcile: %v", err)
				}
			}
			got, err := h.job(j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != job.StatusCompleted || got.Succeeded != 5 || theirs[got.Parts[0].Ref] {
				t.Errorf("job %s, %d succeeded, ref %s (%s); want completed with 5 from its own batch", got.Status, got.Succeeded, got.Parts[0].Ref, got.Parts[0].Message)
			}
			if n := h.sim.Calls()["cancel"]; n != 0 {
				t.Errorf("%d cancels, want none (no batch here was proved ours to stop)", n)
			}
		})
	}
}
