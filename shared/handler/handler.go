// Package handler holds the Lambda event handlers. Each is a struct with its
// dependencies as fields; functions/<name>/main.go only builds and starts one.
// make dev's /local/events endpoint calls the very same handlers.
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// BedrockEventsService is what BedrockEvents needs.
type BedrockEventsService interface {
	OnProviderEvent(ctx context.Context, ev batch.ProviderEvent) error
}

// BedrockEvents handles "Batch Inference Job State Change" from the default bus.
type BedrockEvents struct {
	Svc BedrockEventsService
	Log *slog.Logger
}

// Handle applies one state change. A malformed event is logged and acknowledged:
// retrying it would never succeed.
func (h *BedrockEvents) Handle(ctx context.Context, ev events.CloudWatchEvent) error {
	if ev.Source != config.BedrockEventSource || ev.DetailType != config.BedrockDetailType {
		h.Log.WarnContext(ctx, "unexpected event on the Bedrock rule; ignored", "source", ev.Source, "detail_type", ev.DetailType)
		return nil
	}
	d, err := bedrock.ParseEvent(ev.Detail)
	if err != nil {
		h.Log.ErrorContext(ctx, "malformed Bedrock event; ignored", "event_id", ev.ID, "error", err)
		return nil
	}
	return h.Svc.OnProviderEvent(ctx, batch.ProviderEvent{JobName: d.JobName, Ref: d.JobARN, Status: d.Status, Message: d.FailureMessage})
}

// IngestService is what Ingest needs.
type IngestService interface {
	Ingest(ctx context.Context, jobID string) error
	// ContinueIngest asks for another ingest run that resumes from the checkpoint.
	ContinueIngest(ctx context.Context, jobID string) error
}

// Ingest handles "Job Output Ready" from the project bus.
type Ingest struct {
	Svc IngestService
	Log *slog.Logger
	// Reserve is the time kept back from the invocation deadline to save the
	// checkpoint and hand the rest of the file to a fresh invocation.
	Reserve time.Duration
}

// Handle ingests the job named in the event. When the invocation is about to
// time out it stops at a checkpoint and publishes a continuation, so a huge
// output never depends on one Lambda run or on async-invoke retries.
func (h *Ingest) Handle(ctx context.Context, ev events.CloudWatchEvent) error {
	var d service.OutputReady
	if err := json.Unmarshal(ev.Detail, &d); err != nil || d.JobID == "" {
		h.Log.ErrorContext(ctx, "malformed Job Output Ready event; ignored", "event_id", ev.ID, "error", err)
		return nil
	}
	return withinBudget(ctx, h.Reserve, h.Log, "ingest", d.JobID, h.Svc.Ingest, h.Svc.ContinueIngest)
}

// withinBudget runs run(jobID) with the invocation's deadline less a reserve.
// When run used up that budget while the invocation still has time, cont hands
// the rest (resumed from run's checkpoint) to a fresh invocation.
func withinBudget(ctx context.Context, reserve time.Duration, log *slog.Logger, what, jobID string, run, cont func(context.Context, string) error) error {
	runCtx := ctx
	if deadline, ok := ctx.Deadline(); ok {
		if reserve == 0 {
			reserve = 30 * time.Second
		}
		// A short timeout keeps most of itself for work, or every run would only hand over.
		reserve = min(reserve, time.Until(deadline)/5)
		var cancel context.CancelFunc
		runCtx, cancel = context.WithDeadline(ctx, deadline.Add(-reserve))
		defer cancel()
	}
	err := run(runCtx, jobID)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		log.InfoContext(ctx, what+" reached the invocation's time budget; continuing in a new invocation", "job_id", jobID)
		return cont(ctx, jobID)
	}
	return err
}

// ErrUnroutable is an event no handler takes; make dev answers it with 400.
var ErrUnroutable = errors.New("unroutable event")

// Router dispatches an event body exactly as AWS delivers it to the handler a
// Lambda would run for it.
type Router struct {
	// Events are the EventBridge routes keyed by "source|detail-type"
	// (shared/app/routes builds them from the route table).
	Events map[string]func(context.Context, events.CloudWatchEvent) error
	// SageMaker takes SNS deliveries (async inference notifications).
	SageMaker *SageMakerEvents
}

// Route decodes body and runs the matching handler.
func (r *Router) Route(ctx context.Context, body []byte) error {
	var probe struct {
		Source     string          `json:"source"`
		DetailType string          `json:"detail-type"`
		Detail     json.RawMessage `json:"detail"`
		Records    []struct {
			EventSource string `json:"EventSource"`
		} `json:"Records"`
		Type string `json:"Type"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return fmt.Errorf("%w: body is not JSON: %v", ErrUnroutable, err)
	}
	switch {
	case probe.Source != "" && probe.DetailType != "":
		ev, err := DecodeEvent(body)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnroutable, err)
		}
		if h, ok := r.Events[ev.Source+"|"+ev.DetailType]; ok {
			return h(ctx, ev)
		}
		if ev.Source == config.EventSource {
			return nil // a project event no rule takes is dropped, as the bus drops it
		}
		return fmt.Errorf("%w: no rule for source %q detail-type %q (routed: %s)", ErrUnroutable,
			ev.Source, ev.DetailType, strings.Join(slices.Sorted(maps.Keys(r.Events)), ", "))
	case len(probe.Records) > 0 && probe.Records[0].EventSource == "aws:sns", probe.Type == "Notification":
		return r.routeSNS(ctx, body)
	default:
		return fmt.Errorf("%w: want an EventBridge event (with source and detail-type) or an SNS notification", ErrUnroutable)
	}
}
