package bedrock

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/claude"
)

// Event is the detail of an aws.bedrock "Batch Inference Job State Change" event.
// It carries no output location and no counts: those come from the job item or Get.
type Event struct {
	JobName        string
	JobARN         string
	ModelID        string
	Status         string
	FailureMessage string
	// CreationTime is kept as Bedrock wrote it ("Aug 28, 2024, 10:47:53 PM" and
	// other shapes): it is for logs only and never parsed.
	CreationTime string
}

type eventDetail struct {
	BatchJobName   string          `json:"batchJobName"`
	BatchJobArn    string          `json:"batchJobArn"`
	BatchModelID   string          `json:"batchModelId"`
	Status         string          `json:"status"`
	FailureMessage string          `json:"failureMessage"`
	CreationTime   json.RawMessage `json:"creationTime"`
}

// ParseEvent parses the detail of a "Batch Inference Job State Change" event.
// It needs a status and the job's name or ARN; an unknown status is returned as
// is (Outcome decides what it means), so a new Bedrock status does not
// make the handler fail.
func ParseEvent(detail json.RawMessage) (Event, error) {
	if claude.FirstByte(detail) != '{' {
		return Event{}, errors.New("bedrock event: detail is not a JSON object")
	}
	var d eventDetail
	if err := json.Unmarshal(detail, &d); err != nil {
		return Event{}, fmt.Errorf("bedrock event: %w", err)
	}
	if d.Status == "" {
		return Event{}, errors.New("bedrock event: no status")
	}
	if d.BatchJobName == "" && d.BatchJobArn == "" {
		return Event{}, errors.New("bedrock event: neither batchJobName nor batchJobArn")
	}
	return Event{
		JobName:        d.BatchJobName,
		JobARN:         d.BatchJobArn,
		ModelID:        d.BatchModelID,
		Status:         d.Status,
		FailureMessage: d.FailureMessage,
		CreationTime:   looseString(d.CreationTime),
	}, nil
}

// looseString returns a JSON string's value, or any other JSON value's text, so an
// odd creationTime never fails the event.
func looseString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return strings.TrimSpace(string(raw))
}
