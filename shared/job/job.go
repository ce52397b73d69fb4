package job

import (
	"fmt"
	"hash/fnv"
	"time"
)

// Provider names.
const (
	ProviderBedrock   = "bedrock"
	ProviderSageMaker = "sagemaker"
	ProviderAnthropic = "anthropic"
)

// Job is one unit of work a user submitted. One job may fan out to several
// provider jobs (Parts) when it is larger than a provider job may be.
type Job struct {
	ID       string `json:"id"`
	Owner    string `json:"owner"`
	Name     string `json:"name,omitempty"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Status   Status `json:"status"`
	// ProviderStatus is the provider's own word for the job's state (e.g. Bedrock's "Scheduled").
	ProviderStatus string `json:"providerStatus,omitempty"`
	// FinalStatus is where ingest takes the job once every part's output is read.
	FinalStatus Status `json:"finalStatus,omitempty"`
	Parts       []Part `json:"parts"`

	InputURI  string `json:"inputUri,omitempty"`
	OutputURI string `json:"outputUri,omitempty"`
	// FailureURI is where a provider writes a failure (SageMaker async FailureLocation).
	FailureURI string `json:"failureUri,omitempty"`

	RecordCount int `json:"recordCount"`
	// MaxInputLineBytes is the longest provider input line of the job: output
	// lines that repeat the input (Bedrock) are read up to a cap derived from it.
	MaxInputLineBytes int   `json:"maxInputLineBytes,omitempty"`
	Succeeded         int   `json:"succeeded"`
	Failed            int   `json:"failed"`
	BadLines          int   `json:"badLines"`
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	// Shards is the number of partition keys results are spread over (see RecordSet).
	Shards int `json:"shards"`
	// InputOrder: the job's records carry their input ordinal and are keyed
	// and listed by it (every job created since 2026-12). Jobs stored before
	// keep their records keyed by id (see RecordSet).
	InputOrder bool `json:"inputOrder,omitempty"`
	// PackedRecords: the job's results are stored packed, many records to an
	// item (every job created since 2026-12-03; see RecordSet.Packed).
	PackedRecords bool `json:"packedRecords,omitempty"`
	// KeptOrdinals: a retry's records keep the ordinals they had in the job
	// first retried, listed beside its input (one per record, in input
	// order); false: a record's ordinal is its position in the job's input.
	KeptOrdinals bool `json:"keptOrdinals,omitempty"`

	Error string `json:"error,omitempty"`
	// Warnings are what the user should know about how the job runs (a
	// legacy model, a folded system prompt, unpriced tokens); shown by get_job.
	Warnings []string `json:"warnings,omitempty"`
	// BudgetUSD caps what the job may cost (0: no cap); a submit whose
	// estimate is over it is refused.
	BudgetUSD float64 `json:"budgetUsd,omitempty"`
	// Deadline is when every record must have a result (zero: none); see
	// deadline.go. DeadlineTokens is the tokens per record the timing counts
	// (estimated input plus max_tokens), fixed at submit.
	Deadline       time.Time `json:"deadline,omitzero"`
	DeadlineTokens int64     `json:"deadlineTokens,omitempty"`
	// Redrive is the deadline's re-drive of unfinished batch records on demand (nil: none).
	Redrive *Redrive `json:"redrive,omitempty"`
	// Checkpoint lets an interrupted ingest resume without double counting.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// OutputReadyPublished records that "Job Output Ready" went out, so a
	// retried event handler republishes only when the first try failed.
	OutputReadyPublished bool `json:"outputReadyPublished,omitempty"`
	// Retries counts the reconciler's nudges of a stalled job (an ingest or
	// an on-demand run that made no progress); LastError is the last error
	// its handler recorded, named when the job fails after too many.
	Retries   int    `json:"retries,omitempty"`
	LastError string `json:"lastError,omitempty"`

	TTLDays     int       `json:"ttlDays"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	SubmittedAt time.Time `json:"submittedAt,omitzero"`
	CompletedAt time.Time `json:"completedAt,omitzero"`
	ExpiresAt   time.Time `json:"expiresAt"`
	// RecordsExpireAt is the expiry of the records ingest writes, fixed when
	// the first ingest starts (the provider's end + TTL); the finished job
	// expires with them (see Retain).
	RecordsExpireAt time.Time `json:"recordsExpireAt,omitzero"`
	// LastEventAt is when a provider last told us something (event or poll).
	LastEventAt time.Time `json:"lastEventAt,omitzero"`
	// Version increments on every write; stores use it for optimistic locking.
	Version int64 `json:"version"`

	// Mode is how the job runs: batch (provider batch job) or on_demand (see ondemand.go).
	Mode string `json:"mode,omitempty"`
	// OnDemand is the state of an on-demand run (nil for batch jobs).
	OnDemand *OnDemand `json:"onDemand,omitempty"`
	// CacheReadTokens / CacheWriteTokens are prompt-cache token counts (on-demand runs).
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	// Pipeline marks a job a report pipeline started (see pipelinerun.go).
	Pipeline *PipelineRun `json:"pipeline,omitempty"`
	// Index is the vector index an embedding job writes into (nil: none).
	Index *IndexTarget `json:"index,omitempty"`
	// Cost is what the job's tokens cost at the catalog's prices (see cost.go).
	Cost *Cost `json:"cost,omitempty"`

	// Params are a batch job's generation settings, kept so retry_failed can
	// rerun records the same way (on-demand jobs keep theirs in OnDemand).
	Params *Params `json:"params,omitempty"`
	// RetryOf and RetriedBy link a retry_failed child and its parent (see retry.go).
	RetryOf   string   `json:"retryOf,omitempty"`
	RetriedBy []string `json:"retriedBy,omitempty"`
	// Notify is where the job's end is announced (see notify.go); NotifiedStatus
	// is the terminal status already announced, so a redelivered event sends nothing twice.
	Notify         *Notify `json:"notify,omitempty"`
	NotifiedStatus Status  `json:"notifiedStatus,omitempty"`
	// NotifyingUntil is a notifier's claim on announcing Status: until then
	// another delivery of the same event sends nothing (shared/service/announce).
	NotifyingUntil time.Time `json:"notifyingUntil,omitempty"`
	// Reused counts records answered at submit from earlier results
	// (submit reuse: true; shared/service/batch/reuse.go): stored as
	// succeeded records of this job, never sent, so RecordCount, Succeeded
	// and the token counts are of the records sent; views add Reused.
	Reused int `json:"reused,omitempty"`
	// WebhookSent is the terminal status whose webhook was delivered or
	// refused for good, recorded before SNS is tried: a retry after a failed
	// publish sends only what is still to send.
	WebhookSent Status `json:"webhookSent,omitempty"`
}

// Part is one provider job under a user-visible job.
type Part struct {
	Index int `json:"index"`
	// Name is the provider job name (Bedrock jobName, also its clientRequestToken).
	Name           string `json:"name"`
	Ref            string `json:"ref,omitempty"` // provider job ARN / id
	ProviderStatus string `json:"providerStatus,omitempty"`
	Status         Status `json:"status"`
	RecordCount    int    `json:"recordCount"`
	InputURI       string `json:"inputUri"`
	OutputURI      string `json:"outputUri"`
	Message        string `json:"message,omitempty"`
	// InvocationType is how the provider job runs its records, where the
	// provider has more than one way (Bedrock's modelInvocationType: Converse
	// or InvokeModel); "" for parts stored before there was a choice
	// (InvokeModel). Ingest reads the output by it.
	InvocationType string `json:"invocationType,omitempty"`
	// CancelRequested records a cancel_job, for providers (Anthropic) whose end
	// state does not say whether the batch was cancelled.
	CancelRequested bool `json:"cancelRequested,omitempty"`
	// SubmitLease names the run creating this part's provider job; no other run
	// submits the part before SubmitLeaseUntil. SubmitTriedAt is when a create
	// was first tried: after a lease ran out without a Ref, a provider whose
	// create takes no idempotency key is asked for a job made since then first.
	SubmitLease      string    `json:"submitLease,omitempty"`
	SubmitLeaseUntil time.Time `json:"submitLeaseUntil,omitzero"`
	SubmitTriedAt    time.Time `json:"submitTriedAt,omitzero"`
	// EstimateUSD is the most the part may cost by the submit's estimate (its
	// estimated input and max_tokens × records of output, at batch prices),
	// kept for a job with a budget; SpentUSD is what it cost by the provider's
	// own token totals once its provider job ended (nil: not known yet).
	EstimateUSD float64  `json:"estimateUsd,omitempty"`
	SpentUSD    *float64 `json:"spentUsd,omitempty"`
	// Held: the part is not submitted because what the job spent and has in
	// flight plus its estimate would pass the job's budget (see
	// shared/service/batch/budget.go). Once nothing else of the job runs, a
	// held part ends without a provider job and its records are stored as
	// failed with RecordBudgetHeld, so retry_failed can run them.
	Held bool `json:"held,omitempty"`
}

// Checkpoint is the ingest position: every line before Offset of part Part has been
// written, and the counters hold exactly what those lines contributed.
type Checkpoint struct {
	Part         int   `json:"part"`
	Offset       int64 `json:"offset"`
	Line         int   `json:"line"`
	Succeeded    int   `json:"succeeded"`
	Failed       int   `json:"failed"`
	BadLines     int   `json:"badLines"`
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// Cache tokens of the lines before Offset (prompt caching, priced apart).
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
}

// RecordStatus is the outcome of one record.
type RecordStatus string

const (
	RecordSucceeded RecordStatus = "succeeded"
	RecordFailed    RecordStatus = "failed"
)

// Record is the result of one input record.
type Record struct {
	JobID string `json:"jobId"`
	ID    string `json:"id"`
	// Ordinal is the record's position in the caller's input (from 0), across
	// the job's parts; a retry's record keeps the one it had in the job first
	// retried. 0 and meaningless in jobs stored before ordinals (InputOrder).
	Ordinal int          `json:"ordinal,omitempty"`
	Status  RecordStatus `json:"status"`
	// Output is the model's answer (text for Claude, raw JSON for other families).
	Output string `json:"output,omitempty"`
	// OutputRef points at the output in object storage when it is too big for an item.
	OutputRef    string `json:"outputRef,omitempty"`
	StopReason   string `json:"stopReason,omitempty"`
	ErrorCode    string `json:"errorCode,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	InputTokens  int64  `json:"inputTokens,omitempty"`
	OutputTokens int64  `json:"outputTokens,omitempty"`
	// CacheReadTokens / CacheWriteTokens are prompt-cache tokens, kept apart from
	// InputTokens because they are priced differently.
	CacheReadTokens  int64     `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64     `json:"cacheWriteTokens,omitempty"`
	ExpiresAt        time.Time `json:"expiresAt"`

	// ContentType is the output's media type when the provider names one (SageMaker).
	ContentType string `json:"contentType,omitempty"`
	// Note says how the output was stored when that differs from what was asked
	// (non-JSON output under a JSON content type, binary output behind a link).
	Note string `json:"note,omitempty"`
	// Path is the way the result was produced: PathBatch or PathOnDemand
	// ("" for SageMaker results and records stored before paths were kept).
	Path string `json:"path,omitempty"`
	// OutputJSON is the output parsed and checked against the job's output
	// schema (Params.OutputSchema), as compact JSON text: set on a succeeded
	// record of a job with one; a record whose output is not JSON or breaks
	// the schema failed with RecordParseFailed / RecordSchemaViolation and
	// keeps its Output. (Text, not json.RawMessage: records stay comparable.)
	OutputJSON string `json:"outputJson,omitempty"`
	// ReusedFrom is the job whose result this record copies (Path
	// PathReused): a submit with reuse found the same record there.
	ReusedFrom string `json:"reusedFrom,omitempty"`
}

// ShardsFor picks how many partition keys a job's results spread over:
// one per 2,500 records, 1..32, so 50,000 results are not capped by one partition's 1,000 WCU/s.
func ShardsFor(records int) int {
	n := (records + 2499) / 2500
	return max(1, min(n, 32))
}

// RecordSet is where and how a job's records are kept: the job, the
// partitions they spread over and the key they are stored and listed by.
type RecordSet struct {
	JobID  string
	Shards int
	// ByOrdinal: records are keyed by (Ordinal, ID), spread round-robin over
	// the shards by ordinal, and listed in input order by merging the shards.
	// false (jobs stored before ordinals): keyed by ID, spread by a hash of it,
	// and listed by ID.
	ByOrdinal bool
	// Packed (ByOrdinal sets only): consecutive records share an item, so a
	// store that bills per item (DynamoDB) bills by bytes, not by records.
	// false: one item per record (jobs stored before 2026-12-03).
	Packed bool
}

// RecordSet is where j's records are kept.
func (j *Job) RecordSet() RecordSet {
	return RecordSet{JobID: j.ID, Shards: j.Shards, ByOrdinal: j.InputOrder, Packed: j.InputOrder && j.PackedRecords}
}

// RecordKey names one record of a record set: ByOrdinal sets need both.
type RecordKey struct {
	ID      string
	Ordinal int
}

// Key is r's key.
func (r *Record) Key() RecordKey { return RecordKey{ID: r.ID, Ordinal: r.Ordinal} }

// Shard is the partition of the record k. Round-robin by ordinal spreads
// consecutive records (which providers answer roughly together) over every
// partition, as the id hash did.
func (s RecordSet) Shard(k RecordKey) int {
	switch {
	case s.Shards <= 1:
		return 0
	case s.ByOrdinal:
		return k.Ordinal % s.Shards
	}
	h := fnv.New32a()
	h.Write([]byte(k.ID))
	return int(h.Sum32() % uint32(s.Shards))
}

// Aggregate recomputes the job status from its parts: the least advanced part
// decides, so the job moves forward only when every part has.
func (j *Job) Aggregate() Status {
	if len(j.Parts) == 0 {
		return j.Status
	}
	lowest := j.Parts[0].Status
	for _, p := range j.Parts[1:] {
		if p.Status.Rank() < lowest.Rank() {
			lowest = p.Status
		}
	}
	return lowest
}

// Touch stamps an update.
func (j *Job) Touch(now time.Time) {
	j.UpdatedAt = now
}

// PartName is the provider job name of part i of job id under a stack prefix.
// Part 0 of a single-part job carries no suffix.
func PartName(prefix, id string, i, parts int) string {
	if parts <= 1 {
		return prefix + "-" + id
	}
	return fmt.Sprintf("%s-%s-p%d", prefix, id, i+1)
}
