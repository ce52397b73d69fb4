package handler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
)

// ReconcileService is what Reconciler needs.
type ReconcileService interface {
	Reconcile(ctx context.Context) (reconcile.ReconcileReport, error)
}

// SageMakerReconciler settles SageMaker async jobs whose SNS notification was lost.
type SageMakerReconciler interface {
	ReconcileSageMaker(ctx context.Context, updatedBefore time.Time, limit int) (int, error)
}

// Reconciler handles the schedule's "Scheduled Event". Overlapping runs are
// safe (the service's writes are conditional), so a late or retried
// invocation only repeats idempotent work.
type Reconciler struct {
	Svc ReconcileService
	// SageMaker, when set, also probes in-flight SageMaker async jobs for an
	// output or failure object that no notification announced.
	SageMaker SageMakerReconciler
	// Models, when set, refreshes the account's model facts once they are a
	// day old (each run reads the stored snapshot's date; one run a day reads
	// the account).
	Models ModelsRefresher
	Log    *slog.Logger
}

// ModelsRefresher refreshes the account's model facts when they are stale.
type ModelsRefresher interface {
	Fresh(ctx context.Context) (*model.Account, error)
}

// sageMakerGrace leaves a fresh job to its own notification; probing earlier
// would only cost GetObject calls (settling is idempotent either way).
const sageMakerGrace = 5 * time.Minute

// sageMakerLimit bounds the SageMaker jobs one run probes.
const sageMakerLimit = 500

// Handle runs one reconciler pass. An error fails the invocation, which the
// stack's alarm on the function's Errors metric reports.
func (h *Reconciler) Handle(ctx context.Context, ev events.CloudWatchEvent) (reconcile.ReconcileReport, error) {
	if h.Models != nil {
		// A failed refresh keeps the facts already stored; it is logged, not
		// an error of the run, so the jobs' reconciliation alarms stay meaningful.
		if _, err := h.Models.Fresh(ctx); err != nil {
			h.Log.WarnContext(ctx, "account model facts not refreshed", "error", err)
		}
	}
	rep, err := h.Svc.Reconcile(ctx)
	if h.SageMaker != nil {
		n, smErr := h.SageMaker.ReconcileSageMaker(ctx, time.Now().Add(-sageMakerGrace), sageMakerLimit)
		if n > 0 {
			h.Log.InfoContext(ctx, "settled SageMaker jobs whose notification was lost", "jobs", n)
		}
		err = errors.Join(err, smErr)
	}
	if err != nil {
		h.Log.ErrorContext(ctx, "reconcile run had errors", "event_id", ev.ID, "errors", rep.Errors, "error", err)
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	return rep, nil
}
