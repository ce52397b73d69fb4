package job

// Limits of Anthropic Message Batches (documented per batch).
const (
	AnthropicMaxRequests = 100_000
	AnthropicMaxBytes    = 256 << 20
	// AnthropicMinRecords: a Message Batch may hold a single request.
	AnthropicMinRecords = 1
)

// Anthropic's processing_status values of a Message Batch.
const (
	AnthropicInProgress = "in_progress"
	AnthropicCanceling  = "canceling"
	AnthropicEnded      = "ended"
)

// AnthropicOutcome maps a batch's processing_status onto the neutral model. A
// batch reports no per-request outcome until it has ended, so "ended" always means
// "ingest the results"; the final status comes from the records read.
func AnthropicOutcome(processing string, cancelRequested bool) (ProviderOutcome, bool) {
	switch processing {
	case AnthropicInProgress:
		return ProviderOutcome{Status: StatusInProgress}, true
	case AnthropicCanceling:
		return ProviderOutcome{Status: StatusCancelling}, true
	case AnthropicEnded:
		final := StatusCompleted
		if cancelRequested {
			final = StatusCancelled
		}
		return ProviderOutcome{Status: StatusIngesting, Ended: true, HasOutput: true, Final: final}, true
	}
	return ProviderOutcome{}, false
}
