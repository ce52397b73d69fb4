package handler

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// InputValidator is what Validate needs.
type InputValidator interface {
	ValidateFile(ctx context.Context, jobID string) error
}

// Validate handles "Input Validation Requested": it checks a file submit's
// input line by line, then writes the provider inputs and starts the job (or
// fails it with the problems). An error is returned for a retry (storage or
// provider trouble); an invalid file is a failed job, not an error.
type Validate struct {
	Svc InputValidator
	Log *slog.Logger
}

// Handle validates the job named in the event.
func (h *Validate) Handle(ctx context.Context, ev events.CloudWatchEvent) error {
	var d transfer.ValidationRequest
	if err := json.Unmarshal(ev.Detail, &d); err != nil || d.JobID == "" {
		h.Log.ErrorContext(ctx, "malformed Input Validation Requested event; ignored", "event_id", ev.ID, "error", err)
		return nil
	}
	if err := h.Svc.ValidateFile(ctx, d.JobID); err != nil {
		h.Log.ErrorContext(ctx, "input validation failed; retried", "job_id", d.JobID, "error", err)
		return err
	}
	return nil
}
