package model

import (
	"fmt"
	"slices"
	"strings"
)

// Task is what a model produces.
type Task string

const (
	TaskText      Task = "text"
	TaskEmbedding Task = "embedding"
)

// Mode is a way the suite can run a model.
type Mode string

const (
	ModeBatch    Mode = "batch"
	ModeOnDemand Mode = "on_demand"
)

// Providers.
const (
	ProviderBedrock   = "bedrock"
	ProviderAnthropic = "anthropic"
)

// Prices are USD per million tokens; nil means the model has no such price.
type Prices struct {
	Input       *float64 `json:"input,omitempty"`
	Output      *float64 `json:"output,omitempty"`
	BatchInput  *float64 `json:"batch_input,omitempty"`
	BatchOutput *float64 `json:"batch_output,omitempty"`
	CacheWrite  *float64 `json:"cache_write,omitempty"`
	CacheRead   *float64 `json:"cache_read,omitempty"`
	// Batch cache prices, where the provider documents caching in batches
	// (Anthropic: the batch discount stacks with the caching multipliers).
	BatchCacheWrite *float64 `json:"batch_cache_write,omitempty"`
	BatchCacheRead  *float64 `json:"batch_cache_read,omitempty"`
	// CacheWrite1h is the price of a 1-hour cache write (CacheWrite is the
	// 5-minute one); BatchCacheWrite1h the same inside a batch.
	CacheWrite1h      *float64 `json:"cache_write_1h,omitempty"`
	BatchCacheWrite1h *float64 `json:"batch_cache_write_1h,omitempty"`
	// LongContext holds the prices that apply instead of the ones above when
	// a request's prompt is longer than LongContext.AboveInputTokens.
	LongContext *LongContextPrices `json:"long_context,omitempty"`
}

// LongContextPrices is a model's price tier for long prompts, USD per
// million tokens. Cost estimates at job level do not know each request's
// prompt length and use the base tier; the tier is listed so that
// list_models and operators can see it.
type LongContextPrices struct {
	AboveInputTokens int      `json:"above_input_tokens"`
	Input            *float64 `json:"input,omitempty"`
	Output           *float64 `json:"output,omitempty"`
	CacheWrite       *float64 `json:"cache_write,omitempty"`
	CacheWrite1h     *float64 `json:"cache_write_1h,omitempty"`
	CacheRead        *float64 `json:"cache_read,omitempty"`
}

// Caching holds a model's prompt-caching rules.
type Caching struct {
	MinTokens      int      `json:"min_tokens"`      // per cache checkpoint
	MaxCheckpoints int      `json:"max_checkpoints"` // per request
	TTLs           []string `json:"ttls"`            // "5m", "1h"
}

// Model is one catalog entry.
type Model struct {
	ID       string   `json:"id"`
	Aliases  []string `json:"aliases,omitempty"`
	Provider string   `json:"provider"`
	Family   string   `json:"family"`
	Name     string   `json:"name"`
	Task     Task     `json:"task"`
	Modes    []Mode   `json:"modes"`
	// Profiles maps a geography ("us", "eu", "apac", "jp", "au", "global", ...)
	// to the cross-Region inference profile id.
	Profiles map[string]string `json:"profiles,omitempty"`
	// OnDemandRequiresProfile is true when Bedrock does not serve the base id
	// on demand in every Region the model is offered; on-demand calls then go
	// through a profile (always valid where the profile is offered).
	OnDemandRequiresProfile bool     `json:"on_demand_requires_profile,omitempty"`
	MaxOutputTokens         int      `json:"max_output_tokens,omitempty"`
	ContextWindow           int      `json:"context_window,omitempty"`
	InputModalities         []string `json:"input_modalities"`
	Caching                 *Caching `json:"caching,omitempty"`
	EmbeddingDimensions     []int    `json:"embedding_dimensions,omitempty"`
	MaxInputChars           int      `json:"max_input_chars,omitempty"`
	MaxInputTokens          int      `json:"max_input_tokens,omitempty"`
	MaxTextsPerCall         int      `json:"max_texts_per_call,omitempty"`
	Prices                  Prices   `json:"prices"`
	// RegionalPremium is the extra fraction geographic profiles and in-Region
	// endpoints bill over the listed (global-profile) prices, e.g. 0.1.
	RegionalPremium float64 `json:"regional_premium,omitempty"`
	// Lifecycle is where the model stands (nil: active, no dates known).
	Lifecycle *Lifecycle `json:"lifecycle,omitempty"`
	// Sampling lists the sampling parameters the model accepts
	// ("temperature", "top_p", "top_k"); nil (or absent) means all three, an
	// empty list none. Not omitempty: an empty list must survive the JSON
	// round trip of an operator merge, where it would otherwise become "all".
	Sampling []string `json:"sampling"`
	// BatchMaxOutput is a larger output limit for batch jobs, unlocked by a
	// beta header (Anthropic's Message Batches only).
	BatchMaxOutput *BatchMaxOutput `json:"batch_max_output,omitempty"`
	// NoSystemPrompt: the model refuses a system prompt (Converse); the
	// system text is folded into the first user turn with a warning.
	NoSystemPrompt bool `json:"no_system_prompt,omitempty"`
	// Documents are the model's document-block rules (nil: none beyond the defaults).
	Documents *DocumentRules `json:"documents,omitempty"`
	// ServiceTiers maps a Bedrock on-demand tier ("flex", "priority") the
	// model offers to its prices.
	ServiceTiers map[string]TierPrices `json:"service_tiers,omitempty"`
	// FactsAsOf and FactsSource date and source the row's non-price facts.
	FactsAsOf    string `json:"facts_as_of,omitempty"`
	FactsSource  string `json:"facts_source,omitempty"`
	PricesAsOf   string `json:"prices_as_of,omitempty"`
	PricesSource string `json:"prices_source,omitempty"`
	Notes        string `json:"notes,omitempty"`
	// PriceSources name each price's source and date once the Price List
	// was laid over the row (pricelist.go); never read from JSON.
	PriceSources map[string]PriceSource `json:"-"`
	// Account holds what the account says of the model (account.go); set only
	// on a catalog merged with the account's facts, never read from JSON.
	Account *AccountFacts `json:"-"`
}

// Supports reports whether the model can run in mode.
func (m *Model) Supports(mode Mode) bool { return slices.Contains(m.Modes, mode) }

// Geography maps an AWS Region to the broad geography of Bedrock's
// cross-Region inference profiles: us-gov-* → "us-gov", us-* and ca-* → "us"
// (AWS lists the Canadian Regions as source Regions of us. profiles), eu-* →
// "eu", ap-* → "apac". Other Regions (sa-, me-, af-, il-, mx-) have no
// geographic profile: "" (only global. profiles serve them).
func Geography(region string) string {
	switch {
	case strings.HasPrefix(region, "us-gov-"):
		return "us-gov"
	case strings.HasPrefix(region, "us-"), strings.HasPrefix(region, "ca-"):
		return "us"
	case strings.HasPrefix(region, "eu-"):
		return "eu"
	case strings.HasPrefix(region, "ap-"):
		return "apac"
	}
	return ""
}

// Geographies lists the profile geographies usable from region, most specific
// first: Japan and Australia have their own profiles for newer models
// ("jp", "au") besides "apac"; Canada may have "ca" before "us".
// "global" is not included.
func Geographies(region string) []string {
	g := Geography(region)
	var out []string
	switch {
	case region == "ap-northeast-1" || region == "ap-northeast-3":
		out = append(out, "jp")
	case region == "ap-southeast-2" || region == "ap-southeast-4":
		out = append(out, "au")
	case strings.HasPrefix(region, "ca-"):
		out = append(out, "ca")
	}
	if g != "" {
		out = append(out, g)
	}
	return out
}

// OnDemandID is the model id on-demand calls must use in region. Models that
// Bedrock serves on demand by base id return the base id. Others return the
// profile for the Region's geography, else the global profile, else the base
// id (the call then fails at Bedrock with its own message, which names the
// model and the Region).
func (m *Model) OnDemandID(region string) string {
	if !m.OnDemandRequiresProfile {
		return m.ID
	}
	for _, g := range Geographies(region) {
		if p, ok := m.Profiles[g]; ok {
			return p
		}
	}
	if p, ok := m.Profiles["global"]; ok {
		return p
	}
	return m.ID
}

// MaxTokensLimit is the largest max_tokens the model takes in mode: the
// batch maximum (sent with its beta header) for batch jobs where the catalog
// has one, else MaxOutputTokens. An undecided mode ("" or auto) counts as
// batch; the caller checks again once the mode is settled.
func (m *Model) MaxTokensLimit(mode Mode) int {
	if b := m.BatchMaxOutput; b != nil && mode != ModeOnDemand {
		return b.Tokens
	}
	return m.MaxOutputTokens
}

// BatchBeta is the beta header a batch job asking for n output tokens per
// record must send: "" when n is within the model's normal maximum.
func (m *Model) BatchBeta(n int) string {
	if b := m.BatchMaxOutput; b != nil && n > m.MaxOutputTokens {
		return b.BetaHeader
	}
	return ""
}

// CheckMaxTokens validates a request's max_tokens against the model's limit
// in mode (see MaxTokensLimit). The error names the field, the limit, and
// the batch maximum where the model has one.
func (m *Model) CheckMaxTokens(n int, mode Mode) error {
	if m.Task != TaskText || m.MaxOutputTokens <= 0 {
		return fmt.Errorf("max_tokens: model %s is an %s model and takes no max_tokens", m.ID, m.Task)
	}
	limit := m.MaxTokensLimit(mode)
	if n < 1 {
		return fmt.Errorf("max_tokens: %d is below 1 (model %s allows 1..%d)", n, m.ID, limit)
	}
	if n <= limit {
		return nil
	}
	b := m.BatchMaxOutput
	switch {
	case b == nil:
		return fmt.Errorf("max_tokens: %d exceeds the limit of %d for model %s (allowed: 1..%d)", n, limit, m.ID, limit)
	case limit == b.Tokens:
		return fmt.Errorf("max_tokens: %d exceeds the batch limit of %d for model %s (allowed: 1..%d; above its normal limit of %d the %s beta is sent for you)",
			n, limit, m.ID, limit, m.MaxOutputTokens, b.BetaHeader)
	}
	return fmt.Errorf("max_tokens: %d exceeds the limit of %d for model %s in %s mode (allowed: 1..%d); batch mode allows up to %d with the %s beta",
		n, limit, m.ID, mode, limit, b.Tokens, b.BetaHeader)
}

// Partition is the ARN partition of an AWS Region.
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	}
	return "aws"
}

// IAMResources lists the ARNs a role needs in bedrock:InvokeModel (and
// CreateModelInvocationJob) grants to use this model from region: the base
// model ARN in region and, for every profile usable from region (its
// geographies and global), the profile ARN in region plus
// arn:aws:bedrock:*::foundation-model/<id>, because a profile may route to
// any of its destination Regions. The "*" also matches the Region-less
// foundation-model ARN that global profiles authorize against. Anthropic API
// models need no IAM grant: both lists are empty.
func (m *Model) IAMResources(region, account string) (foundationModels []string, inferenceProfiles []string) {
	if m.Provider != ProviderBedrock {
		return nil, nil
	}
	part := Partition(region)
	foundationModels = []string{fmt.Sprintf("arn:%s:bedrock:%s::foundation-model/%s", part, region, m.ID)}
	for _, g := range append(Geographies(region), "global") {
		p, ok := m.Profiles[g]
		if !ok {
			continue
		}
		inferenceProfiles = append(inferenceProfiles, fmt.Sprintf("arn:%s:bedrock:%s:%s:inference-profile/%s", part, region, account, p))
	}
	if len(inferenceProfiles) > 0 {
		foundationModels = append(foundationModels, fmt.Sprintf("arn:%s:bedrock:*::foundation-model/%s", part, m.ID))
	}
	return foundationModels, inferenceProfiles
}

// Listing is a model as the list_models tool shows it.
type Listing struct {
	ID              string `json:"id"`
	Provider        string `json:"provider"`
	Family          string `json:"family"`
	Task            Task   `json:"task"`
	Modes           []Mode `json:"modes"`
	MaxOutputTokens int    `json:"max_output_tokens"`
	// BatchMaxOutput is the larger max_tokens batch jobs may ask for (the
	// beta header is sent for them).
	BatchMaxOutput   *BatchMaxOutput `json:"batch_max_output,omitempty"`
	InputModalities  []string        `json:"input_modalities"`
	PricesPerMillion ListingPrices   `json:"prices_per_million"`
	AsOf             string          `json:"as_of"`
	// PricesSource is where the prices shown come from (aws-price-list or
	// the catalog's page, dated by as_of); PriceSources name each price's
	// source and date instead when they differ.
	PricesSource string                 `json:"prices_source,omitempty"`
	PriceSources map[string]PriceSource `json:"price_sources,omitempty"`
	AccountListing
}

// ListingPrices are the prices list_models shows, USD per million tokens;
// absent where the model has none.
type ListingPrices struct {
	Input       *float64 `json:"input,omitempty"`
	Output      *float64 `json:"output,omitempty"`
	BatchInput  *float64 `json:"batch_input,omitempty"`
	BatchOutput *float64 `json:"batch_output,omitempty"`
	CacheWrite  *float64 `json:"cache_write,omitempty"`
	CacheRead   *float64 `json:"cache_read,omitempty"`
}

// Listing renders the model for list_models.
func (m *Model) Listing() Listing {
	p := m.Prices
	src, perPrice := m.listingSources()
	return Listing{
		ID: m.ID, Provider: m.Provider, Family: m.Family, Task: m.Task,
		// Listed as [] when empty: list_models' schema types them as arrays.
		Modes: append([]Mode{}, m.Modes...), MaxOutputTokens: m.MaxOutputTokens, BatchMaxOutput: m.BatchMaxOutput,
		InputModalities: append([]string{}, m.InputModalities...),
		PricesPerMillion: ListingPrices{
			Input: p.Input, Output: p.Output, BatchInput: p.BatchInput, BatchOutput: p.BatchOutput,
			CacheWrite: p.CacheWrite, CacheRead: p.CacheRead,
		},
		PricesSource: src, PriceSources: perPrice,
		AsOf:           m.PricesAsOf,
		AccountListing: m.accountListing(),
	}
}
