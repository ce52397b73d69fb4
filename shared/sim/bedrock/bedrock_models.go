package bedrock

// The Bedrock simulators' one table of models: one row per model, holding
// every per-model fact the simulators answer from (runtime rules, modalities,
// Converse rules, the simulated account's listing and quotas, the Price
// List's rows). Every per-model answer reads its row, so two simulators can
// no longer disagree about a model. The facts are copied from AWS
// documentation (sources beside each, checked 2026-11-30 unless dated) and
// deliberately not shared with the product: a simulator that read the
// product's rules could never catch the product getting them wrong. A model
// id missing here is served permissively, with a warning in the log.

import (
	"slices"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// bedrockModel is what the simulators hold about one Bedrock model.
type bedrockModel struct {
	id string
	// fam is the InvokeModel body shape; famUnknown: the runtime holds no
	// documented rules for the model and serves it permissively.
	fam family
	// maxOut is the largest max_tokens / maxTokens / max_gen_len accepted.
	maxOut int
	// maxOutBeta, when set, is the larger limit unlocked by the anthropic_beta
	// flag output128k (Claude 3.7 Sonnet only).
	maxOutBeta int
	// inRegion lists the regions where the base model id may be invoked on
	// demand; nil means only through an inference profile; "*" means every
	// region that offers the model.
	inRegion []string
	// profiles says whether cross-region inference profiles (us., eu., ...) exist.
	profiles bool
	// tiers lists the on-demand service tiers beyond standard the model
	// takes ("flex", "priority"), per the models-and-regions table of
	// https://docs.aws.amazon.com/bedrock/latest/userguide/service-tiers-inference.html
	// (read 2026-12-01).
	tiers []string
	// in and out are the model's input and output modalities (TEXT, IMAGE,
	// DOCUMENT, VIDEO; TEXT, EMBEDDING), per the model cards' "Input
	// modalities" (https://docs.aws.amazon.com/bedrock/latest/userguide/model-cards.html).
	// The account lists them, and the runtime reads an image or document
	// block only when in names it.
	in, out []string
	// noSystem: Converse refuses a system prompt (the "System prompt" column
	// of https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-supported-models-features.html;
	// wording recorded in https://github.com/567-labs/instructor/issues/1753).
	noSystem bool
	// noSampling: the endpoint refuses temperature and top_p at any value
	// (converse_rules.go says where that is documented).
	noSampling bool
	// listed is the simulated account's row (nil: the account does not offer it).
	listed *listing
	// price is its Price List row (nil: not listed there).
	price *simPriceRow
}

// listing is how the simulated account lists a model (account.go): a
// scenario, not a statement about any real account, except for the dates,
// which are the providers' announcements.
type listing struct {
	name, provider string
	// legacy and endOfLife are dates ("": none); a legacy date makes the
	// model LEGACY.
	legacy, endOfLife string
	// noAccess: the model agreement was never accepted.
	noAccess bool
	// geos are the system-defined profiles offered in the Region ("us", "global").
	geos []string
	// batch: batch inference serves the model, with the default quotas.
	batch bool
	// Quota names (see AccountModel).
	quotaName, batchName string
	quotaFirst           bool
}

// Regions a model is documented as served in-Region (on demand with the base id).
var (
	usEastWest = []string{"us-east-1", "us-west-2"}
	usEast     = []string{"us-east-1"}
	usWest     = []string{"us-west-2"}
	everywhere = []string{"*"}
)

// Modalities.
var (
	modText         = []string{"TEXT"}
	modTextImage    = []string{"TEXT", "IMAGE"}
	modTextImageDoc = []string{"TEXT", "IMAGE", "DOCUMENT"}
	modNova         = []string{"TEXT", "IMAGE", "DOCUMENT", "VIDEO"}
	modEmbedding    = []string{"EMBEDDING"}
)

// bedrockCatalog holds every Bedrock model the simulators know.
//
// Profile-only models answer a base-id call with the on-demand ValidationException;
// seen for 3.5 Sonnet v2 (https://github.com/danny-avila/LibreChat/issues/4570),
// 3.5 Haiku (https://github.com/strands-agents/samples/issues/145), 3.7 Sonnet
// (https://github.com/cline/cline/issues/2482), Sonnet 4.5
// (https://github.com/Laisky/one-api/issues/245); the model cards list the
// "Geo inference ID" / "Global inference ID" to use instead
// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-cards.html).
//
// Claude: max output per https://platform.claude.com/docs/en/about-claude/models/overview
// and the Bedrock model cards. Bedrock caps 3.5 Sonnet v1 at 4096
// (https://github.com/boto/boto3/issues/4279); v1 is refused on demand in
// us-east-2 (https://github.com/aws-samples/bedrock-access-gateway/issues/73).
// Claude reads text, images and documents on Bedrock (Claude 3 Haiku reads
// documents through Converse: AWS's own example sends it a PDF,
// https://docs.aws.amazon.com/bedrock/latest/userguide/bedrock-runtime_example_bedrock-runtime_DocumentUnderstanding_AnthropicClaude_section.html),
// except Claude 3.5 Haiku, text only: its model card marks Image input
// unsupported (https://docs.aws.amazon.com/bedrock/latest/userguide/model-card-anthropic-claude-3-5-haiku.html,
// read 2026-12-03). Claude 4.6 and later read text, images and documents
// (Anthropic models overview: "All current models support text and image
// input"; PDF support per the Bedrock model cards, checked 2026-12-01).
//
// Lifecycle dates: Claude 3.7 Sonnet's end of life on Bedrock 2026-04-28,
// Claude 3.5 Haiku's 2026-06-19 (https://docs.aws.amazon.com/bedrock/latest/userguide/model-lifecycle.html);
// Claude Sonnet 4 legacy 2026-04-14, end of life 2026-10-14, Claude Opus 4.1
// legacy 2026-07-08, end of life 2027-01-08, Claude Sonnet 4.5 legacy
// 2026-10-08, end of life 2027-04-08 (model-lifecycle-legacy.html, autumn
// 2026). The missing access to Claude Opus 4.1 and Writer Palmyra X5 (a
// model the product's embedded catalog lacks) are the scenario's own, so
// every rule of the product's merge shows in make dev.
var bedrockCatalog = []bedrockModel{
	{id: "anthropic.claude-sonnet-4-5-20250929-v1:0", fam: famClaude, maxOut: 64000, profiles: true, in: modTextImageDoc, out: modText,
		listed: &listing{name: "Claude Sonnet 4.5", provider: "Anthropic", geos: []string{"us", "global"}, batch: true, legacy: "2026-10-08", endOfLife: "2027-04-08"},
		price:  &simPriceRow{fm: true, global: true, name: "Claude Sonnet 4.5", in: 3, out: 15, bin: 1.5, bout: 7.5, cacheRead: 0.3, cacheW5m: 3.75, cacheW1h: 6}},
	// "Max output tokens: 64K" (Bedrock model card, Claude Haiku 4.5).
	{id: "anthropic.claude-haiku-4-5-20251001-v1:0", fam: famClaude, maxOut: 64000, profiles: true, in: modTextImageDoc, out: modText,
		listed: &listing{name: "Claude Haiku 4.5", provider: "Anthropic", geos: []string{"us", "global"}, batch: true},
		price:  &simPriceRow{fm: true, global: true, name: "Claude Haiku 4.5", in: 1, out: 5, bin: 0.5, bout: 2.5, cacheRead: 0.1, cacheW5m: 1.25, cacheW1h: 2}},
	{id: "anthropic.claude-opus-4-5-20251101-v1:0", fam: famClaude, maxOut: 64000, profiles: true, in: modTextImageDoc, out: modText,
		listed: &listing{name: "Claude Opus 4.5", provider: "Anthropic", geos: []string{"us", "global"}, batch: true},
		price:  &simPriceRow{fm: true, global: true, name: "Claude Opus 4.5", in: 5, out: 25, bin: 2.5, bout: 12.5, cacheRead: 0.5, cacheW5m: 6.25, cacheW1h: 10}},
	// Claude 4.6 and later: ids without a date suffix, served on demand
	// through profiles only; max output from the Anthropic models overview
	// and the Bedrock model cards (Haiku 5.5: 128K), 64K where not found.
	{id: "anthropic.claude-sonnet-4-6", fam: famClaude, maxOut: 64000, profiles: true, in: modTextImageDoc, out: modText,
		listed: &listing{name: "Claude Sonnet 4.6", provider: "Anthropic", geos: []string{"us", "global"}, batch: true},
		price:  &simPriceRow{fm: true, global: true, name: "Claude Sonnet 4.6", in: 3, out: 15, bin: 1.5, bout: 7.5, cacheRead: 0.3, cacheW5m: 3.75, cacheW1h: 6}},
	{id: "anthropic.claude-3-5-haiku-20241022-v1:0", fam: famClaude, maxOut: 8192, profiles: true, in: modText, out: modText,
		listed: &listing{name: "Claude 3.5 Haiku", provider: "Anthropic", geos: []string{"us"}, batch: true, legacy: "2025-12-19", endOfLife: "2026-06-19"}},
	{id: "anthropic.claude-3-haiku-20240307-v1:0", fam: famClaude, maxOut: 4096, inRegion: usEastWest, profiles: true, in: modTextImageDoc, out: modText,
		listed: &listing{name: "Claude 3 Haiku", provider: "Anthropic", geos: []string{"us"}, batch: true, quotaFirst: true},
		// Older Claude models are listed under AmazonBedrock, by the model attribute.
		price: &simPriceRow{name: "Claude 3 Haiku", stem: "Claude3Haiku", provider: "Anthropic", in: 0.25, out: 1.25, bin: 0.125, bout: 0.625}},
	{id: "anthropic.claude-sonnet-4-20250514-v1:0", fam: famClaude, maxOut: 64000, profiles: true, in: modTextImageDoc, out: modText,
		listed: &listing{name: "Claude Sonnet 4", provider: "Anthropic", geos: []string{"us", "global"}, batch: true, legacy: "2026-04-14", endOfLife: "2026-10-14"}},
	{id: "anthropic.claude-3-7-sonnet-20250219-v1:0", fam: famClaude, maxOut: 64000, maxOutBeta: 128000, profiles: true, in: modTextImageDoc, out: modText,
		listed: &listing{name: "Claude 3.7 Sonnet", provider: "Anthropic", geos: []string{"us"}, batch: true, legacy: "2025-10-28", endOfLife: "2026-04-28"}},
	{id: "anthropic.claude-opus-4-1-20250805-v1:0", fam: famClaude, maxOut: 32000, profiles: true, in: modTextImageDoc, out: modText,
		listed: &listing{name: "Claude Opus 4.1", provider: "Anthropic", geos: []string{"us"}, batch: true, noAccess: true, legacy: "2026-07-08", endOfLife: "2027-01-08"}},
	{id: "anthropic.claude-3-5-sonnet-20240620-v1:0", fam: famClaude, maxOut: 4096, inRegion: usEastWest, profiles: true, in: modTextImageDoc, out: modText},
	{id: "anthropic.claude-3-5-sonnet-20241022-v2:0", fam: famClaude, maxOut: 8192, profiles: true, in: modTextImageDoc, out: modText},
	{id: "anthropic.claude-opus-4-20250514-v1:0", fam: famClaude, maxOut: 32000, profiles: true, in: modTextImageDoc, out: modText},
	{id: "anthropic.claude-opus-4-6-v1", fam: famClaude, maxOut: 128000, profiles: true, in: modTextImageDoc, out: modText,
		price: &simPriceRow{fm: true, global: true, name: "Claude Opus 4.6", in: 5, out: 25, bin: 2.5, bout: 12.5, cacheRead: 0.5, cacheW5m: 6.25, cacheW1h: 10}},
	{id: "anthropic.claude-opus-4-7", fam: famClaude, maxOut: 128000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true}, // "Max output tokens: 128K" (Bedrock model card)
	{id: "anthropic.claude-opus-4-8", fam: famClaude, maxOut: 64000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true},
	{id: "anthropic.claude-opus-5", fam: famClaude, maxOut: 128000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true},
	{id: "anthropic.claude-opus-5-5", fam: famClaude, maxOut: 128000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true},
	{id: "anthropic.claude-sonnet-5", fam: famClaude, maxOut: 128000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true},
	{id: "anthropic.claude-sonnet-5-5", fam: famClaude, maxOut: 128000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true},
	{id: "anthropic.claude-haiku-5-5", fam: famClaude, maxOut: 128000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true},
	{id: "anthropic.claude-fable-5", fam: famClaude, maxOut: 64000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true},
	// Anthropic's model page: Bedrock id, 128K output.
	{id: "anthropic.claude-fable-5-1", fam: famClaude, maxOut: 128000, profiles: true, in: modTextImageDoc, out: modText, noSampling: true},

	// Nova understanding models: maxTokens "greater than 0, equal or less than 5k"
	// (https://docs.aws.amazon.com/nova/latest/userguide/complete-request-schema.html);
	// the Nova Lite card lists amazon.nova-lite-v1:0 at the in-Region endpoint and
	// us./eu. geo profiles (https://docs.aws.amazon.com/bedrock/latest/userguide/model-card-amazon-nova-lite.html).
	// Nova Micro reads text only; Lite, Pro and 2 Lite read images, documents
	// and video (https://docs.aws.amazon.com/nova/latest/userguide/modalities.html;
	// Nova 2 Lite's model card and https://docs.aws.amazon.com/nova/latest/nova2-userguide/using-multimodal-models.html).
	{id: "amazon.nova-micro-v1:0", fam: famNova, maxOut: 5000, inRegion: usEast, profiles: true, in: modText, out: modText,
		listed: &listing{name: "Nova Micro", provider: "Amazon", geos: []string{"us"}, batch: true},
		price:  &simPriceRow{name: "Nova Micro", stem: "NovaMicro", provider: "Amazon", in: 0.035, out: 0.14, bin: 0.0175, bout: 0.07, cacheRead: 0.00875}},
	{id: "amazon.nova-lite-v1:0", fam: famNova, maxOut: 5000, inRegion: usEast, profiles: true, in: modNova, out: modText,
		listed: &listing{name: "Nova Lite", provider: "Amazon", geos: []string{"us"}, batch: true, batchName: "Nova Lite V1", quotaFirst: true},
		price:  &simPriceRow{name: "Nova Lite", stem: "NovaLite", provider: "Amazon", in: 0.06, out: 0.24, bin: 0.03, bout: 0.12, cacheRead: 0.015}},
	// Nova 2 Lite: 64K output (model card; 65K elsewhere, stricter reading),
	// cross-Region profiles only; flex and priority per AWS's IDP sample
	// (https://aws-solutions-library-samples.github.io/accelerated-intelligent-document-processing-on-aws/service-tiers, read 2026-12-01).
	{id: "amazon.nova-2-lite-v1:0", fam: famNova, maxOut: 64000, profiles: true, tiers: []string{"flex", "priority"}, in: modNova, out: modText,
		listed: &listing{name: "Nova 2 Lite", provider: "Amazon", geos: []string{"us", "global"}, batch: true},
		price:  &simPriceRow{name: "Nova 2.0 Lite", stem: "Nova2.0Lite", provider: "Amazon", crossGlobal: true, in: 0.3, out: 2.5, bin: 0.15, bout: 1.25, cacheRead: 0.075}},
	{id: "amazon.nova-pro-v1:0", fam: famNova, maxOut: 5000, inRegion: usEast, profiles: true, tiers: []string{"flex", "priority"}, in: modNova, out: modText,
		listed: &listing{name: "Nova Pro", provider: "Amazon", geos: []string{"us"}, batch: true},
		price:  &simPriceRow{name: "Nova Pro", stem: "NovaPro", provider: "Amazon", in: 0.8, out: 3.2, bin: 0.4, bout: 1.6, cacheRead: 0.2, flexIn: 0.4, flexOut: 1.6, priorityIn: 1.4, priorityOut: 5.6}},

	// Llama: max_gen_len at most 2048
	// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-meta.html;
	// "exceeds the model limit of 2048" for Llama 3.1 70B,
	// https://github.com/aws-samples/bedrock-access-gateway/issues/41). Llama 3.2
	// and 3.3 are served through inference profiles only (geofenced, same
	// page); Llama 3.2 11B and 90B read images (models-supported.html).
	{id: "meta.llama3-3-70b-instruct-v1:0", fam: famLlama, maxOut: 2048, profiles: true, in: modText, out: modText,
		listed: &listing{name: "Llama 3.3 70B Instruct", provider: "Meta", geos: []string{"us"}, batch: true},
		price: &simPriceRow{name: "Llama 3.3 70B", stem: "Llama3.3-70B", provider: "Meta", // stem by analogy
			in: 0.72, out: 0.72, bin: 0.36, bout: 0.36}},
	{id: "meta.llama3-8b-instruct-v1:0", fam: famLlama, maxOut: 2048, inRegion: usEastWest, in: modText, out: modText},
	{id: "meta.llama3-70b-instruct-v1:0", fam: famLlama, maxOut: 2048, inRegion: usEastWest, in: modText, out: modText},
	{id: "meta.llama3-1-8b-instruct-v1:0", fam: famLlama, maxOut: 2048, inRegion: usWest, profiles: true, in: modText, out: modText},
	{id: "meta.llama3-1-70b-instruct-v1:0", fam: famLlama, maxOut: 2048, inRegion: usWest, profiles: true, in: modText, out: modText},
	{id: "meta.llama3-2-1b-instruct-v1:0", fam: famLlama, maxOut: 2048, profiles: true, in: modText, out: modText},
	{id: "meta.llama3-2-3b-instruct-v1:0", fam: famLlama, maxOut: 2048, profiles: true, in: modText, out: modText},
	{id: "meta.llama3-2-11b-instruct-v1:0", fam: famLlama, maxOut: 2048, profiles: true, in: modTextImage, out: modText},
	{id: "meta.llama3-2-90b-instruct-v1:0", fam: famLlama, maxOut: 2048, profiles: true, in: modTextImage, out: modText},

	// Open-weight models batch inference serves (their batch quotas are
	// listed under their own short names); the runtime holds no rules for
	// them.
	{id: "openai.gpt-oss-120b-1:0", inRegion: everywhere, in: modText, out: modText,
		listed: &listing{name: "gpt-oss-120b", provider: "OpenAI", batch: true, quotaName: "GPT OSS 120B", batchName: "OpenAI GPT OSS 120b"},
		price:  &simPriceRow{name: "gpt-oss-120b", stem: "gpt-oss-120b", provider: "OpenAI", mantle: "openai.gpt-oss-120b", in: 0.15, out: 0.6, bin: 0.075, bout: 0.3, flexIn: 0.075, flexOut: 0.3, priorityIn: 0.2625, priorityOut: 1.05}},
	{id: "qwen.qwen3-235b-a22b-2507-v1:0", inRegion: everywhere, in: modText, out: modText,
		listed: &listing{name: "Qwen3 235B A22B 2507", provider: "Qwen", batch: true, quotaName: "Qwen3 235B a22b 2507 V1", batchName: "Qwen3 235B"},
		price: &simPriceRow{name: "Qwen3 235B A22B 2507", stem: "Qwen3-235B-A22B-2507", provider: "Qwen", // stem by analogy
			in: 0.22, out: 0.88, bin: 0.11, bout: 0.44}},
	{id: "deepseek.v3-v1:0", inRegion: everywhere, in: modText, out: modText,
		listed: &listing{name: "DeepSeek-V3.1", provider: "DeepSeek", batch: true, quotaName: "DeepSeek v3", batchName: "DeepSeek v3"}},
	{id: "openai.gpt-oss-20b-1:0", inRegion: everywhere, in: modText, out: modText,
		listed: &listing{name: "gpt-oss-20b", provider: "OpenAI", batch: true, quotaName: "GPT OSS 20B", batchName: "OpenAI GPT OSS 20b"}},

	// Mistral text completion: max_tokens maximum 8,192 (7B, Large, Small) and
	// 4,096 (Mixtral 8x7B)
	// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-mistral-text-completion.html);
	// 7B and Mixtral take no system prompt on Converse (noSystem).
	{id: "mistral.mistral-small-2402-v1:0", fam: famMistral, maxOut: 8192, inRegion: usEast, in: modText, out: modText,
		listed: &listing{name: "Mistral Small (24.02)", provider: "Mistral AI", batch: true, batchName: "Mistral Small"}},
	{id: "mistral.mistral-7b-instruct-v0:2", fam: famMistral, maxOut: 8192, inRegion: usEastWest, in: modText, out: modText, noSystem: true,
		listed: &listing{name: "Mistral 7B Instruct", provider: "Mistral AI"},
		price: &simPriceRow{name: "Mistral 7B Instruct", stem: "Mistral7B-Instruct", provider: "Mistral", // stem by analogy
			in: 0.15, out: 0.2}},
	{id: "mistral.mixtral-8x7b-instruct-v0:1", fam: famMistral, maxOut: 4096, inRegion: usEastWest, in: modText, out: modText, noSystem: true},
	{id: "mistral.mistral-large-2402-v1:0", fam: famMistral, maxOut: 8192, inRegion: usEastWest, in: modText, out: modText},

	// Embeddings, served in-Region wherever offered.
	// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html
	{id: "amazon.titan-embed-text-v2:0", fam: famTitanEmbed, inRegion: everywhere, in: modText, out: modEmbedding,
		listed: &listing{name: "Titan Text Embeddings V2", provider: "Amazon", batch: true},
		price:  &simPriceRow{name: "TitanEmbeddingsV2-Text-input", stem: "TitanEmbeddingV2-Text", provider: "Amazon", titan: true, in: 0.02, bin: 0.01}},
	// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html
	{id: "cohere.embed-english-v3", fam: famCohereEmbed, inRegion: everywhere, in: modText, out: modEmbedding,
		listed: &listing{name: "Embed English", provider: "Cohere"},
		price: &simPriceRow{name: "Embed English", stem: "Embed-English", provider: "Cohere", // stem by analogy
			in: 0.1}},
	{id: "cohere.embed-multilingual-v3", fam: famCohereEmbed, inRegion: everywhere, in: modText, out: modEmbedding},
	// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed-v4.html
	{id: "cohere.embed-v4:0", fam: famCohereEmbedV4, inRegion: everywhere, in: modTextImage, out: modEmbedding},
	// https://docs.aws.amazon.com/nova/latest/userguide/embeddings-schema.html
	{id: "amazon.nova-2-multimodal-embeddings-v1:0", fam: famNovaEmbed, inRegion: everywhere, in: modNova, out: modEmbedding},

	// Not in the product's embedded catalog.
	{id: "writer.palmyra-x5-v1:0", profiles: true, in: modText, out: modText,
		listed: &listing{name: "Palmyra X5", provider: "Writer", geos: []string{"us"}, batch: true}},
}

// bedrockByID indexes bedrockCatalog.
var bedrockByID = func() map[string]*bedrockModel {
	m := make(map[string]*bedrockModel, len(bedrockCatalog))
	for i := range bedrockCatalog {
		m[bedrockCatalog[i].id] = &bedrockCatalog[i]
	}
	return m
}()

// bedrockRules is the runtime's row for a base model id: ok only when the
// simulators hold documented rules for it.
func bedrockRules(base string) (bedrockModel, bool) {
	m, ok := bedrockByID[base]
	if !ok || m.fam == famUnknown {
		return bedrockModel{}, false
	}
	return *m, true
}

// reads says which non-text blocks the model reads.
func (m bedrockModel) reads() sim.Modal {
	return sim.Modal{Image: slices.Contains(m.in, "IMAGE"), Document: slices.Contains(m.in, "DOCUMENT")}
}

// inferenceTypes are ListFoundationModels' inferenceTypesSupported in region:
// ON_DEMAND where the base id is served in-Region, INFERENCE_PROFILE where
// profiles exist.
func (m bedrockModel) inferenceTypes(region string) []string {
	var out []string
	if slices.Contains(m.inRegion, "*") || slices.Contains(m.inRegion, region) {
		out = append(out, "ON_DEMAND")
	}
	if m.profiles {
		out = append(out, "INFERENCE_PROFILE")
	}
	return out
}

// accountModel is the account's row for a listed model in region.
func (m bedrockModel) accountModel(region string) AccountModel {
	l := m.listed
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	a := AccountModel{ID: m.id, Name: l.name, Provider: l.provider, Status: "ACTIVE", InferenceTypes: m.inferenceTypes(region),
		Input: slices.Clone(m.in), Output: slices.Clone(m.out), Authorized: !l.noAccess, Agreement: "AVAILABLE",
		Profiles: slices.Clone(l.geos), QuotaName: l.quotaName, BatchName: l.batchName, QuotaModelFirst: l.quotaFirst}
	if l.legacy != "" {
		a.Status, a.Legacy, a.EndOfLife = "LEGACY", d(l.legacy), d(l.endOfLife)
	}
	if l.noAccess {
		a.Agreement = "NOT_AVAILABLE"
	}
	if l.batch {
		a.Batch = defaultBatch()
	}
	return a
}
