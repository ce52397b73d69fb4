package handler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
)

type fakeReconcile struct{ err error }

func (f fakeReconcile) Reconcile(context.Context) (reconcile.ReconcileReport, error) {
	return reconcile.ReconcileReport{}, f.err
}

type fakeSMReconcile struct {
	calls  int
	before time.Time
	err    error
}

func (f *fakeSMReconcile) ReconcileSageMaker(_ context.Context, before time.Time, _ int) (int, error) {
	f.calls++
	f.before = before
	return 1, f.err
}

// TestReconcilerRunsSageMakerProbe: every scheduled run also settles SageMaker jobs
// whose notification was lost, leaves fresh jobs to their notification, and
// reports either part's failure so the alarm sees it.
func TestReconcilerRunsSageMakerProbe(t *testing.T) {
	tests := []struct {
		name          string
		svcErr, smErr error
		wantErr       bool
	}{
		{"both fine", nil, nil, false},
		{"batch part fails", errors.New("bedrock down"), nil, true},
		{"sagemaker part fails", nil, errors.New("s3 down"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sm := &fakeSMReconcile{err: tc.smErr}
			h := &Reconciler{Svc: fakeReconcile{tc.svcErr}, SageMaker: sm, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
			_, err := h.Handle(context.Background(), events.CloudWatchEvent{ID: "tick"})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if sm.calls != 1 {
				t.Fatalf("SageMaker probe ran %d times, want 1 (even when the batch part failed)", sm.calls)
			}
			if age := time.Since(sm.before); age < sageMakerGrace-time.Second {
				t.Errorf("probes jobs updated %v ago; fresh jobs must be left to their notification", age)
			}
		})
	}
}
