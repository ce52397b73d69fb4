package model

import "slices"

// Fields added in wave 3. They are declared together here so that the
// catalog rows, the account refresh, the Converse encoder and the pricing of
// service tiers all read the same names; each is documented where it is
// enforced.

// Lifecycle statuses (Bedrock's modelLifecycle.status, lower-cased, plus the
// end of life the provider announces).
const (
	LifecycleActive    = "active"
	LifecycleLegacy    = "legacy"
	LifecycleEndOfLife = "end_of_life"
)

// Lifecycle is where a model stands with its provider.
type Lifecycle struct {
	Status      string `json:"status"`                 // active | legacy | end_of_life
	LegacySince string `json:"legacy_since,omitempty"` // YYYY-MM-DD
	EndOfLife   string `json:"end_of_life,omitempty"`  // YYYY-MM-DD (past or announced)
	Successor   string `json:"successor,omitempty"`    // catalog id
	Source      string `json:"source,omitempty"`       // URL or "account" (ListFoundationModels)
}

// DocumentRules are a model's rules for document blocks.
type DocumentRules struct {
	// MaxPDFBytes caps one PDF document (0: the general document cap applies).
	MaxPDFBytes int64 `json:"max_pdf_bytes,omitempty"`
	// PDFExemptFromCap: the model reads PDFs past the general document cap.
	PDFExemptFromCap bool `json:"pdf_exempt_from_cap,omitempty"`
	// RequiresText: a message holding a document needs a text block beside it.
	RequiresText bool `json:"requires_text,omitempty"`
	// CitationsForPDF: PDFs are read visually only with citations enabled.
	CitationsForPDF bool `json:"citations_for_pdf,omitempty"`
}

// TierPrices are on-demand prices of a Bedrock service tier, USD per million tokens.
type TierPrices struct {
	Input  *float64 `json:"input,omitempty"`
	Output *float64 `json:"output,omitempty"`
}

// Bedrock on-demand service tiers, as a job's tier names them. Standard is
// the runtime's "default"; auto lets the submit choose. Source:
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ServiceTier.html
// (read 2026-12-01).
const (
	TierStandard = "standard"
	TierFlex     = "flex"
	TierPriority = "priority"
	TierAuto     = "auto"
)

// Tier returns the prices of a service tier the model offers with both its
// input and output price known; false when it does not offer the tier or the
// catalog lacks a price (such a tier is not used: guessing would misprice it).
func (m *Model) Tier(tier string) (TierPrices, bool) {
	tp, ok := m.ServiceTiers[tier]
	return tp, ok && tp.Input != nil && tp.Output != nil
}

// BatchMaxOutput is an output limit that applies in batch jobs sent with a
// beta header (e.g. Anthropic's "output-300k-2026-03-24").
type BatchMaxOutput struct {
	Tokens     int    `json:"tokens"`
	BetaHeader string `json:"beta_header"`
}

// Sampling parameter names, as the Messages API spells them.
const (
	SamplingTemperature = "temperature"
	SamplingTopP        = "top_p"
	SamplingTopK        = "top_k"
)

var samplingOK = []string{SamplingTemperature, SamplingTopP, SamplingTopK}

// AcceptsSampling reports whether the model takes the sampling parameter.
func (m *Model) AcceptsSampling(param string) bool {
	return m.Sampling == nil || slices.Contains(m.Sampling, param)
}
