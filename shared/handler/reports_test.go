package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
)

type fakeRunner struct {
	ticks     []pipeline.TickRequest
	completed []string
	tickErr   error
}

func (f *fakeRunner) Tick(_ context.Context, req pipeline.TickRequest) (pipeline.RunInfo, error) {
	f.ticks = append(f.ticks, req)
	return pipeline.RunInfo{Pipeline: req.Pipeline, Date: req.Date}, f.tickErr
}

func (f *fakeRunner) OnJobCompleted(_ context.Context, id string) error {
	f.completed = append(f.completed, id)
	return nil
}

func sample(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNightlyReportDispatch(t *testing.T) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	tests := []struct {
		name          string
		payload       []byte
		tickErr       error
		wantTicks     []pipeline.TickRequest
		wantCompleted []string
		wantErr       bool
	}{
		{name: "scheduler tick", payload: sample(t, "../../events/scheduler/nightly-report-tick.json"),
			wantTicks: []pipeline.TickRequest{{Pipeline: "support-triage", ScheduledTime: "2026-11-30T02:00:00Z"}}},
		{name: "run requested", payload: sample(t, "../../events/project/pipeline-run-requested.json"),
			wantTicks: []pipeline.TickRequest{{Pipeline: "support-triage", Date: "2025-11-28"}}},
		{name: "job completed", payload: sample(t, "../../events/project/job-completed.json"), wantCompleted: []string{"01jdz3k6r8x9y2w4v5t7q0m1n3"}},
		{name: "other project event", payload: sample(t, "../../events/project/job-output-ready.json")},
		{name: "not JSON", payload: []byte("{")},
		// Retrying a run with no documents, or of an unknown pipeline, cannot help: acknowledged.
		{name: "no documents", payload: []byte(`{"pipeline":"p"}`), tickErr: fmt.Errorf("x: %w", pipeline.ErrNoDocuments),
			wantTicks: []pipeline.TickRequest{{Pipeline: "p"}}},
		{name: "unknown pipeline", payload: []byte(`{"pipeline":"p"}`), tickErr: job.Fieldf("pipeline", "no pipeline"),
			wantTicks: []pipeline.TickRequest{{Pipeline: "p"}}},
		// A store or S3 failure is returned, so Lambda's async retry runs it again.
		{name: "transient failure", payload: []byte(`{"pipeline":"p"}`), tickErr: errors.New("dynamodb unavailable"),
			wantTicks: []pipeline.TickRequest{{Pipeline: "p"}}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRunner{tickErr: tc.tickErr}
			h := &NightlyReport{Runner: f, Log: log}
			err := h.Handle(context.Background(), json.RawMessage(tc.payload))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if fmt.Sprint(f.ticks) != fmt.Sprint(tc.wantTicks) || fmt.Sprint(f.completed) != fmt.Sprint(tc.wantCompleted) {
				t.Fatalf("ticks %v completed %v; want %v %v", f.ticks, f.completed, tc.wantTicks, tc.wantCompleted)
			}
		})
	}
}

type fakeOnDemand struct {
	run       func(ctx context.Context) error
	runs      []string
	continued []string
}

func (f *fakeOnDemand) RunOnDemand(ctx context.Context, id string) error {
	f.runs = append(f.runs, id)
	return f.run(ctx)
}

func (f *fakeOnDemand) ContinueOnDemand(_ context.Context, id string) error {
	f.continued = append(f.continued, id)
	return nil
}

// The run stops before the invocation deadline and hands over to a new invocation.
func TestOnDemandContinuesBeforeDeadline(t *testing.T) {
	var ev events.CloudWatchEvent
	if err := json.Unmarshal(sample(t, "../../events/project/on-demand-run-requested.json"), &ev); err != nil {
		t.Fatal(err)
	}
	f := &fakeOnDemand{run: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}
	// The reserve is capped at a fifth of the time left: 400 ms of this 2 s invocation.
	h := &OnDemand{Svc: f, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Reserve: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := h.Handle(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if len(f.runs) != 1 || len(f.continued) != 1 || f.continued[0] != "01jdz3k6r8x9y2w4v5t7q0m1n3" {
		t.Fatalf("runs %v continued %v", f.runs, f.continued)
	}
	// A malformed event is acknowledged without a run.
	f2 := &fakeOnDemand{run: func(context.Context) error { return nil }}
	h.Svc = f2
	if err := h.Handle(context.Background(), events.CloudWatchEvent{Detail: json.RawMessage(`{}`)}); err != nil || len(f2.runs) != 0 {
		t.Fatalf("malformed event: err %v runs %v", err, f2.runs)
	}
}
