package bedrock

import "github.com/mcpbatch/mcpbatch/shared/job"

// Bedrock's ten batch job statuses, as they appear in GetModelInvocationJob and in
// the "Batch Inference Job State Change" event
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetModelInvocationJob.html).
const (
	StatusSubmitted          = "Submitted"
	StatusValidating         = "Validating"
	StatusScheduled          = "Scheduled"
	StatusInProgress         = "InProgress"
	StatusCompleted          = "Completed"
	StatusPartiallyCompleted = "PartiallyCompleted"
	StatusFailed             = "Failed"
	StatusStopping           = "Stopping"
	StatusStopped            = "Stopped"
	StatusExpired            = "Expired"
)

var outcomes = map[string]job.ProviderOutcome{
	StatusSubmitted:  {Status: job.StatusSubmitted},
	StatusValidating: {Status: job.StatusValidating},
	// Scheduled: validated and waiting for capacity; the raw status stays visible as provider_status.
	StatusScheduled:          {Status: job.StatusValidating},
	StatusInProgress:         {Status: job.StatusInProgress},
	StatusStopping:           {Status: job.StatusCancelling},
	StatusCompleted:          {Status: job.StatusIngesting, Ended: true, HasOutput: true, Final: job.StatusCompleted},
	StatusPartiallyCompleted: {Status: job.StatusIngesting, Ended: true, HasOutput: true, Final: job.StatusPartiallyCompleted},
	// A stopped or expired job still bills and writes what it processed, so its output is ingested.
	StatusStopped: {Status: job.StatusIngesting, Ended: true, HasOutput: true, Final: job.StatusCancelled},
	StatusExpired: {Status: job.StatusIngesting, Ended: true, HasOutput: true, Final: job.StatusExpired},
	StatusFailed:  {Status: job.StatusFailed, Ended: true, Final: job.StatusFailed},
}

// order orders Bedrock's statuses within the neutral ranks, so that Scheduled
// (after Validating, same neutral status) still shows as provider_status while a
// late Validating cannot overwrite it.
var order = map[string]int{
	StatusSubmitted: 0, StatusValidating: 1, StatusScheduled: 2, StatusInProgress: 3, StatusStopping: 4,
	StatusCompleted: 5, StatusPartiallyCompleted: 5, StatusFailed: 5, StatusStopped: 5, StatusExpired: 5,
}

// Later reports whether Bedrock status b comes after a ("" comes before everything).
func Later(a, b string) bool {
	ob, ok := order[b]
	if !ok {
		return false
	}
	oa, ok := order[a]
	return !ok || ob > oa
}

// Outcome maps one of Bedrock's ten statuses onto the neutral model.
func Outcome(s string) (job.ProviderOutcome, bool) {
	o, ok := outcomes[s]
	return o, ok
}

// Final is what a part becomes once its output is read, from the status Bedrock
// ended it with.
func Final(providerStatus string) job.Status {
	switch providerStatus {
	case StatusPartiallyCompleted, StatusFailed:
		return job.StatusPartiallyCompleted
	case StatusStopped:
		return job.StatusCancelled
	case StatusExpired:
		return job.StatusExpired
	}
	return "" // Completed, or never ended: the part's own status decides
}

// MayLackOutput reports whether a job that ended with this status may have
// written no output file (stopped or expired before any record ran).
func MayLackOutput(providerStatus string) bool {
	return providerStatus == StatusStopped || providerStatus == StatusExpired
}
