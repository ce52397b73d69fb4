package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
)

// Metrics is where the flows report what they measure. The Lambdas pass a
// shared/metrics Emitter writing CloudWatch Embedded Metric Format lines to
// stdout (no client, no network call); nil reports nothing.
type Metrics interface {
	JobFinished(o metrics.JobOutcome) error
	Ingested(provider string, records int, took, lag time.Duration) error
	Recovered(kind string, n int) error
	Throttled(provider, model string, n int) error
	OldestInFlight(provider string, age time.Duration) error
}

type noMetrics struct{}

func (noMetrics) JobFinished(metrics.JobOutcome) error                     { return nil }
func (noMetrics) Ingested(string, int, time.Duration, time.Duration) error { return nil }
func (noMetrics) Recovered(string, int) error                              { return nil }
func (noMetrics) Throttled(string, string, int) error                      { return nil }
func (noMetrics) OldestInFlight(string, time.Duration) error               { return nil }
func (noMetrics) JobStatus(string) error                                   { return nil }
func (noMetrics) ProviderThrottled(string, int) error                      { return nil }

// Telemetry is what the flows tell the outside about their jobs: the "Job
// Completed" event on the bus, the metrics, and the log lines of both.
type Telemetry struct {
	Bus     Publisher
	Metrics Metrics
	Log     *slog.Logger
}

// Telemetry is the core's bus, metrics and log.
func (c *Core) Telemetry() Telemetry { return Telemetry{Bus: c.Bus, Metrics: c.Metrics, Log: c.Log} }

// Measure is the metrics port (a no-op when none is wired).
func (c Telemetry) Measure() Metrics {
	if c.Metrics == nil {
		return noMetrics{}
	}
	return c.Metrics
}

// Measured logs the error of one metrics call: metrics never fail a flow.
func (c Telemetry) Measured(ctx context.Context, what string, err error) {
	if err != nil {
		Logger(c.Log).WarnContext(ctx, "metric not emitted", "metric", what, "error", err)
	}
}

// jobFinished reports a job's terminal transition.
func (c Telemetry) jobFinished(ctx context.Context, j *job.Job) {
	o := metrics.JobOutcome{
		Status: string(j.Status), Provider: j.Provider, Model: j.Model, Succeeded: j.Succeeded, Failed: j.Failed,
		InputTokens: j.InputTokens, OutputTokens: j.OutputTokens,
		CacheReadTokens: j.CacheReadTokens, CacheWriteTokens: j.CacheWriteTokens,
	}
	if j.Cost != nil {
		o.CostUSD, o.HasCost = j.Cost.TotalUSD, true
	}
	if !j.SubmittedAt.IsZero() && j.SubmittedAt.After(j.CreatedAt) {
		o.QueueWait = j.SubmittedAt.Sub(j.CreatedAt)
	}
	if !j.CompletedAt.IsZero() && j.CompletedAt.After(j.CreatedAt) {
		o.EndToEnd = j.CompletedAt.Sub(j.CreatedAt)
	}
	if o.Model == "" {
		o.Model = "none"
	}
	if o.Provider == "" {
		o.Provider = "none"
	}
	c.Measured(ctx, metrics.JobsFinished, c.Measure().JobFinished(o))
}
