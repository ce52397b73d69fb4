package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// SageMakerEventsService is what SageMakerEvents needs.
type SageMakerEventsService interface {
	OnSageMakerEvent(ctx context.Context, ev smsvc.SageMakerEvent) error
}

// SageMakerEvents handles async inference notifications from the success and
// error SNS topics.
type SageMakerEvents struct {
	Svc SageMakerEventsService
	Log *slog.Logger
}

// Handle applies every notification of an SNS delivery. A TestNotification and a
// malformed message are logged and acknowledged (a retry could never succeed); a
// failure to apply a good one is returned, so Lambda retries the delivery, which
// the service applies idempotently.
func (h *SageMakerEvents) Handle(ctx context.Context, ev events.SNSEvent) error {
	var errs []error
	for _, r := range ev.Records {
		n, err := sagemaker.ParseNotification([]byte(r.SNS.Message))
		switch {
		case errors.Is(err, sagemaker.ErrTestNotification):
			h.Log.InfoContext(ctx, "SageMaker TestNotification; ignored", "topic", r.SNS.TopicArn, "message_id", r.SNS.MessageID)
			continue
		case err != nil:
			h.Log.ErrorContext(ctx, "malformed SageMaker notification; ignored", "topic", r.SNS.TopicArn, "message_id", r.SNS.MessageID, "error", err)
			continue
		}
		if err := h.Svc.OnSageMakerEvent(ctx, n); err != nil {
			errs = append(errs, fmt.Errorf("notification %s: %w", r.SNS.MessageID, err))
		}
	}
	return errors.Join(errs...)
}

// routeSNS runs an SNS delivery: the Lambda event ({"Records":[{"Sns":...}]}) or one
// notification as SNS POSTs it to an HTTP subscriber ({"Type":"Notification",...}).
func (r *Router) routeSNS(ctx context.Context, body []byte) error {
	if r.SageMaker == nil {
		return fmt.Errorf("%w: SNS notifications have no subscriber here (SageMaker async events are not wired)", ErrUnroutable)
	}
	var ev events.SNSEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return fmt.Errorf("%w: not an SNS event: %v", ErrUnroutable, err)
	}
	if len(ev.Records) == 0 {
		var n struct {
			events.SNSEntity
			Timestamp string `json:"Timestamp"`
		}
		if err := json.Unmarshal(body, &n); err != nil {
			return fmt.Errorf("%w: not an SNS notification: %v", ErrUnroutable, err)
		}
		e := n.SNSEntity
		e.Timestamp, _ = time.Parse(time.RFC3339, n.Timestamp)
		ev.Records = []events.SNSEventRecord{{EventSource: "aws:sns", EventVersion: "1.0", SNS: e}}
	}
	return r.SageMaker.Handle(ctx, ev)
}
