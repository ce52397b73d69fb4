package model

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Account is what the AWS account (and, with a key, the Anthropic API) said
// about models at one refresh: Bedrock's ListFoundationModels,
// GetFoundationModelAvailability, ListInferenceProfiles and the Service Quotas
// of service code "bedrock", and Anthropic's GET /v1/models. It is read at run
// time (shared/service/account), stored in the table, and merged over the
// embedded catalog by Merge: the account wins for lifecycle, access, profiles
// and limits, its Price List reading for the prices it lists; the catalog
// supplies the other prices and quirks.
type Account struct {
	// Region is the AWS Region the Bedrock facts hold for.
	Region string `json:"region"`
	// UpdatedAt is when the refresh read them.
	UpdatedAt time.Time `json:"updated_at"`
	// Version is the stored snapshot's version (set by the store).
	Version int64 `json:"version,omitempty"`
	// Bedrock are the foundation models ListFoundationModels returned.
	Bedrock []AccountModel `json:"bedrock,omitempty"`
	// Profiles are the inference profiles (system-defined and application).
	Profiles []AccountProfile `json:"profiles,omitempty"`
	// Anthropic are the models GET /v1/models returned (nil without a key).
	Anthropic []AnthropicFacts `json:"anthropic,omitempty"`
	// PriceList is what the AWS Price List listed for the account's Bedrock
	// models (nil: not read); pricelist.go.
	PriceList *PriceList `json:"price_list,omitempty"`
	// Gaps name the reads that failed (a denied permission, a throttle): the
	// facts they would have given stay unknown, and the catalog's apply.
	Gaps []string `json:"gaps,omitempty"`
	// UnmatchedQuotas are the model names of Bedrock quotas no listed model
	// took (QuotaMatcher): their quotas are not applied, so the refresh
	// report names them.
	UnmatchedQuotas []QuotaMiss `json:"unmatched_quotas,omitempty"`
}

// Access says whether the account may invoke a model.
const (
	AccessGranted = "granted"
	AccessDenied  = "not_granted"
	AccessUnknown = "unknown"
)

// Sources of a merged model.
const (
	SourceCatalog = "catalog"
	SourceAccount = "account"
	SourceBoth    = "both"
)

// AccountModel is one foundation model as the account lists it.
type AccountModel struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	Provider string `json:"provider,omitempty"` // providerName ("Anthropic", "Amazon", ...)
	// Lifecycle is modelLifecycle.status as sent (ACTIVE, LEGACY, or a value
	// newer than the SDK knows); the dates are YYYY-MM-DD.
	Lifecycle      string `json:"lifecycle,omitempty"`
	LegacySince    string `json:"legacy_since,omitempty"`
	ExtendedAccess string `json:"extended_access,omitempty"`
	EndOfLife      string `json:"end_of_life,omitempty"`
	// InferenceTypes are inferenceTypesSupported as sent (ON_DEMAND,
	// PROVISIONED, INFERENCE_PROFILE, ...), kept as strings because the
	// service adds values before the SDK's enum lists them.
	InferenceTypes []string `json:"inference_types,omitempty"`
	Input          []string `json:"input,omitempty"`  // inputModalities (TEXT, IMAGE, ...)
	Output         []string `json:"output,omitempty"` // outputModalities (TEXT, EMBEDDING, ...)
	// Access is granted, not_granted or unknown (GetFoundationModelAvailability
	// not read); AccessDetail carries the statuses that decided it.
	Access       string  `json:"access,omitempty"`
	AccessDetail string  `json:"access_detail,omitempty"`
	Quotas       *Quotas `json:"quotas,omitempty"`
}

// Quotas are a model's Bedrock batch-inference quotas in this account and
// Region (Service Quotas, service code "bedrock"), and its on-demand rates
// (a deadline's timing); 0 means not known.
type Quotas struct {
	MinRecordsPerJob  int   `json:"min_records_per_job,omitempty"`
	MaxRecordsPerJob  int   `json:"max_records_per_job,omitempty"`
	MaxRecordsPerFile int   `json:"max_records_per_file,omitempty"`
	MaxInputFileBytes int64 `json:"max_input_file_bytes,omitempty"`
	MaxJobBytes       int64 `json:"max_job_bytes,omitempty"`
	MaxConcurrentJobs int   `json:"max_concurrent_jobs,omitempty"`
	// RequestsPerMinute and TokensPerMinute are the on-demand runtime
	// quotas ("On-demand InvokeModel tokens per minute for X", "Cross-Region
	// InvokeModel tokens per minute for X", and the requests-per-minute rows
	// older models have): when several apply, the smallest is kept (the
	// stricter reading; a run may go through either).
	RequestsPerMinute float64 `json:"requests_per_minute,omitempty"`
	TokensPerMinute   float64 `json:"tokens_per_minute,omitempty"`
}

// Batch reports whether any batch-inference quota is known (q may be nil).
func (q *Quotas) Batch() bool {
	return q != nil && (q.MinRecordsPerJob > 0 || q.MaxRecordsPerJob > 0 || q.MaxRecordsPerFile > 0 ||
		q.MaxInputFileBytes > 0 || q.MaxJobBytes > 0 || q.MaxConcurrentJobs > 0)
}

// AccountProfile is one inference profile of the account's Region.
type AccountProfile struct {
	ID     string `json:"id"`
	ARN    string `json:"arn,omitempty"`
	Name   string `json:"name,omitempty"`
	Type   string `json:"type,omitempty"`   // SYSTEM_DEFINED | APPLICATION
	Status string `json:"status,omitempty"` // ACTIVE
	// Models are the base model ids the profile routes to.
	Models []string `json:"models,omitempty"`
}

// AnthropicFacts is one model as the Anthropic API's GET /v1/models lists it.
type AnthropicFacts struct {
	ID             string   `json:"id"`
	Name           string   `json:"name,omitempty"`
	MaxInputTokens int      `json:"max_input_tokens,omitempty"`
	MaxTokens      int      `json:"max_tokens,omitempty"`
	Capabilities   []string `json:"capabilities,omitempty"` // batch, image_input, pdf_input, ...
	// Lifecycle is active, deprecated or retired; the dates are YYYY-MM-DD.
	Lifecycle    string `json:"lifecycle,omitempty"`
	DeprecatedAt string `json:"deprecated_at,omitempty"`
	RetiresAt    string `json:"retires_at,omitempty"`
}

// AccountFacts is what a merged model carries from the account; nil on a
// model of a catalog that was never merged with an account.
type AccountFacts struct {
	// Source is catalog (the account does not list the model), account (the
	// catalog lacks it) or both.
	Source string `json:"source"`
	// Access is granted, not_granted or unknown.
	Access string `json:"access"`
	// AccessDetail says what decided Access.
	AccessDetail string `json:"access_detail,omitempty"`
	// Quotas are the model's batch quotas (nil: none read).
	Quotas *Quotas `json:"quotas,omitempty"`
	// Batch says whether the account's quotas let the model take batch
	// jobs, and so why its modes are what they are ("": quotas not read).
	Batch string `json:"batch,omitempty"`
	// Profiles are the ids of the inference profiles in this Region that
	// route to the model (system-defined and application).
	Profiles []string `json:"profiles,omitempty"`
	// InferenceTypes as the account lists them.
	InferenceTypes []string `json:"inference_types,omitempty"`
	// AsOf is when the account said so (RFC 3339).
	AsOf string `json:"as_of"`
}

// Quota names as Service Quotas shows them for service code "bedrock". Word
// order differs between models ("Batch inference job size (in GB) for X" and
// "X batch inference job size (in GB)" both occur), so each kind is matched by
// the words it must contain and the model is what is left.
type quotaKind struct {
	field string
	// words must all appear (lower case); not must not.
	words, not []string
}

var quotaKinds = []quotaKind{
	{field: "min_records", words: []string{"minimum", "records", "batch inference job"}},
	{field: "records_per_file", words: []string{"records per input file", "batch inference job"}},
	{field: "records_per_job", words: []string{"records per batch inference job"}, not: []string{"minimum", "input file"}},
	{field: "file_bytes", words: []string{"batch inference input file size"}},
	{field: "job_bytes", words: []string{"batch inference job size"}},
	{field: "concurrent", words: []string{"in-progress and submitted batch inference jobs"}},
}

// quotaPhrases are the words of the quota kinds, removed from a name whose
// model does not follow "for"; what is left names the model.
var quotaPhrases = regexp.MustCompile(`(?i)\(in gb\)|sum of in-progress and submitted batch inference jobs( using a base model)?|minimum number of records per batch inference job|records per input file per batch inference job|records per batch inference job|batch inference input file size|batch inference job size`)

// rateQuota matches the runtime per-minute quotas of a model, as
// docs.aws.amazon.com/bedrock/latest/userguide/quotas-runtime.html names them
// (read 2026-12-01): "On-demand InvokeModel tokens per minute for ${model}",
// "Cross-Region InvokeModel tokens per minute for ${model}", and the
// "... requests per minute for ..." rows of older models.
var rateQuota = regexp.MustCompile(`(?i)^(?:global )?(?:on-demand|cross-region)\b.*\b(requests|tokens) per minute for (.+)$`)

// ParseQuotaName reads a Bedrock quota name: which quota (one of
// min_records, records_per_job, records_per_file, file_bytes, job_bytes,
// concurrent, requests_per_minute, tokens_per_minute) and the model name it
// is for. ok is false for other quotas (per day, custom models, ...).
func ParseQuotaName(name string) (kind, modelName string, ok bool) {
	clean := strings.Join(strings.Fields(name), " ")
	lower := strings.ToLower(clean)
	if strings.Contains(lower, "custom model") {
		return "", "", false
	}
	if m := rateQuota.FindStringSubmatch(clean); m != nil {
		if rest := strings.Trim(m[2], " -:,"); rest != "" {
			return strings.ToLower(m[1]) + "_per_minute", rest, true
		}
		return "", "", false
	}
	if !strings.Contains(lower, "batch inference") {
		return "", "", false
	}
	for _, k := range quotaKinds {
		if !containsAll(lower, k.words) || containsAny(lower, k.not) {
			continue
		}
		rest := clean
		if i := strings.LastIndex(lower, " for "); i >= 0 {
			rest = clean[i+len(" for "):]
		}
		rest = quotaPhrases.ReplaceAllString(rest, " ")
		rest = strings.Trim(strings.Join(strings.Fields(rest), " "), " -:,")
		if rest == "" {
			return "", "", false
		}
		return k.field, rest, true
	}
	return "", "", false
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

func containsAny(s string, words []string) bool {
	return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(s, w) })
}

// SetQuota stores one quota value (as Service Quotas gives it: a count, or
// gigabytes for the sizes) under its kind.
func (q *Quotas) SetQuota(kind string, value float64) {
	const gb = 1 << 30 // Bedrock's "GB" quotas are checked against 2^30 bytes (stricter than 10^9 would be: smaller files)
	switch kind {
	case "min_records":
		q.MinRecordsPerJob = int(value)
	case "records_per_job":
		q.MaxRecordsPerJob = int(value)
	case "records_per_file":
		q.MaxRecordsPerFile = int(value)
	case "file_bytes":
		q.MaxInputFileBytes = int64(value * gb)
	case "job_bytes":
		q.MaxJobBytes = int64(value * gb)
	case "concurrent":
		q.MaxConcurrentJobs = int(value)
	case "requests_per_minute":
		q.RequestsPerMinute = minRate(q.RequestsPerMinute, value)
	case "tokens_per_minute":
		q.TokensPerMinute = minRate(q.TokensPerMinute, value)
	}
}

// minRate is the smaller of two known rates (0: unknown).
func minRate(have, v float64) float64 {
	if v <= 0 {
		return have
	}
	if have <= 0 {
		return v
	}
	return min(have, v)
}

// day renders a time as YYYY-MM-DD (UTC); "" for nil.
func day(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// Day is day for callers building AccountModel rows from the SDK's times.
func Day(t *time.Time) string { return day(t) }

// Validate checks a snapshot read back from the store.
func (a *Account) Validate() error {
	if a.UpdatedAt.IsZero() {
		return fmt.Errorf("account facts: updated_at: required")
	}
	for i, m := range a.Bedrock {
		if m.ID == "" {
			return fmt.Errorf("account facts: bedrock[%d].id: required", i)
		}
	}
	return nil
}
