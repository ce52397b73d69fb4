package mcpserver

import (
	"encoding/json"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/summary"
)

// Message is one conversation turn in Anthropic Messages form.
type Message struct {
	Role    string `json:"role" jsonschema:"user or assistant"`
	Content any    `json:"content" jsonschema:"a string, or an array of Anthropic content blocks"`
}

// RecordIn is one record of submit_batch.
type RecordIn struct {
	ID         string         `json:"id,omitempty" jsonschema:"your id for this record: any text up to 256 characters, unique in the job; generated (r00001...) when absent"`
	Prompt     string         `json:"prompt,omitempty" jsonschema:"a single user message; give prompt, messages or model_input"`
	Messages   []Message      `json:"messages,omitempty" jsonschema:"a conversation; the last turn is the user's"`
	System     string         `json:"system,omitempty" jsonschema:"system prompt for this record (overrides the job's)"`
	ModelInput map[string]any `json:"model_input,omitempty" jsonschema:"raw native model request body, passed through unchanged (for non-Claude models)"`
	Text       string         `json:"text,omitempty" jsonschema:"the text to embed (embedding models): 1..the model's max_input_chars (list_models)"`
	Metadata   map[string]any `json:"metadata,omitempty" jsonschema:"stored with the record's vector in the index (strings, numbers, booleans or lists of them; filterable in search_index)"`
}

// SubmitIn is the input of submit_batch.
type SubmitIn struct {
	Model   string     `json:"model" jsonschema:"a model id from list_models (a Bedrock inference profile id or ARN of it works too)"`
	Records []RecordIn `json:"records,omitempty" jsonschema:"100..50,000 per provider job; larger batches are split into several provider jobs under one job id. Above 5 MB of records: use create_upload and input_upload_id instead (the request limit is 6 MB)"`
	// InputUploadID and InputURI name a JSONL file instead of inline records.
	InputUploadID string `json:"input_upload_id,omitempty" jsonschema:"upload_id from create_upload, after you PUT the JSONL file to its url; instead of records"`
	// InputUploadIDs name many uploaded files, one job over all of them.
	InputUploadIDs []string  `json:"input_upload_ids,omitempty" jsonschema:"upload_ids from create_upload, one job over all the files (the limits per job are in the tool description); instead of records"`
	InputURI       string    `json:"input_uri,omitempty" jsonschema:"s3://<this stack's bucket>/inputs/<your owner tag>/<key> of a JSONL file, or a folder of them ending in / (one job over every file in it, limits as for input_upload_ids; a refusal names your folders); instead of records"`
	System         string    `json:"system,omitempty" jsonschema:"system prompt for every record"`
	MaxTokens      int       `json:"max_tokens,omitempty" jsonschema:"maximum output tokens per record, 1..the model's max_output_tokens (list_models; batch jobs up to its batch_max_output where listed), default 1024"`
	Temperature    *float64  `json:"temperature,omitempty" jsonschema:"0..1"`
	Name           string    `json:"name,omitempty" jsonschema:"a label for list_jobs, up to 128 characters"`
	TTLDays        *int      `json:"ttl_days,omitempty" jsonschema:"days the job and its results are kept, 1..365; omit it for the default 7"`
	Mode           string    `json:"mode,omitempty" jsonschema:"auto (default: batch from 100 records, else on demand), batch, or on_demand (runtime API, up to 10,000 records, full price)"`
	DryRun         bool      `json:"dry_run,omitempty" jsonschema:"true: validate and estimate only (tokens, cost, provider jobs, problems with images and documents); nothing is stored or submitted"`
	Notify         *NotifyIn `json:"notify,omitempty" jsonschema:"announce the job's end: a signed webhook POST and/or the stack's SNS topic"`
	Provider       string    `json:"provider,omitempty" jsonschema:"bedrock (default) or anthropic (Anthropic Message Batches: 1..100,000 requests or 256 MB per batch, more is split); chosen by model when only one provider allows it"`
	// Embedding models (task embedding in list_models).
	Dimensions int      `json:"dimensions,omitempty" jsonschema:"embedding models: vector size the model offers (Titan Text Embeddings V2: 256, 512 or 1024; Cohere: 1024); default the largest"`
	Normalize  *bool    `json:"normalize,omitempty" jsonschema:"Titan Text Embeddings: unit-length vectors, default true"`
	InputType  string   `json:"input_type,omitempty" jsonschema:"Cohere Embed: search_document (default), search_query, classification or clustering"`
	Truncate   string   `json:"truncate,omitempty" jsonschema:"embedding models: a text over the model's max_input_chars is refused (NONE, default) or cut at its END or START"`
	Tier       string   `json:"tier,omitempty" jsonschema:"on-demand runs: Bedrock service tier standard, flex (discounted, slower, may throttle), priority (premium) or auto (default: flex where the model offers it with known prices, else standard); the tier is priced in the job's cost"`
	BudgetUSD  float64  `json:"budget_usd,omitempty" jsonschema:"refuse the submit when its estimated cost (estimated input, max_tokens × records of output, at the mode's prices) is over this many USD; get_job then shows spent and remaining"`
	Deadline   string   `json:"deadline,omitempty" jsonschema:"RFC 3339 time every record must have a result by, e.g. 2026-12-02T09:00:00Z; refused when even running all records on demand at the account's quota could not meet it. A batch job's unfinished parts are stopped in time and their unfinished records run on demand (standard tier) in the same job; each result says its path"`
	Index      *IndexIn `json:"index,omitempty" jsonschema:"embedding models: write the vectors, with each record's id, text and metadata, into this vector index of yours (created on first use; its dimension, metric and model are fixed then); search it with search_index"`
	// Structured output (shared/outschema).
	OutputSchema map[string]any `json:"output_schema,omitempty" jsonschema:"a JSON Schema (2020-12, up to 16 KB) every output must conform to: constrained natively where the model's API documents it, else asked for in the system prompt; each output is parsed and validated, stored as output_json, and one that breaks the schema fails as schema_violation (not JSON: parse_failed) naming the path, retryable with retry_failed"`
	Categories   []string       `json:"categories,omitempty" jsonschema:"classification shortcut instead of output_schema: each output is {\"category\": one of these} (1..256 distinct values, each up to 128 characters)"`
	Confidence   bool           `json:"confidence,omitempty" jsonschema:"with categories: each output also has a confidence number from 0 to 1"`
	// Result cache (shared/service/batch/reuse.go).
	Reuse        bool `json:"reuse,omitempty" jsonschema:"answer a record from your earlier result of the same record (same model, parameters, system prompt, content and output schema, submitted with reuse, succeeded, not expired) instead of sending it: cost 0, reused_from names that job; inline records and one input file (input_upload_id, input_uri). Jobs with a temperature above 0 (or none, the models' default of 1) are reused only with reuse_sampled"`
	ReuseSampled bool `json:"reuse_sampled,omitempty" jsonschema:"with reuse: reuse results of sampled jobs too (temperature above 0 or absent), whose answers vary from run to run"`
}

// JobHandle is what submit_batch returns.
type JobHandle struct {
	JobID       string `json:"job_id,omitempty" jsonschema:"absent on a dry run: nothing was created"`
	Status      string `json:"status"`
	Mode        string `json:"mode,omitempty" jsonschema:"batch or on_demand: how the job runs"`
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	RecordCount int    `json:"record_count"`
	Reused      int    `json:"reused,omitempty" jsonschema:"records answered from earlier results (reuse), not sent"`
	Parts       int    `json:"provider_jobs" jsonschema:"number of provider jobs the batch was split into"`
	SubmittedAt string `json:"submitted_at,omitempty"`
	ExpiresAt   string `json:"expires_at,omitempty" jsonschema:"while the job runs: a hold kept ahead of the run, not the final expiry (see expires_at_final)"`
	// ExpiresFinal / TTLDays say what expires_at is: a job in flight holds its
	// expiry ahead of the run, and only its end fixes it at ttl_days after.
	ExpiresFinal bool     `json:"expires_at_final" jsonschema:"false while the job runs: expires_at then moves, and once the job ends becomes ttl_days after its end (get_job shows it)"`
	TTLDays      int      `json:"ttl_days,omitempty" jsonschema:"the job and its results are kept this many days after the job ends"`
	Warnings     []string `json:"warnings,omitempty" jsonschema:"what to know about how the job runs, e.g. a legacy model and its end-of-life date"`
	// DryRun is the estimate of a dry run (then nothing else is set but model and provider).
	DryRun *batch.DryRunResult `json:"dry_run,omitempty"`
}

// JobIDIn names a job.
type JobIDIn struct {
	JobID string `json:"job_id" jsonschema:"the job_id returned by submit_batch"`
}

// JobView is what get_job returns.
type JobView struct {
	JobID          string `json:"job_id"`
	Name           string `json:"name,omitempty"`
	Status         string `json:"status"`
	ProviderStatus string `json:"provider_status,omitempty"`
	Provider       string `json:"provider"`
	Model          string `json:"model"`
	RecordCount    int    `json:"record_count"`
	Succeeded      int    `json:"succeeded"`
	Failed         int    `json:"failed"`
	BadLines       int    `json:"bad_lines"`
	Reused         int    `json:"reused,omitempty" jsonschema:"records answered at submit from earlier results (reuse: true), counted in record_count and succeeded, never sent, cost 0"`
	InputTokens    int64  `json:"input_tokens"`
	OutputTokens   int64  `json:"output_tokens"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
	CompletedAt    string `json:"completed_at,omitempty"`
	ExpiresAt      string `json:"expires_at" jsonschema:"when the job and its results are deleted; while the job runs a hold that moves (see expires_at_final)"`
	ExpiresFinal   bool   `json:"expires_at_final" jsonschema:"true once the job ended: expires_at no longer moves (ttl_days after the end)"`
	TTLDays        int    `json:"ttl_days,omitempty" jsonschema:"the job and its results are kept this many days after the job ends"`
	Error          string `json:"error,omitempty"`
	Terminal       bool   `json:"terminal" jsonschema:"true once the status will not change again"`
	Mode           string `json:"mode,omitempty" jsonschema:"batch or on_demand"`
	CacheRead      int64  `json:"cache_read_tokens,omitempty" jsonschema:"prompt-cache tokens read"`
	CacheWrite     int64  `json:"cache_write_tokens,omitempty" jsonschema:"prompt-cache tokens written"`
	SubmittedAt    string `json:"submitted_at,omitempty"`
	// CostUSD is the total; Cost has its parts and the price basis.
	CostUSD float64   `json:"cost_usd" jsonschema:"what the job's tokens so far cost in USD at list prices (see cost for the parts)"`
	Cost    *CostView `json:"cost,omitempty"`
	// BudgetUSD / SpentUSD / RemainingUSD: the job's budget_usd, what it
	// spent so far and what of the budget that leaves.
	BudgetUSD    float64  `json:"budget_usd,omitempty" jsonschema:"the budget the job was submitted with"`
	SpentUSD     *float64 `json:"spent_usd,omitempty" jsonschema:"with a budget: spent so far, cost_usd or, while a batch job runs, its ended provider jobs' cost by the provider's token totals"`
	RemainingUSD *float64 `json:"remaining_usd,omitempty" jsonschema:"budget_usd minus spent_usd, never below 0"`
	// RetryOf / RetriedBy link retry_failed jobs.
	RetryOf   string   `json:"retry_of,omitempty" jsonschema:"the job this one retries the failed records of"`
	RetriedBy []string `json:"retried_by,omitempty" jsonschema:"jobs retry_failed made from this one's failed records"`
	Warnings  []string `json:"warnings,omitempty" jsonschema:"what to know about how the job runs, e.g. a legacy model and its end-of-life date"`
	// Deadline / StopBatchBy / Redrive: a job submitted with a deadline.
	Deadline    string       `json:"deadline,omitempty" jsonschema:"the deadline the job was submitted with"`
	StopBatchBy string       `json:"stop_batch_by,omitempty" jsonschema:"batch jobs with a deadline: when unfinished batch parts are stopped so their records run on demand before the deadline (at the account's on-demand quota, with a safety margin); moves as parts finish"`
	Redrive     *RedriveView `json:"redrive,omitempty" jsonschema:"the deadline re-drive: the batch parts stopped and the records run on demand"`
	// SummaryField / SummaryStatsField: what the console and the App chart
	// of the job's summarize_results (summary.FieldsOf its output schema).
	SummaryField      string `json:"summary_field,omitempty" jsonschema:"jobs with output_schema or categories: an output_json field to pass to summarize_results as field (the schema's first top-level enum, else boolean, property)"`
	SummaryStatsField string `json:"summary_stats_field,omitempty" jsonschema:"jobs with output_schema or categories: a numeric output_json field to pass to summarize_results as stats_field"`
}

// RedriveView is a deadline re-drive as get_job shows it.
type RedriveView struct {
	StoppedAt      string `json:"stopped_at" jsonschema:"when the unfinished batch parts were stopped"`
	StoppedParts   int    `json:"stopped_parts"`
	Records        int    `json:"records" jsonschema:"records the batch parts left without a result, run on demand (known once the stopped parts' output is read)"`
	Done           int    `json:"done" jsonschema:"of those, how many have a result now"`
	BatchSucceeded int    `json:"batch_succeeded" jsonschema:"records the batch parts produced successfully"`
	BatchFailed    int    `json:"batch_failed"`
}

// CostView is a job's cost by part, at the model catalog's list prices.
type CostView struct {
	InputUSD      float64  `json:"input_usd"`
	OutputUSD     float64  `json:"output_usd"`
	CacheWriteUSD float64  `json:"cache_write_usd"`
	CacheReadUSD  float64  `json:"cache_read_usd"`
	TotalUSD      float64  `json:"total_usd"`
	Basis         string   `json:"basis" jsonschema:"batch (batch prices) or on_demand"`
	Tier          string   `json:"tier,omitempty" jsonschema:"on-demand service tier priced: flex or priority (absent: standard)"`
	AsOf          string   `json:"as_of,omitempty" jsonschema:"date of the prices"`
	Unpriced      []string `json:"unpriced,omitempty" jsonschema:"prices the catalog lacks for tokens the job used (counted as 0)"`
	// Redrive compares the re-driven records' on-demand cost with the batch price.
	Redrive *RedriveCostView `json:"redrive,omitempty" jsonschema:"a deadline re-drive: what its records cost on demand, what they would have cost at the batch price, and the difference"`
}

// RedriveCostView prices a deadline re-drive's records both ways.
type RedriveCostView struct {
	Records         int     `json:"records"`
	OnDemandUSD     float64 `json:"on_demand_usd"`
	AtBatchPriceUSD float64 `json:"at_batch_price_usd"`
	ExtraUSD        float64 `json:"extra_usd" jsonschema:"on_demand_usd − at_batch_price_usd: what meeting the deadline cost"`
	Tier            string  `json:"tier,omitempty"`
}

// ResultsIn is the input of get_job_results.
type ResultsIn struct {
	JobID  string `json:"job_id"`
	Status string `json:"status,omitempty" jsonschema:"all (default), succeeded or failed"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"records per page, 1..500, default 100"`
	Latest bool   `json:"latest,omitempty" jsonschema:"each record's latest outcome across its retry_failed retries (one merged set; job_id on a record names the retry it comes from)"`
	// IncludeVectors adds embedding records' vectors.
	IncludeVectors bool `json:"include_vectors,omitempty" jsonschema:"embedding jobs: include each record's vector (large); default false shows only its dimensions"`
}

// RecordOut is one result.
type RecordOut struct {
	ID           string `json:"id"`
	JobID        string `json:"job_id,omitempty" jsonschema:"with latest: the retry job the outcome comes from (absent: the job itself)"`
	Status       string `json:"status"`
	Output       string `json:"output,omitempty"`
	OutputURL    string `json:"output_url,omitempty" jsonschema:"presigned link to an output too big to inline"`
	StopReason   string `json:"stop_reason,omitempty"`
	ErrorCode    string `json:"error_code,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	Path         string `json:"path,omitempty" jsonschema:"how the result was produced: batch (a provider batch job) or on_demand (the runtime API; also the records a deadline re-drove)"`
	ReusedFrom   string `json:"reused_from,omitempty" jsonschema:"a record answered at submit from an earlier result (reuse): the job it came from (path reused, cost 0)"`
	// OutputJSON is the output as the JSON value the job's output schema checked.
	OutputJSON any `json:"output_json,omitempty" jsonschema:"jobs with output_schema or categories: the output parsed, conforming to the schema (a record that broke it failed as schema_violation or parse_failed and keeps output)"`

	Dimensions int       `json:"dimensions,omitempty" jsonschema:"embedding jobs: the vector's dimension count"`
	Vector     []float32 `json:"vector,omitempty" jsonschema:"embedding jobs with include_vectors: the vector"`

	ContentType string `json:"content_type,omitempty" jsonschema:"media type of the output (SageMaker)"`
	Note        string `json:"note,omitempty" jsonschema:"how the output was stored when it differs from its content type"`
}

// ResultsOut is a page of results.
type ResultsOut struct {
	JobID      string      `json:"job_id"`
	JobStatus  string      `json:"job_status"`
	Records    []RecordOut `json:"records"`
	NextCursor string      `json:"next_cursor,omitempty"`
	// TruncatedByBytes: the page stopped at its byte budget before limit;
	// next_cursor continues.
	TruncatedByBytes bool `json:"truncated_by_bytes,omitempty"`
}

// CancelOut is what cancel_job returns.
type CancelOut struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
}

// ListIn is the input of list_jobs.
type ListIn struct {
	Status string `json:"status,omitempty" jsonschema:"only jobs in this status"`
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty" jsonschema:"1..500, default 100"`
}

// ListOut is a page of jobs.
type ListOut struct {
	Jobs       []JobView `json:"jobs"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func viewOf(j *job.Job) JobView {
	v := jobView(j)
	if v.Cost != nil {
		v.CostUSD = v.Cost.TotalUSD
	}
	if j.BudgetUSD > 0 {
		spent := j.Spent()
		left := max(0, j.BudgetUSD-spent)
		v.BudgetUSD, v.SpentUSD, v.RemainingUSD = j.BudgetUSD, &spent, &left
	}
	return v
}

func jobView(j *job.Job) JobView {
	field, stats := summary.FieldsOf(j.OutputSchema())
	return JobView{
		JobID: j.ID, Name: j.Name, Status: string(j.Status), ProviderStatus: j.ProviderStatus, Provider: j.Provider,
		Model: j.Model, RecordCount: j.RecordCount + j.Reused, Succeeded: j.Succeeded + j.Reused, Failed: j.Failed, BadLines: j.BadLines, Reused: j.Reused,
		InputTokens: j.InputTokens, OutputTokens: j.OutputTokens, CreatedAt: ts(j.CreatedAt), UpdatedAt: ts(j.UpdatedAt),
		CompletedAt: ts(j.CompletedAt), ExpiresAt: ts(j.ExpiresAt), ExpiresFinal: expiresFinal(j), TTLDays: ttlOf(j),
		Error: j.Error, Terminal: j.Status.Terminal(),
		Mode: j.Mode, CacheRead: j.CacheReadTokens, CacheWrite: j.CacheWriteTokens, SubmittedAt: ts(j.SubmittedAt),
		Cost: costView(j.Cost), RetryOf: j.RetryOf, RetriedBy: j.RetriedBy, Warnings: j.Warnings,
		Deadline: ts(j.Deadline), Redrive: redriveView(j), SummaryField: field, SummaryStatsField: stats,
	}
}

func costView(c *job.Cost) *CostView {
	if c == nil {
		return nil
	}
	v := &CostView{InputUSD: c.InputUSD, OutputUSD: c.OutputUSD, CacheWriteUSD: c.CacheWriteUSD, CacheReadUSD: c.CacheReadUSD,
		TotalUSD: c.TotalUSD, Basis: c.Basis, Tier: c.Tier, AsOf: c.PricesAsOf, Unpriced: c.Unpriced}
	if r := c.Redrive; r != nil {
		v.Redrive = &RedriveCostView{Records: r.Records, OnDemandUSD: r.OnDemandUSD, AtBatchPriceUSD: r.AtBatchPriceUSD, ExtraUSD: r.ExtraUSD, Tier: r.Tier}
	}
	return v
}

// redriveView is j's deadline re-drive for get_job (nil: none).
func redriveView(j *job.Job) *RedriveView {
	r := j.Redrive
	if r == nil {
		return nil
	}
	v := &RedriveView{StoppedAt: ts(r.StoppedAt), StoppedParts: len(r.Parts), Records: r.Records,
		BatchSucceeded: r.BatchSucceeded, BatchFailed: r.BatchFailed}
	if r.Started && j.OnDemand != nil {
		v.Done = j.OnDemand.Line
	}
	return v
}

// ttlDays is ttl_days as the service takes it: 0 when absent (the default),
// and an explicit 0 refused rather than read as "absent".
func (in SubmitIn) ttlDays() (int, error) {
	switch {
	case in.TTLDays == nil:
		return 0, nil
	case *in.TTLDays == 0:
		return 0, job.Fieldf("ttl_days", "must be %d..%d (got 0); omit it for the default of %d days", job.MinTTLDays, job.MaxTTLDays, job.DefaultTTLDays)
	}
	return *in.TTLDays, nil
}

// jobHandle is what submit_batch answers for a job it stored.
func jobHandle(j *job.Job) JobHandle {
	return JobHandle{JobID: j.ID, Status: string(j.Status), Mode: j.Mode, Provider: j.Provider, Model: j.Model, RecordCount: j.RecordCount + j.Reused, Reused: j.Reused,
		Parts: len(j.Parts), SubmittedAt: ts(j.SubmittedAt), ExpiresAt: ts(j.ExpiresAt), ExpiresFinal: expiresFinal(j), TTLDays: ttlOf(j),
		Warnings: j.Warnings}
}

// expiresFinal: a job's expiry is fixed once it ended (job.Retain); before,
// job.Hold keeps moving it ahead of the run.
func expiresFinal(j *job.Job) bool { return j.Status.Terminal() && !j.CompletedAt.IsZero() }

// ttlOf is the job's retention in days after its end, the default filled in.
func ttlOf(j *job.Job) int {
	if j.TTLDays <= 0 {
		return job.DefaultTTLDays
	}
	return j.TTLDays
}

// withWarnings appends the job's warnings to a tool's text summary.
func withWarnings(summary string, warnings []string) string {
	for _, w := range warnings {
		summary += " Warning: " + w + "."
	}
	return summary
}

// outputSchema is the output schema the submit asks for ("": none).
func (in SubmitIn) outputSchema() (string, error) {
	var raw json.RawMessage
	if in.OutputSchema != nil {
		b, err := json.Marshal(in.OutputSchema)
		if err != nil {
			return "", job.Fieldf("output_schema", "not encodable: %v", err)
		}
		raw = b
	}
	return outschema.FromInput(raw, in.Categories, in.Confidence)
}
