package wire

import "github.com/mcpbatch/mcpbatch/shared/job"

// Limits of Anthropic Message Batches, documented per batch
// (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing).
const (
	MaxRequests = 100_000
	MaxBytes    = 256 << 20
	// MinRecords: a Message Batch may hold a single request.
	MinRecords = 1
	// Envelope is what the create body adds around the request lines.
	Envelope = len(`{"requests":[]}`)
)

// processing_status values of a Message Batch.
const (
	StatusInProgress = "in_progress"
	StatusCanceling  = "canceling"
	StatusEnded      = "ended"
)

var order = map[string]int{StatusInProgress: 0, StatusCanceling: 1, StatusEnded: 2}

// Later reports whether processing_status b comes after a ("" comes before everything).
func Later(a, b string) bool {
	ob, ok := order[b]
	if !ok {
		return false
	}
	oa, ok := order[a]
	return !ok || ob > oa
}

// Outcome maps a batch's processing_status onto the neutral model. A batch
// reports no per-request outcome until it has ended, so "ended" always means
// "ingest the results"; the final status comes from the records read.
func Outcome(processing string, cancelRequested bool) (job.ProviderOutcome, bool) {
	switch processing {
	case StatusInProgress:
		return job.ProviderOutcome{Status: job.StatusInProgress}, true
	case StatusCanceling:
		return job.ProviderOutcome{Status: job.StatusCancelling}, true
	case StatusEnded:
		final := job.StatusCompleted
		if cancelRequested {
			final = job.StatusCancelled
		}
		return job.ProviderOutcome{Status: job.StatusIngesting, Ended: true, HasOutput: true, Final: final}, true
	}
	return job.ProviderOutcome{}, false
}

// Final is what a part becomes once its results are read: an ended batch's
// records say what happened; only a cancel changes the job's word. "" for a
// batch that never ended.
func Final(p job.Part) job.Status {
	if p.ProviderStatus != StatusEnded {
		return ""
	}
	if p.CancelRequested {
		return job.StatusCancelled
	}
	return job.StatusCompleted
}
