package batch

import (
	"context"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
)

// measureIngest reports an ingest that finished a job: records per second of
// this pass and the lag from the provider's last word to now.
func (s *Service) measureIngest(ctx context.Context, j *job.Job, began, now time.Time) {
	var lag time.Duration
	if !j.LastEventAt.IsZero() {
		lag = now.Sub(j.LastEventAt)
	}
	s.Telemetry.Measured(ctx, metrics.IngestRecordsPerSecond, s.Telemetry.Measure().Ingested(j.Provider, j.Succeeded+j.Failed, now.Sub(began), lag))
}
