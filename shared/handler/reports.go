package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/ondemand"
)

// OnDemandService is what OnDemand needs.
type OnDemandService interface {
	RunOnDemand(ctx context.Context, jobID string) error
	ContinueOnDemand(ctx context.Context, jobID string) error
}

// OnDemand handles "On-Demand Run Requested": it runs a job's records through the
// runtime API and, near the invocation deadline, stops at a checkpoint and hands
// the rest to a fresh invocation.
type OnDemand struct {
	Svc     OnDemandService
	Log     *slog.Logger
	Reserve time.Duration
}

// Handle runs or resumes the job named in the event.
func (h *OnDemand) Handle(ctx context.Context, ev events.CloudWatchEvent) error {
	var d ondemand.OnDemandRun
	if err := json.Unmarshal(ev.Detail, &d); err != nil || d.JobID == "" {
		h.Log.ErrorContext(ctx, "malformed On-Demand Run Requested event; ignored", "event_id", ev.ID, "error", err)
		return nil
	}
	return withinBudget(ctx, h.Reserve, h.Log, "on-demand run", d.JobID, h.Svc.RunOnDemand, h.Svc.ContinueOnDemand)
}

// PipelineRunner is what NightlyReport needs.
type PipelineRunner interface {
	Tick(ctx context.Context, req pipeline.TickRequest) (pipeline.RunInfo, error)
	OnJobCompleted(ctx context.Context, jobID string) error
}

// NightlyReport takes the EventBridge Scheduler tick ({"pipeline": ...}), a
// by-hand "Pipeline Run Requested" and "Job Completed" from the project bus.
type NightlyReport struct {
	Runner PipelineRunner
	Log    *slog.Logger
	// Announce delivers the completion notifications jobs asked for (nil: none).
	Announce Announcer
}

// Announcer consumes "Job Completed" for notifications (shared/service/announce).
type Announcer interface {
	OnJobCompleted(ctx context.Context, jobID string) error
}

// Handle dispatches one payload.
func (h *NightlyReport) Handle(ctx context.Context, raw json.RawMessage) error {
	var probe struct {
		DetailType string          `json:"detail-type"`
		Source     string          `json:"source"`
		Detail     json.RawMessage `json:"detail"`
		Pipeline   string          `json:"pipeline"`
		Date       string          `json:"date"`
		Scheduled  string          `json:"scheduled_time"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		h.Log.ErrorContext(ctx, "nightly-report payload is not JSON; ignored", "error", err)
		return nil
	}
	switch {
	case probe.Source == config.EventSource && probe.DetailType == config.DetailJobCompleted:
		var d service.Completed
		if err := json.Unmarshal(probe.Detail, &d); err != nil || d.JobID == "" {
			h.Log.ErrorContext(ctx, "malformed Job Completed event; ignored", "error", err)
			return nil
		}
		var annErr error
		if h.Announce != nil {
			annErr = h.Announce.OnJobCompleted(ctx, d.JobID)
		}
		return errors.Join(annErr, h.Runner.OnJobCompleted(ctx, d.JobID))
	case probe.Source == config.EventSource && probe.DetailType == config.DetailPipelineTick:
		var d pipeline.TickRequest
		if err := json.Unmarshal(probe.Detail, &d); err != nil {
			h.Log.ErrorContext(ctx, "malformed Pipeline Run Requested event; ignored", "error", err)
			return nil
		}
		return h.tick(ctx, d)
	case probe.DetailType == "" && probe.Pipeline != "":
		return h.tick(ctx, pipeline.TickRequest{Pipeline: probe.Pipeline, Date: probe.Date, ScheduledTime: probe.Scheduled})
	default:
		h.Log.WarnContext(ctx, "nightly-report got an event it does not handle; ignored", "source", probe.Source, "detail_type", probe.DetailType)
		return nil
	}
}

// tick runs a pipeline; a run that can never succeed (unknown pipeline, no
// documents) is logged and acknowledged, since a retry would fail the same way.
func (h *NightlyReport) tick(ctx context.Context, req pipeline.TickRequest) error {
	ri, err := h.Runner.Tick(ctx, req)
	var fe *job.FieldError
	switch {
	case errors.Is(err, pipeline.ErrNoDocuments), errors.As(err, &fe):
		h.Log.WarnContext(ctx, "pipeline run not started", "pipeline", req.Pipeline, "date", req.Date, "reason", err.Error())
		return nil
	case err != nil:
		return fmt.Errorf("run pipeline %s: %w", req.Pipeline, err)
	}
	h.Log.InfoContext(ctx, "pipeline tick", "pipeline", ri.Pipeline, "date", ri.Date, "job_id", ri.JobID, "created", ri.Created, "status", ri.JobStatus)
	return nil
}
