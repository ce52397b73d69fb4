package handler

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// UnitRunner is what Units needs.
type UnitRunner interface {
	RunUnit(ctx context.Context, u transfer.Unit) error
}

// Units handles the validation queue's messages (SQS, batch item failures
// reported): each is one fan-out unit of a job over many files. A failed
// unit is left on the queue for its next delivery; a malformed one is
// dropped, as a retry cannot mend it.
type Units struct {
	Svc UnitRunner
	Log *slog.Logger
}

// Handle runs the units in ev, one after another.
func (h *Units) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, m := range ev.Records {
		var u transfer.Unit
		if err := json.Unmarshal([]byte(m.Body), &u); err != nil || u.JobID == "" {
			h.Log.ErrorContext(ctx, "malformed validation unit; dropped", "message_id", m.MessageId, "error", err)
			continue
		}
		if err := h.Svc.RunUnit(ctx, u); err != nil {
			h.Log.ErrorContext(ctx, "validation unit failed; delivered again", "job_id", u.JobID, "kind", u.Kind, "unit", u.Index, "error", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}
