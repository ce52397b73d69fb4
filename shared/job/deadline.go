package job

import (
	"math"
	"time"
)

// Paths say which way a record's result was produced.
const (
	PathBatch    = "batch"     // a provider batch job
	PathOnDemand = "on_demand" // the runtime API, one call per record
	PathReused   = "reused"    // answered from an earlier job's result (submit reuse), never sent
)

// Rate is how fast on-demand calls of one model may go in the account: its
// requests and tokens (input + output) per minute; 0 means not limited by it.
type Rate struct {
	RequestsPerMinute float64 `json:"requestsPerMinute,omitempty"`
	TokensPerMinute   float64 `json:"tokensPerMinute,omitempty"`
}

// OnDemandTime is how long n records of about tokensPerRecord tokens each
// (input plus max_tokens: Bedrock reserves a call's max_tokens against the
// tokens-per-minute quota when the call starts) take on demand at rate r, the
// slower of the two limits deciding. A rate with neither limit takes no time.
func OnDemandTime(n int, tokensPerRecord int64, r Rate) time.Duration {
	if n <= 0 {
		return 0
	}
	minutes := 0.0
	if r.RequestsPerMinute > 0 {
		minutes = float64(n) / r.RequestsPerMinute
	}
	if r.TokensPerMinute > 0 && tokensPerRecord > 0 {
		minutes = max(minutes, float64(n)*float64(tokensPerRecord)/r.TokensPerMinute)
	}
	d := minutes * float64(time.Minute)
	if d > math.MaxInt64/2 {
		return time.Duration(math.MaxInt64 / 2)
	}
	return time.Duration(math.Ceil(d))
}

// Deadline safety margin: the unfinished batch parts are stopped this much
// before the on-demand time of their records runs out, to cover what the
// quota arithmetic leaves out: the stop itself (Bedrock takes a step to go
// Stopping → Stopped), reading the stopped part's output, the reconciler's
// period (every few minutes), and throttling and retries on the way.
const (
	DeadlineMarginFixed = 5 * time.Minute
	// DeadlineMarginShare is the margin's share of the on-demand time (a quarter).
	DeadlineMarginShare = 4
)

// DeadlineMargin is the safety margin for an on-demand run that needs need:
// DeadlineMarginFixed plus a quarter of need.
func DeadlineMargin(need time.Duration) time.Duration {
	return DeadlineMarginFixed + need/DeadlineMarginShare
}

// StopBatchBy is the latest time the unfinished batch parts of a job with a
// deadline may run on: from then on, running their records on demand (need)
// with the margin only just ends before the deadline.
func StopBatchBy(deadline time.Time, need time.Duration) time.Time {
	return deadline.Add(-need - DeadlineMargin(need))
}

// Redrive is a batch job's deadline re-drive: its unfinished batch parts
// stopped before the deadline, and the records they left without a result
// run on demand in the same job (OnDemand holds that run's checkpoint).
type Redrive struct {
	// StoppedAt is when the deadline stopped the parts; Parts are their indexes.
	StoppedAt time.Time `json:"stoppedAt"`
	Parts     []int     `json:"parts,omitempty"`
	// Started: the stopped parts' output was read and the run set up; Records
	// is how many records it runs (those no batch part produced).
	Started bool `json:"started,omitempty"`
	Records int  `json:"records"`
	// CancelRequested: cancel_job ran during the re-drive; the run stops at
	// its next checkpoint and the job ends cancelled.
	CancelRequested bool `json:"cancelRequested,omitempty"`
	// Batch* are what the batch parts produced: the counts the run adds to.
	BatchSucceeded        int   `json:"batchSucceeded"`
	BatchFailed           int   `json:"batchFailed"`
	BatchInputTokens      int64 `json:"batchInputTokens"`
	BatchOutputTokens     int64 `json:"batchOutputTokens"`
	BatchCacheReadTokens  int64 `json:"batchCacheReadTokens,omitempty"`
	BatchCacheWriteTokens int64 `json:"batchCacheWriteTokens,omitempty"`
}

// Redriving reports whether j is a batch job whose unfinished records run on
// demand now (set up and not ended).
func (j *Job) Redriving() bool {
	return j.Redrive != nil && j.Redrive.Started && j.OnDemand != nil && !j.Status.Terminal()
}

// OnDemandRecords is how many records j's on-demand run runs: all of an
// on-demand job's, those a re-drive took over.
func (j *Job) OnDemandRecords() int {
	if j.Redrive != nil && j.Redrive.Started {
		return j.Redrive.Records
	}
	return j.RecordCount
}

// SyncOnDemandCounts sets j's counts from its on-demand run's checkpoint, on
// top of what the batch parts produced when the run is a re-drive.
func (j *Job) SyncOnDemandCounts() {
	o := j.OnDemand
	if o == nil {
		return
	}
	j.Succeeded, j.Failed = o.Succeeded, o.Failed
	j.InputTokens, j.OutputTokens = o.InputTokens, o.OutputTokens
	j.CacheReadTokens, j.CacheWriteTokens = o.CacheReadTokens, o.CacheWriteTokens
	if r := j.Redrive; r != nil && r.Started {
		j.Succeeded += r.BatchSucceeded
		j.Failed += r.BatchFailed
		j.InputTokens += r.BatchInputTokens
		j.OutputTokens += r.BatchOutputTokens
		j.CacheReadTokens += r.BatchCacheReadTokens
		j.CacheWriteTokens += r.BatchCacheWriteTokens
	}
}
