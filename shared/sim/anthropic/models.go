package anthropic

// The Anthropic simulator's one table of models (one row per model: its
// limits, caching, sampling and lifecycle) and its own copy of the API's
// documented words and limits; never the product's, so a wrong product
// table shows up as a failing test.

import (
	"maps"
	"regexp"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// anthropicModel is what Anthropic documents about one model of its own API.
type anthropicModel struct {
	maxOut     int
	maxOutBeta int // with the anthropic-beta header Output128k (3.7 Sonnet)
	// batchMaxOut is the larger limit a Message Batch created with the
	// anthropic-beta header output300k reaches (batches only).
	batchMaxOut int
	// cacheMin is the minimum cacheable prompt length in tokens; a shorter
	// prefix is processed without caching.
	cacheMin int
	// fixedSampling: the model refuses temperature, top_p and top_k at
	// non-default values, whatever the API version (Opus 4.7 and later).
	fixedSampling bool
	// lifecycle is the stage the provider announced ("": active).
	lifecycle anthropicStage
}

// anthropicStage is a lifecycle stage with its dates (YYYY-MM-DD; retire "": none yet).
type anthropicStage struct{ stage, deprecated, retire string }

// anthropicModels: max output from
// https://platform.claude.com/docs/en/about-claude/models/overview; minimum
// cacheable lengths from https://platform.claude.com/docs/en/build-with-claude/prompt-caching
// ("4096 tokens for Claude Opus 4.6, Claude Opus 4.5 ... 1024 tokens for Claude
// Sonnet 4.5, Claude Opus 4.1, Claude Opus 4, Claude Sonnet 4, and Claude Sonnet
// 3.7 ... 4096 tokens for Claude Haiku 4.5 ... 2048 tokens for Claude Haiku 3.5
// and Claude Haiku 3", as quoted in
// https://github.com/anthropics/anthropic-sdk-python/issues/1194). Lifecycle
// stages as the provider announced them
// (https://platform.claude.com/docs/en/about-claude/model-deprecations, as of
// 2026-11-30): Sonnet 4 and Opus 4 retired on 2026-06-15, Opus 4.1 on
// 2026-08-05, Opus 4.5 deprecated on 2026-11-23 (no retirement date yet).
var anthropicModels = map[string]anthropicModel{
	"claude-3-haiku-20240307":    {maxOut: 4096, cacheMin: 2048},
	"claude-3-5-haiku-20241022":  {maxOut: 8192, cacheMin: 2048},
	"claude-3-5-haiku-latest":    {maxOut: 8192, cacheMin: 2048},
	"claude-3-5-sonnet-20240620": {maxOut: 8192, cacheMin: 1024},
	"claude-3-5-sonnet-20241022": {maxOut: 8192, cacheMin: 1024},
	"claude-3-7-sonnet-20250219": {maxOut: 64000, maxOutBeta: 128000, cacheMin: 1024},
	"claude-3-7-sonnet-latest":   {maxOut: 64000, maxOutBeta: 128000, cacheMin: 1024},
	"claude-sonnet-4-20250514":   {maxOut: 64000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-03-15", "2026-06-15"}},
	"claude-sonnet-4-0":          {maxOut: 64000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-03-15", "2026-06-15"}},
	"claude-opus-4-20250514":     {maxOut: 32000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-03-15", "2026-06-15"}},
	"claude-opus-4-0":            {maxOut: 32000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-03-15", "2026-06-15"}},
	"claude-opus-4-1-20250805":   {maxOut: 32000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-05-05", "2026-08-05"}},
	"claude-opus-4-1":            {maxOut: 32000, cacheMin: 1024, lifecycle: anthropicStage{"retired", "2026-05-05", "2026-08-05"}},
	"claude-sonnet-4-5-20250929": {maxOut: 64000, cacheMin: 1024},
	"claude-sonnet-4-5":          {maxOut: 64000, cacheMin: 1024},
	"claude-haiku-4-5-20251001":  {maxOut: 64000, cacheMin: 4096},
	"claude-haiku-4-5":           {maxOut: 64000, cacheMin: 4096},
	"claude-opus-4-5-20251101":   {maxOut: 64000, cacheMin: 4096, lifecycle: anthropicStage{"deprecated", "2026-11-23", ""}},
	"claude-opus-4-5":            {maxOut: 64000, cacheMin: 4096, lifecycle: anthropicStage{"deprecated", "2026-11-23", ""}},
	// Current models (checked 2026-12-01, corrected 2026-12-03): max output
	// 128K for Opus 4.6 and later and the generation-5 models, and the 300K
	// Message Batches output beta for Opus 4.6, Sonnet 4.6, Opus 4.7, 4.8,
	// Opus 5, 5.5, Sonnet 5, 5.5 and Haiku 5.5 ("Max output (Batch API,
	// beta) 300K tokens" on https://platform.claude.com/docs/en/models/<model>/overview;
	// Opus 4.7's 128K also on its Bedrock model card). Minimum cacheable length 4096 as for Opus 4.6,
	// the stricter reading where not documented. Opus 4.7 and later refuse
	// non-default temperature, top_p and top_k
	// ("What's new in Claude Opus 4.7", as reported in
	// https://www.totalum.app/blog/claude-4-deprecation-migration-2026);
	// the generation-5 models are held to the same rule (stricter reading).
	"claude-opus-4-6":   {maxOut: 128000, cacheMin: 4096, batchMaxOut: 300000},
	"claude-sonnet-4-6": {maxOut: 128000, cacheMin: 4096, batchMaxOut: 300000},
	"claude-opus-4-7":   {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-opus-4-8":   {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-opus-5":     {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-opus-5-5":   {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-sonnet-5":   {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-sonnet-5-5": {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-haiku-5-5":  {maxOut: 128000, cacheMin: 4096, fixedSampling: true, batchMaxOut: 300000},
	"claude-fable-5":    {maxOut: 128000, cacheMin: 4096, fixedSampling: true},
	"claude-fable-5-1":  {maxOut: 128000, cacheMin: 4096, fixedSampling: true},
	"claude-fable-5-2":  {maxOut: 128000, cacheMin: 4096, fixedSampling: true},
}

// output300k is the anthropic-beta header that lifts a Message Batch's
// max_tokens to 300K for the models that allow it (Opus 4.6, Haiku 5.5: "batch
// output up to 300K with the output-300k-2026-03-24 beta header (Message
// Batches only)", https://platform.claude.com/docs/en/about-claude/models/overview
// and https://platform.claude.com/docs/en/models/haiku-5-5/overview, as of 2026-12-01).
const output300k = "output-300k-2026-03-24"

// KnownAnthropicModels lists the ids the simulator holds rules for.
func KnownAnthropicModels() []string { return slices.Sorted(maps.Keys(anthropicModels)) }

// Anthropic Message Batch processing_status values and per-batch limits
// (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing).
const (
	anthropicInProgress  = "in_progress"
	anthropicCanceling   = "canceling"
	anthropicEnded       = "ended"
	anthropicMaxRequests = 100_000
	anthropicMaxBytes    = 256 << 20
)

// customIDPattern is Message Batches' custom_id rule.
// https://docs.anthropic.com/en/api/creating-message-batches
var customIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Inventory lists every batch the simulator has accepted, in creation order.
func (s *AnthropicSim) Inventory() []sim.HeldJob {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]sim.HeldJob, 0, len(s.order))
	for _, b := range s.order {
		out = append(out, sim.HeldJob{Ref: b.id, Status: b.status, Ended: b.status == anthropicEnded, StopRequested: !b.cancelledAt.IsZero()})
	}
	return out
}

// anthropicModal: every model in the Anthropic simulator's table reads images
// and PDFs (https://docs.claude.com/en/docs/about-claude/models/overview).
func anthropicModal(string) sim.Modal { return sim.Modal{Image: true, Document: true} }

var _ sim.Simulator = (*AnthropicSim)(nil)
