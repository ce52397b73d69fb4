package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// Result types of a Message Batch result line.
const (
	ResultSucceeded = "succeeded"
	ResultErrored   = "errored"
	ResultCanceled  = "canceled"
	ResultExpired   = "expired"
)

// resultLine is one line of a batch's results JSONL.
type resultLine struct {
	CustomID string `json:"custom_id"`
	Result   struct {
		Type    string `json:"type"`
		Message *struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StopReason string `json:"stop_reason"`
			Usage      struct {
				InputTokens              int64 `json:"input_tokens"`
				OutputTokens             int64 `json:"output_tokens"`
				CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
				CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
			} `json:"usage"`
		} `json:"message"`
		Error *struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"error"`
	} `json:"result"`
}

// ParseResultLine turns one results line into a record (the ingest Parser).
// Errored, canceled and expired requests are failed records whose error_code
// says which (errored keeps Anthropic's error type and message). An error
// means a bad line.
func ParseResultLine(line []byte) (job.Record, error) {
	var l resultLine
	if err := json.Unmarshal(line, &l); err != nil {
		return job.Record{}, fmt.Errorf("not a Message Batch result: %w", err)
	}
	if l.CustomID == "" {
		return job.Record{}, errors.New("no custom_id")
	}
	own, _ := SplitCustomID(l.CustomID) // the part's mark was proof enough at create (mark.go)
	r := job.Record{ID: own}
	switch l.Result.Type {
	case ResultSucceeded:
		m := l.Result.Message
		if m == nil {
			return job.Record{}, errors.New("succeeded result without a message")
		}
		var sb strings.Builder
		for _, c := range m.Content {
			if c.Type == "text" {
				sb.WriteString(c.Text)
			}
		}
		r.Status = job.RecordSucceeded
		r.Output = sb.String()
		r.StopReason = m.StopReason
		// Cache writes and reads are billed at their own rates, so they stay apart
		// from input_tokens (which the API reports without them).
		r.InputTokens = m.Usage.InputTokens
		r.CacheWriteTokens = m.Usage.CacheCreationInputTokens
		r.CacheReadTokens = m.Usage.CacheReadInputTokens
		r.OutputTokens = m.Usage.OutputTokens
	case ResultErrored:
		r.Status = job.RecordFailed
		r.ErrorCode, r.ErrorMessage = "errored", "the request errored"
		if e := l.Result.Error; e != nil && e.Error.Type != "" {
			r.ErrorCode, r.ErrorMessage = e.Error.Type, e.Error.Message
		}
	case ResultCanceled:
		r.Status = job.RecordFailed
		r.ErrorCode, r.ErrorMessage = ResultCanceled, "the batch was cancelled before this request ran"
	case ResultExpired:
		r.Status = job.RecordFailed
		r.ErrorCode, r.ErrorMessage = ResultExpired, "the batch reached its 24-hour limit before this request ran"
	default:
		return job.Record{}, fmt.Errorf("unknown result type %q", l.Result.Type)
	}
	return r, nil
}
