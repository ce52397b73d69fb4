package anthropicbatch

import "github.com/mcpbatch/mcpbatch/shared/service/batch"

// The provider counts a dry run's sample (service/batch is left out of the
// package itself: it would link the graph into the providers function).
var _ batch.TokenCounter = (*Provider)(nil)
