package reconcile

import (
	"context"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
)

// Recovery kinds (the Kind dimension of ReconcilerRecoveries).
const (
	KindMissedEvent = "missed_event" // a poll found a change no event announced
	KindQueuedStart = "queued_start" // a queued part got room and was submitted
	KindOutputReady = "output_ready" // the reconciler announced output
)

// measureInFlight reports the age of a provider's oldest job in flight (the
// stuck-jobs alarm's metric); 0 when none is.
func (s *Service) measureInFlight(ctx context.Context, provider string, jobs []*job.Job, now time.Time) {
	var oldest time.Duration
	for _, j := range jobs {
		oldest = max(oldest, now.Sub(j.CreatedAt))
	}
	s.Telemetry.Measured(ctx, metrics.OldestInFlightSeconds, s.Telemetry.Measure().OldestInFlight(provider, oldest))
}

// measureRecoveries reports what this run recovered, by kind.
func (s *Service) measureRecoveries(ctx context.Context, rep ReconcileReport) {
	for _, k := range []struct {
		kind string
		n    int
	}{{KindMissedEvent, rep.Changed}, {KindQueuedStart, rep.Submitted}, {KindOutputReady, rep.OutputReady}} {
		if k.n > 0 {
			s.Telemetry.Measured(ctx, metrics.ReconcilerRecoveries, s.Telemetry.Measure().Recovered(k.kind, k.n))
		}
	}
}
