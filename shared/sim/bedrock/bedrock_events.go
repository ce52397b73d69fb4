package bedrock

// EventBridge delivery of "Batch Inference Job State Change" events.

import (
	"context"
	"encoding/json"
	"time"
)

// queueEvent must be called with s.mu held.
func (s *BedrockSim) queueEvent(j *simJob) {
	ev := eventEnvelope{
		Version:    "0",
		ID:         s.uuidLocked(),
		DetailType: bedrockEventDetailType,
		Source:     bedrockEventSource,
		Account:    s.Account,
		Time:       j.changedAt.UTC().Format(time.RFC3339),
		Region:     s.Region,
		Resources:  []string{j.arn},
		Detail: eventDetail{
			Version:        "0.1",
			AccountID:      s.Account,
			BatchJobName:   j.name,
			BatchJobArn:    j.arn,
			BatchModelID:   j.model,
			Status:         j.status,
			FailureMessage: j.message,
			CreationTime:   j.submitTime.UTC().Format("Jan 2, 2006, 3:04:05 PM"),
		},
	}
	b, err := json.Marshal(ev)
	if err != nil {
		s.Log.Error("bedrock sim: encode event", "err", err)
		return
	}
	s.pending = append(s.pending, b)
}

type eventEnvelope struct {
	Version    string      `json:"version"`
	ID         string      `json:"id"`
	DetailType string      `json:"detail-type"`
	Source     string      `json:"source"`
	Account    string      `json:"account"`
	Time       string      `json:"time"`
	Region     string      `json:"region"`
	Resources  []string    `json:"resources"`
	Detail     eventDetail `json:"detail"`
}

type eventDetail struct {
	Version        string `json:"version"`
	AccountID      string `json:"accountId"`
	BatchJobName   string `json:"batchJobName"`
	BatchJobArn    string `json:"batchJobArn"`
	BatchModelID   string `json:"batchModelId"`
	Status         string `json:"status"`
	FailureMessage string `json:"failureMessage"`
	CreationTime   string `json:"creationTime"`
}

// flush delivers queued events in order, applying the loss and duplication knobs.
func (s *BedrockSim) flush(ctx context.Context) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	events := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, ev := range events {
		var probe struct {
			Detail struct {
				Status string `json:"status"`
			} `json:"detail"`
		}
		_ = json.Unmarshal(ev, &probe)
		st := probe.Detail.Status
		if s.DropEvent != nil && s.DropEvent(st) {
			s.Log.Info("bedrock sim: event dropped on purpose (best-effort delivery)", "status", st)
			continue
		}
		n := 1
		if s.DuplicateEvent != nil && s.DuplicateEvent(st) {
			n = 2
		}
		for range n {
			if s.Emit != nil {
				s.Emit(ctx, ev)
			}
		}
	}
}
