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

// RunClaim is how long an on-demand run's claim on its job holds without a
// checkpoint: a Lambda invocation runs at most 15 minutes, so a claim older
// than that belongs to a run that died.
const RunClaim = 15 * time.Minute

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
	// Runner names the run working through the job, and RunnerUntil how long
	// its claim holds unless renewed (at each checkpoint): one run at a time
	// stores results, so the job's end (a cancel) is written by the run that
	// stored its last results, and announced with every one counted.
	Runner      string    `json:"runner,omitempty"`
	RunnerUntil time.Time `json:"runnerUntil,omitzero"`
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
