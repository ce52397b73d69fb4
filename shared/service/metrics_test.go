package service

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
)

func finishedJob() *job.Job {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return &job.Job{ID: job.NewID(t0), Provider: "bedrock", Model: "anthropic.claude-haiku-4-5-20251001-v1:0", Status: job.StatusPartiallyCompleted,
		RecordCount: 150, Succeeded: 135, Failed: 15, InputTokens: 12000, OutputTokens: 3400, CacheReadTokens: 3000,
		CreatedAt: t0, SubmittedAt: t0.Add(2 * time.Second), CompletedAt: t0.Add(10 * time.Minute),
		Cost: &job.Cost{TotalUSD: 0.0125, Basis: "batch"}}
}

// TestJobFinishedMetrics: a terminal job writes its EMF lines through the
// port: by provider and model (records, tokens, cost, queue wait, end to end,
// cache hit ratio), JobsFinished also rolled up by status.
func TestJobFinishedMetrics(t *testing.T) {
	var buf bytes.Buffer
	c := Telemetry{Metrics: &metrics.Emitter{W: &buf, Namespace: "mcpbatch/test"}, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	c.jobFinished(context.Background(), finishedJob())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d EMF lines, want 2 (by status/provider/model with a by-status roll-up, by provider/model):\n%s", len(lines), buf.String())
	}
	want := []map[string]any{
		{"JobsFinished": 1.0, "Status": "partially_completed", "Provider": "bedrock"},
		{"RecordsSucceeded": 135.0, "RecordsFailed": 15.0, "CostUSD": 0.0125, "QueueWaitSeconds": 2.0, "EndToEndSeconds": 600.0,
			"PromptCacheHitRatio": 0.2},
	}
	if !strings.Contains(lines[0], `"Dimensions":[["Model","Provider","Status"],["Status"]]`) {
		t.Errorf("JobsFinished line lacks the by-status roll-up: %s", lines[0])
	}
	for i, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v", i, err)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v\n%s", i, k, got[k], v, l)
			}
		}
	}
}

// TestNoMetricsIsSilent: without an emitter the flows measure nothing and do not fail.
func TestNoMetricsIsSilent(t *testing.T) {
	c := Telemetry{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	c.jobFinished(context.Background(), finishedJob())
	if err := c.Measure().Throttled("bedrock", "m", 1); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkJobFinishedEMF is the EMF cost of one terminal event as the
// service handles it (the outcome from the job, three lines written).
func BenchmarkJobFinishedEMF(b *testing.B) {
	c := Telemetry{Metrics: &metrics.Emitter{W: io.Discard}, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	j := finishedJob()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.jobFinished(ctx, j)
	}
}
