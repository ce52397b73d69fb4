package handler

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/service"
)

// ReconcileService is what Reconciler needs.
type ReconcileService interface {
	Reconcile(ctx context.Context) (service.ReconcileReport, error)
}

// Reconciler handles the schedule's "Scheduled Event". Overlapping runs are
// safe (the service's writes are conditional), so a late or retried
// invocation only repeats idempotent work.
type Reconciler struct {
	Svc ReconcileService
	Log *slog.Logger
}

// Handle runs one reconciler pass. An error fails the invocation, which the
// stack's alarm on the function's Errors metric reports.
func (h *Reconciler) Handle(ctx context.Context, ev events.CloudWatchEvent) (service.ReconcileReport, error) {
	rep, err := h.Svc.Reconcile(ctx)
	if err != nil {
		h.Log.ErrorContext(ctx, "reconcile run had errors", "event_id", ev.ID, "errors", rep.Errors, "error", err)
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	return rep, nil
}
