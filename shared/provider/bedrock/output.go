package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// ManifestName is the summary file Bedrock writes beside the output files.
const ManifestName = "manifest.json.out"

// OutputSuffix ends every output file: <input file name>.out.
const OutputSuffix = ".out"

// JobID is the 12-character job id: the last path segment of the job ARN.
func JobID(jobARN string) string {
	return jobARN[strings.LastIndexByte(jobARN, '/')+1:]
}

// OutputPrefix is where Bedrock writes a job's output: <outputURI>/<job id>/.
func OutputPrefix(outputURI, jobARN string) string {
	return blob.Join(outputURI, JobID(jobARN)) + "/"
}

// outputLine is one line of Bedrock's output JSONL. modelInput is deliberately
// absent: the decoder skips it without building anything, which keeps ingest fast.
type outputLine struct {
	RecordID    string          `json:"recordId"`
	ModelOutput json.RawMessage `json:"modelOutput"`
	Error       *lineError      `json:"error"`
}

type lineError struct {
	ErrorCode    errorCode `json:"errorCode"`
	ErrorMessage string    `json:"errorMessage"`
}

// errorCode takes Bedrock's errorCode, which is a number (400) or a string
// ("ThrottlingException") depending on where the record failed.
type errorCode string

func (c *errorCode) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = errorCode(s)
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		*c = errorCode(b) // the literal as written: 400, not 400.0
	default:
		return fmt.Errorf("errorCode must be a string or a number, got %s", b)
	}
	return nil
}

// claudeOutput is the part of a Claude Messages response ingest keeps.
type claudeOutput struct {
	Type    string `json:"type"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

// ErrBadLine marks an output line that is not a Bedrock result; the caller counts it and moves on.
var ErrBadLine = errors.New("bad bedrock output line")

// ParseOutputLine parses one line of Bedrock output into a record result (JobID
// and ExpiresAt are the caller's). A line that is not a result (truncated JSON,
// wrong types, no recordId, neither modelOutput nor error) is an error wrapping ErrBadLine.
func ParseOutputLine(line []byte) (job.Record, error) {
	var l outputLine
	if err := json.Unmarshal(line, &l); err != nil {
		return job.Record{}, fmt.Errorf("%w: %v", ErrBadLine, err)
	}
	if l.RecordID == "" {
		return job.Record{}, fmt.Errorf("%w: no recordId", ErrBadLine)
	}
	rec := job.Record{ID: l.RecordID}
	if l.Error != nil {
		rec.Status = job.RecordFailed
		rec.ErrorCode = string(l.Error.ErrorCode)
		rec.ErrorMessage = l.Error.ErrorMessage
		return rec, nil
	}
	out := l.ModelOutput
	if len(out) == 0 || out[0] != '{' {
		if len(out) == 0 || bytes.Equal(out, []byte("null")) {
			return job.Record{}, fmt.Errorf("%w: record %s has neither modelOutput nor error", ErrBadLine, l.RecordID)
		}
		return job.Record{}, fmt.Errorf("%w: record %s: modelOutput is not an object", ErrBadLine, l.RecordID)
	}
	rec.Status = job.RecordSucceeded
	var c claudeOutput
	err := json.Unmarshal(out, &c)
	switch {
	case err == nil && c.Content != nil:
		var text strings.Builder
		for _, b := range c.Content {
			if b.Type == "text" {
				text.WriteString(b.Text)
			}
		}
		rec.Output = text.String()
		rec.StopReason = c.StopReason
		rec.InputTokens = c.Usage.InputTokens
		rec.OutputTokens = c.Usage.OutputTokens
		return rec, nil
	case err != nil && c.Type == "message":
		// It says it is a Claude message but the fields have the wrong types.
		return job.Record{}, fmt.Errorf("%w: record %s: claude modelOutput: %v", ErrBadLine, l.RecordID, err)
	}
	// Another model family: keep its native response, compacted.
	var buf bytes.Buffer
	buf.Grow(len(out))
	if err := json.Compact(&buf, out); err != nil {
		return job.Record{}, fmt.Errorf("%w: record %s: %v", ErrBadLine, l.RecordID, err)
	}
	rec.Output = buf.String()
	return rec, nil
}

// Manifest is manifest.json.out: Bedrock's own counts for a job's output.
type Manifest struct {
	TotalRecordCount     int64 `json:"totalRecordCount"`
	ProcessedRecordCount int64 `json:"processedRecordCount"`
	SuccessRecordCount   int64 `json:"successRecordCount"`
	ErrorRecordCount     int64 `json:"errorRecordCount"`
	InputTokenCount      int64 `json:"inputTokenCount"`
	OutputTokenCount     int64 `json:"outputTokenCount"`
}

// ParseManifest reads manifest.json.out.
func ParseManifest(r io.Reader) (Manifest, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20)) // a manifest is a few hundred bytes
	if err != nil {
		return Manifest{}, fmt.Errorf("bedrock: read %s: %w", ManifestName, err)
	}
	if firstByte(b) != '{' {
		return Manifest{}, fmt.Errorf("bedrock: parse %s: not a JSON object", ManifestName)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("bedrock: parse %s: %w", ManifestName, err)
	}
	if m.ProcessedRecordCount > m.TotalRecordCount && m.TotalRecordCount > 0 ||
		m.SuccessRecordCount+m.ErrorRecordCount > m.ProcessedRecordCount && m.ProcessedRecordCount > 0 {
		return Manifest{}, fmt.Errorf("bedrock: parse %s: inconsistent counts %+v", ManifestName, m)
	}
	return m, nil
}
