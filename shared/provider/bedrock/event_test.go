package bedrock_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

// TestParseEventSamples parses every sample event in events/bedrock as a Lambda
// target receives it.
func TestParseEventSamples(t *testing.T) {
	paths, err := filepath.Glob("../../../events/bedrock/*.json")
	if err != nil || len(paths) != 10 {
		t.Fatalf("want the 10 samples of events/bedrock, got %d (%v)", len(paths), err)
	}
	for _, path := range paths {
		status := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(status, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var envelope struct {
				Source     string          `json:"source"`
				DetailType string          `json:"detail-type"`
				Resources  []string        `json:"resources"`
				Detail     json.RawMessage `json:"detail"`
			}
			if err := json.Unmarshal(raw, &envelope); err != nil {
				t.Fatal(err)
			}
			if envelope.Source != config.BedrockEventSource || envelope.DetailType != config.BedrockDetailType {
				t.Errorf("source %q detail-type %q", envelope.Source, envelope.DetailType)
			}
			ev, err := bedrock.ParseEvent(envelope.Detail)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Status != status {
				t.Errorf("status %q, want %q", ev.Status, status)
			}
			if _, ok := bedrock.Outcome(ev.Status); !ok {
				t.Errorf("status %q is not one of Bedrock's ten", ev.Status)
			}
			if ev.JobName != "mcpbatch-01jdz3k6r8x9y2w4v5t7q0m1n3" || !job.ValidID(strings.TrimPrefix(ev.JobName, config.DefaultJobPrefix+"-")) {
				t.Errorf("job name %q", ev.JobName)
			}
			if len(envelope.Resources) != 1 || envelope.Resources[0] != ev.JobARN || len(bedrock.JobID(ev.JobARN)) != 12 {
				t.Errorf("arn %q, resources %v", ev.JobARN, envelope.Resources)
			}
			if ev.ModelID == "" || ev.CreationTime == "" {
				t.Errorf("event %+v", ev)
			}
			if status == bedrock.StatusFailed && ev.FailureMessage == "" {
				t.Errorf("a Failed sample should carry a failureMessage")
			}
		})
	}
}

func TestParseEvent(t *testing.T) {
	tests := []struct {
		name    string
		detail  string
		want    bedrock.Event
		wantErr bool
	}{
		{
			name:   "odd creationTime kept as written",
			detail: `{"version":"0.1","accountId":"1","batchJobName":"j","batchJobArn":"a","batchModelId":"m","status":"Completed","failureMessage":"","creationTime":"Aug 28, 2024, 10:47:53 PM"}`,
			want:   bedrock.Event{JobName: "j", JobARN: "a", ModelID: "m", Status: "Completed", CreationTime: "Aug 28, 2024, 10:47:53 PM"},
		},
		{
			name:   "ISO creationTime",
			detail: `{"batchJobArn":"a","status":"InProgress","creationTime":"2024-08-28T22:47:53.123Z"}`,
			want:   bedrock.Event{JobARN: "a", Status: "InProgress", CreationTime: "2024-08-28T22:47:53.123Z"},
		},
		{
			name:   "numeric creationTime does not fail the event",
			detail: `{"batchJobName":"j","status":"Failed","failureMessage":"boom","creationTime":1724885273000}`,
			want:   bedrock.Event{JobName: "j", Status: "Failed", FailureMessage: "boom", CreationTime: "1724885273000"},
		},
		{
			name:   "unknown status passes through",
			detail: `{"batchJobName":"j","status":"Paused"}`,
			want:   bedrock.Event{JobName: "j", Status: "Paused"},
		},
		{name: "no status", detail: `{"batchJobName":"j"}`, wantErr: true},
		{name: "no job", detail: `{"status":"Completed"}`, wantErr: true},
		{name: "not an object", detail: `"Completed"`, wantErr: true},
		{name: "empty", detail: ``, wantErr: true},
		{name: "truncated", detail: `{"batchJobName":"j","status":"Compl`, wantErr: true},
		{name: "status of the wrong type", detail: `{"batchJobName":"j","status":3}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bedrock.ParseEvent(json.RawMessage(tc.detail))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
