package job

import "time"

// Job modes.
const (
	ModeBatch    = "batch"
	ModeOnDemand = "on_demand"
	ModeAuto     = "auto"
)

// MaxOnDemandRecords caps on-demand jobs: past it, batch inference is cheaper
// and does not hold a Lambda busy for hours.
const MaxOnDemandRecords = 10_000

// DefaultOnDemandConcurrency bounds parallel model calls of one on-demand run.
const DefaultOnDemandConcurrency = 8

// OnDemand is the state of a job run record by record through the runtime API.
type OnDemand struct {
	Params      Params `json:"params"`
	Concurrency int    `json:"concurrency"`
	// InputURI is the run's input (job.Input lines); "" for an on-demand job,
	// whose part 0 holds it. A deadline re-drive runs its own file.
	InputURI string `json:"inputUri,omitempty"`
	// Checkpoint: every input line before Line (byte Offset) has its result stored,
	// and the counters hold exactly what those lines contributed.
	Offset           int64 `json:"offset"`
	Line             int   `json:"line"`
	Succeeded        int   `json:"succeeded"`
	Failed           int   `json:"failed"`
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens"`
	CacheWriteTokens int64 `json:"cacheWriteTokens"`
	Throttles        int64 `json:"throttles"`
	// RunRequested records that the "On-Demand Run Requested" event went out.
	RunRequested bool `json:"runRequested,omitempty"`
	// TierSwitch records a move off the tier the run started on (Flex
	// throttled as its deadline neared): the tokens before it are priced at
	// that tier, the rest at Params.Tier.
	TierSwitch *TierSwitch `json:"tierSwitch,omitempty"`
}

// TierSwitch is where an on-demand run changed service tier.
type TierSwitch struct {
	From             string    `json:"from"`
	At               time.Time `json:"at"`
	Line             int       `json:"line"`
	InputTokens      int64     `json:"inputTokens"`
	OutputTokens     int64     `json:"outputTokens"`
	CacheReadTokens  int64     `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64     `json:"cacheWriteTokens,omitempty"`
}
