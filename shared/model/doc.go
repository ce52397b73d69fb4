// Package model is the model catalog: the one place that holds per-model facts
// (ids, aliases, inference profiles, family, task, batch/on-demand support,
// output and context limits, input modalities, prompt-caching rules, embedding
// limits and prices). Validation, routing, cost estimates, IAM grants and the
// list_models tool all read it, so they cannot disagree about a model.
//
// # Data and sources
//
// The data is catalog.json, embedded in the binary (Default). Figures were
// checked on 2026-11-30 against:
//   - Bedrock prices: https://aws.amazon.com/bedrock/pricing/ (on-demand,
//     batch = 50% of on-demand, prompt-cache write/read). Claude Sonnet 4.5,
//     Haiku 4.5 and Opus 4.5 are listed at their global-profile price;
//     geographic profiles and in-Region endpoints bill 10% more
//     (Model.RegionalPremium, applied by CostVia).
//   - Anthropic API prices: https://platform.claude.com/docs/en/about-claude/pricing
//     and the batch-processing page (batch = 50%, stacking with the caching
//     multipliers: 5-minute cache write 1.25x input, cache read 0.1x input).
//   - Batch support: https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-supported.html
//   - Profiles: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html
//     and the per-model cards (model-card-*.html), which also give context
//     windows and output limits.
//   - Prompt caching: https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html
//   - IAM: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-prereq.html
//     and global-cross-region-inference.html.
//
// Rows added or changed on 2026-12-01 (the current Claude models, Nova 2,
// gpt-oss, Qwen3, DeepSeek, Llama 4, Mistral Large 3, Cohere Embed v4, Nova
// Multimodal Embeddings, and the lifecycle of the retired ones) carry their
// own FactsAsOf/FactsSource and PricesAsOf/PricesSource. Their sources:
//   - Anthropic: the models overview and per-model pages
//     (https://platform.claude.com/docs/en/about-claude/models/overview,
//     .../models/<model>/overview), the pricing page, the model-deprecations
//     page and the release notes (retirements).
//   - Bedrock: the model cards, the model-lifecycle page
//     (https://docs.aws.amazon.com/bedrock/latest/userguide/model-lifecycle.html),
//     the supported-models list, the Converse supported-features table and,
//     for refusals the documentation does not spell out, the recorded
//     answers of the real service in vercel/ai's Bedrock fixtures (Opus 5
//     refusing temperature and top_p).
//
// Where a figure was not found, or sources disagreed, the row takes the
// stricter reading (the smaller limit, no sampling parameter, on demand only,
// unpriced) and its Notes say so. Each model carries PricesAsOf and
// PricesSource (the catalog-level values unless the entry sets its own).
//
// # Lifecycle, sampling and quirks
//
// Lifecycle is the provider's: active, legacy (accepted with a warning on the
// job) or end_of_life (refused at submit naming the date and the successor,
// see Usable). A legacy model whose end-of-life date has come is refused too.
// For Bedrock the dates hold "in most Regions": the account refresh overlays
// what ListFoundationModels says for the deployment's Region. Sampling lists
// the sampling parameters a model accepts (nil: all; empty: none); the
// Anthropic API version's own refusals live in shared/provider/anthropic.
// NoSystemPrompt and Documents describe Converse quirks; BatchMaxOutput a
// larger output limit behind a beta header (Anthropic Message Batches);
// Prices.LongContext a price tier for long prompts, which job-level cost
// estimates do not apply (they cannot see each request's prompt length).
//
// # Operator overrides
//
// Operators add or change models without a code change. FromEnv starts from
// the embedded catalog, merges the file named by MCPBATCH_MODELS_FILE, then
// the inline JSON in MCPBATCH_MODELS_JSON (the infra maps the CDK context key
// "models" to MCPBATCH_MODELS_JSON). An override document is
//
//	{"models": [ {...}, ... ], "remove": ["id", ...]}
//
// An entry whose id (or alias or profile id) is already in the catalog is
// merged into that model with JSON Merge Patch rules (RFC 7396): fields it
// sets replace the old ones, objects such as "prices" and "profiles" merge key
// by key, arrays replace whole, and null deletes a field. An entry with a new
// id is added as a whole and must be complete. "remove" drops models by id.
// The merged catalog is validated like the embedded one.
//
// # Cost and rounding
//
// Cost multiplies each token count by its USD-per-million price. Every part
// (input, output, cache write, cache read) is rounded half away from zero to
// the micro-dollar (1e-6 USD); Total is the sum of the rounded parts, rounded
// again to 1e-6 to drop floating-point noise. Batch basis uses the explicit
// batch prices in the data; there is no implied 50% fallback, so a model
// without a batch price for a used part is reported with Priced=false and the
// missing price names in Missing.
package model
