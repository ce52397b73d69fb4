package bedrock_test

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// TestProjectEventSamples keeps events/project in the shape the project bus
// delivers: an EventBridge envelope with source mcpbatch and the agreed detail keys.
func TestProjectEventSamples(t *testing.T) {
	envelope := []string{"account", "detail", "detail-type", "id", "region", "resources", "source", "time", "version"}
	tests := []struct {
		file       string
		detailType string
		detail     []string
	}{
		{"job-output-ready.json", config.DetailJobOutputReady, []string{"jobId", "provider"}},
		{"job-completed.json", config.DetailJobCompleted, []string{
			"badLines", "completedAt", "failed", "inputTokens", "jobId", "model", "outputTokens",
			"provider", "recordCount", "status", "succeeded",
			// The optional integration fields (events/project/job-completed.schema.json).
			"costUsd", "createdAt", "mode", "name",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile("../../../events/project/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			gotEnv, gotDetail := keys(t, raw)
			if !slices.Equal(gotEnv, envelope) || !slices.Equal(gotDetail, sorted(tc.detail)) {
				t.Errorf("keys %v / %v, want %v / %v", gotEnv, gotDetail, envelope, sorted(tc.detail))
			}
			var ev struct {
				Source     string `json:"source"`
				DetailType string `json:"detail-type"`
				Time       string `json:"time"`
				Detail     struct {
					JobID       string `json:"jobId"`
					Provider    string `json:"provider"`
					Status      string `json:"status"`
					CompletedAt string `json:"completedAt"`
				} `json:"detail"`
			}
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Source != config.EventSource || ev.DetailType != tc.detailType {
				t.Errorf("source %q detail-type %q", ev.Source, ev.DetailType)
			}
			if !job.ValidID(ev.Detail.JobID) || ev.Detail.Provider != job.ProviderBedrock {
				t.Errorf("detail %+v", ev.Detail)
			}
			if _, err := time.Parse(time.RFC3339, ev.Time); err != nil {
				t.Errorf("time: %v", err)
			}
			if ev.Detail.Status != "" {
				if st := job.Status(ev.Detail.Status); !st.Terminal() {
					t.Errorf("status %q is not a terminal job status", st)
				}
				if _, err := time.Parse(time.RFC3339, ev.Detail.CompletedAt); err != nil {
					t.Errorf("completedAt: %v", err)
				}
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}
