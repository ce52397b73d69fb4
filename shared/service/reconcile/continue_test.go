package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// deniedGet fails the provider's Get for one ref.
type deniedGet struct {
	service.BatchProvider
	ref *string
}

func (d deniedGet) Get(ctx context.Context, ref string) (service.BatchState, error) {
	if ref == *d.ref {
		return service.BatchState{}, errors.New("AccessDenied: simulated 403")
	}
	return d.BatchProvider.Get(ctx, ref)
}

// failingList fails listing one provider's jobs in flight.
type failingList struct {
	store.Store
	provider string
}

func (f failingList) ListInFlight(ctx context.Context, provider string, before time.Time, limit int) ([]*job.Job, error) {
	if provider == f.provider {
		return nil, errors.New("ThrottlingException: simulated")
	}
	return f.Store.ListInFlight(ctx, provider, before, limit)
}

// One bad job or one provider that cannot be listed never blocks the others:
// every loop logs and goes on, and the run's error counts what failed.
func TestReconcileContinuesPastFailures(t *testing.T) {
	t.Run("a job whose provider call fails", func(t *testing.T) {
		var bad string
		h := newFaultyHarness(t, faults{provider: func(p service.BatchProvider) service.BatchProvider { return deniedGet{p, &bad} }})
		h.sim.ErrorEvery = 0
		a, b := h.submit(3, 7), h.submit(4, 7)
		bad = a.Parts[0].Ref
		h.sim.Step()
		err := h.reconcile()
		if err == nil || !strings.Contains(err.Error(), "1 jobs") || !strings.Contains(err.Error(), "AccessDenied") {
			t.Fatalf("run error = %v, want one job counted with its cause", err)
		}
		if got, _ := h.job(b.ID); got.Status != job.StatusCompleted {
			t.Fatalf("the other job = %s, want completed despite the first", got.Status)
		}
	})
	t.Run("a provider whose jobs cannot be listed", func(t *testing.T) {
		h := newFaultyHarness(t, faults{store: func(s store.Store) store.Store { return failingList{s, job.ProviderAnthropic} }})
		od, err := h.svc.Batch.Submit(context.Background(), batchReqMode(bedrockModel, 3, job.ModeOnDemand))
		if err != nil {
			t.Fatal(err)
		}
		before := h.bus.count(config.DetailOnDemandRun)
		h.clock.Add(reconcile.DefaultStaleAfter)
		err = h.reconcile()
		if err == nil || !strings.Contains(err.Error(), "ThrottlingException") {
			t.Fatalf("run error = %v, want the failed listing", err)
		}
		if h.bus.count(config.DetailOnDemandRun) != before+1 {
			t.Fatalf("the Bedrock on-demand job %s was not reconciled after the Anthropic listing failed", od.ID)
		}
	})
}
