// Package job is the provider-neutral domain: jobs, records, statuses, limits and ids.
// It imports no AWS SDK.
package job

import "fmt"

// Status is the provider-neutral job status. It only ever moves forward by rank.
type Status string

const (
	StatusQueued             Status = "queued"
	StatusSubmitted          Status = "submitted"
	StatusValidating         Status = "validating"
	StatusInProgress         Status = "in_progress"
	StatusCancelling         Status = "cancelling"
	StatusIngesting          Status = "ingesting"
	StatusCompleted          Status = "completed"
	StatusPartiallyCompleted Status = "partially_completed"
	StatusFailed             Status = "failed"
	StatusCancelled          Status = "cancelled"
	StatusExpired            Status = "expired"
)

// AllStatuses lists every status in rank order (terminal ones last).
var AllStatuses = []Status{
	StatusQueued, StatusSubmitted, StatusValidating, StatusInProgress, StatusCancelling,
	StatusIngesting, StatusCompleted, StatusPartiallyCompleted, StatusFailed, StatusCancelled, StatusExpired,
}

var ranks = map[Status]int{
	StatusQueued:             0,
	StatusSubmitted:          1,
	StatusValidating:         2,
	StatusInProgress:         3,
	StatusCancelling:         4,
	StatusIngesting:          5,
	StatusCompleted:          6,
	StatusPartiallyCompleted: 6,
	StatusFailed:             6,
	StatusCancelled:          6,
	StatusExpired:            6,
}

// Rank orders statuses; -1 for an unknown status.
func (s Status) Rank() int {
	r, ok := ranks[s]
	if !ok {
		return -1
	}
	return r
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool { _, ok := ranks[s]; return ok }

// Terminal reports whether no further status change can happen.
func (s Status) Terminal() bool { return s.Rank() == 6 }

// CanMove reports whether a job in status from may move to status to.
// Only strictly forward moves are allowed, so a late or duplicated event never moves a job back.
func CanMove(from, to Status) bool {
	return from.Valid() && to.Valid() && to.Rank() > from.Rank()
}

// ParseStatus validates a status string from user input.
func ParseStatus(s string) (Status, error) {
	st := Status(s)
	if !st.Valid() {
		return "", fmt.Errorf("unknown status %q", s)
	}
	return st, nil
}

// ProviderOutcome is what a provider status means for a job.
type ProviderOutcome struct {
	// Status is the status the job moves to now.
	Status Status
	// Ended is true when the provider will not change this job any more.
	Ended bool
	// HasOutput is true when the provider may have written output to ingest.
	HasOutput bool
	// Final is the status after ingest (only with HasOutput); ingest may still
	// downgrade completed to partially_completed when records failed.
	Final Status
}
