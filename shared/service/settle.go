package service

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// OutputReady is the detail of "Job Output Ready".
type OutputReady struct {
	JobID    string `json:"jobId"`
	Provider string `json:"provider"`
}

// Completed is the detail of "Job Completed".
type Completed struct {
	JobID        string     `json:"jobId"`
	Provider     string     `json:"provider"`
	Model        string     `json:"model"`
	Status       job.Status `json:"status"`
	RecordCount  int        `json:"recordCount"`
	Succeeded    int        `json:"succeeded"`
	Failed       int        `json:"failed"`
	BadLines     int        `json:"badLines"`
	InputTokens  int64      `json:"inputTokens"`
	OutputTokens int64      `json:"outputTokens"`
	CompletedAt  string     `json:"completedAt"`
	// Added for integrations (events/project/job-completed.schema.json); all optional.
	Name             string  `json:"name,omitempty"`
	Mode             string  `json:"mode,omitempty"`
	CreatedAt        string  `json:"createdAt,omitempty"`
	CacheReadTokens  int64   `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64   `json:"cacheWriteTokens,omitempty"`
	CostUSD          float64 `json:"costUsd"`
	RetryOf          string  `json:"retryOf,omitempty"`
	Error            string  `json:"error,omitempty"`
}

// CompletedOf is the "Job Completed" detail of a finished job; webhooks and
// SNS notifications carry the same JSON.
func CompletedOf(j *job.Job) Completed {
	c := Completed{
		JobID: j.ID, Provider: j.Provider, Model: j.Model, Status: j.Status, RecordCount: j.RecordCount,
		Succeeded: j.Succeeded, Failed: j.Failed, BadLines: j.BadLines, InputTokens: j.InputTokens,
		OutputTokens: j.OutputTokens, CompletedAt: j.CompletedAt.UTC().Format("2006-01-02T15:04:05Z"),
		Name: j.Name, Mode: j.Mode, CacheReadTokens: j.CacheReadTokens, CacheWriteTokens: j.CacheWriteTokens,
		RetryOf: j.RetryOf, Error: Truncate(j.Error, 1000),
	}
	if !j.CreatedAt.IsZero() {
		c.CreatedAt = j.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	if j.Cost != nil {
		c.CostUSD = j.Cost.TotalUSD
	}
	return c
}

// Settle recomputes the job status from its parts after a part changed;
// prov is the job's provider.
func Settle(prov BatchProvider, j *job.Job, now time.Time) {
	if len(j.Parts) > 0 {
		j.ProviderStatus = leastAdvanced(prov, j.Parts).ProviderStatus
	}
	agg := j.Aggregate()
	// Parts a deadline stopped are not a cancel of the job: it stays in
	// progress until their output is read and the rest runs on demand.
	deadlineStop := agg == job.StatusCancelling && j.Redrive != nil
	if job.CanMove(j.Status, agg) && !deadlineStop {
		j.Status = agg
	}
	if j.Status == job.StatusIngesting {
		j.FinalStatus = finalOf(prov, j.Parts)
	}
	if !j.Status.Terminal() {
		j.Hold(now)
	}
	if j.Status.Terminal() && j.CompletedAt.IsZero() {
		j.CompletedAt = now
		j.Retain()
		if j.Status == job.StatusFailed || j.Status == job.StatusCancelled {
			j.Failed = max(j.Failed, 0)
		}
		var msgs []string
		for _, p := range j.Parts {
			if p.Message != "" {
				msgs = append(msgs, p.Message)
			}
		}
		if len(msgs) > 0 && j.Error == "" {
			j.Error = strings.Join(slices.Compact(msgs), "; ")
		}
	}
}

// finalOf is what a job becomes once all its parts' outputs are read: the least
// successful part's outcome wins. A part the provider never ended is cancelled
// when it was, else completed.
func finalOf(prov BatchProvider, parts []job.Part) job.Status {
	final := job.StatusCompleted
	rank := map[job.Status]int{job.StatusCompleted: 0, job.StatusPartiallyCompleted: 1, job.StatusExpired: 2, job.StatusCancelled: 3}
	for _, p := range parts {
		f := prov.Final(p)
		if f == "" {
			f = job.StatusCompleted
			if p.Status == job.StatusCancelled {
				f = job.StatusCancelled
			}
		}
		if rank[f] > rank[final] {
			final = f
		}
	}
	return final
}

// leastAdvanced is the part that holds the job back: its provider status is the job's.
func leastAdvanced(prov BatchProvider, parts []job.Part) job.Part {
	least := parts[0]
	for _, p := range parts[1:] {
		if p.Status.Rank() < least.Status.Rank() ||
			(p.Status == least.Status && prov.Later(p.ProviderStatus, least.ProviderStatus)) {
			least = p
		}
	}
	return least
}

// PublishCompleted announces a finished job on the bus ("Job Completed").
func (c Telemetry) PublishCompleted(ctx context.Context, j *job.Job) {
	// One line per terminal state: the stack's FailedJobs metric filter counts
	// msg="job finished" with status="failed" (infra/ops.go); warn level so it
	// is kept at logLevel=warn too.
	lvl := slog.LevelInfo
	if j.Status == job.StatusFailed {
		lvl = slog.LevelWarn
	}
	Logger(c.Log).Log(ctx, lvl, "job finished", "job_id", j.ID, "provider", j.Provider, "model", j.Model, "mode", j.Mode,
		"status", j.Status, "succeeded", j.Succeeded, "failed", j.Failed)
	c.jobFinished(ctx, j)
	err := c.Bus.Publish(ctx, config.DetailJobCompleted, CompletedOf(j))
	if err != nil {
		// Job Completed is a notification for downstream pipelines; the job item is the truth.
		Logger(c.Log).ErrorContext(ctx, "publish job completed", "job_id", j.ID, "error", err)
	}
}
