package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// PriceListSim simulates the AWS Price List Query API (AWS JSON 1.1, target
// AWSPriceListService.GetProducts) over its own table of Bedrock products:
// service codes AmazonBedrock (the model in the model / titanModel
// attribute, prices per 1K tokens) and AmazonBedrockFoundationModels (the
// Marketplace models by servicename "<name> (Amazon Bedrock Edition)", prices
// per "1M tokens"), each product a document shaped as the
// service's (FormatVersion aws_v1). Filters of type TERM_MATCH select on a
// product attribute; NextToken/MaxResults page. Request rules follow the
// GetProducts reference
// (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html):
// ServiceCode required, MaxResults 1..100, FormatVersion aws_v1.
type PriceListSim struct {
	// Products are the documents served; nil: DefaultPriceList.
	Products []PriceProduct
	Log      *slog.Logger
	http     sim.Listener
	mu       sync.Mutex
	calls    int
}

// PriceProduct is one product of the simulated Price List.
type PriceProduct struct {
	ServiceCode string
	// Attributes are the product's attributes (usagetype, regionCode, ...).
	Attributes map[string]string
	// Unit, Description and USD are its one on-demand price dimension.
	Unit, Description, USD string
	// EffectiveDate is the term's effectiveDate (RFC 3339).
	EffectiveDate string
	doc           string
}

// Service codes the simulated Price List holds.
const (
	priceServiceBedrock = "AmazonBedrock"
	priceServiceFM      = "AmazonBedrockFoundationModels"
)

// simPriceEffective is the simulated terms' effective date.
const simPriceEffective = "2026-11-01T00:00:00Z"

// usagePrefix is the usage-type prefix of a Region in the simulated table
// (the Price List's convention: USE1 for us-east-1, USW2 for us-west-2).
var usagePrefix = map[string]string{"us-east-1": "USE1", "us-west-2": "USW2"}

// regionLocation is a Region's location attribute in the Price List
// ("US East (N. Virginia)", as the verbatim Claude 2.0 document of
// aws/aws-cli#9567 has it; locationType "AWS Region").
var regionLocation = map[string]string{"us-east-1": "US East (N. Virginia)", "us-west-2": "US West (Oregon)"}

// simPriceRow is a model's line of the simulator's own price table (the
// price of its row in bedrock_models.go, or of unlistedPrices): its Price
// List name and prices per million tokens (0: not listed). The figures are the
// simulator's, modelled on the public Bedrock pricing page (2026); the
// Marketplace models list a global row and a geographic row 10% above it.
// Names, stems and row shapes follow real Price List documents and usage
// types public readers quote (collected with their sources in the product's
// shared/pricing/testdata/SOURCES.md, 2026-12-03); a stem marked "by
// analogy" is the simulator's guess in the observed style.
type simPriceRow struct {
	fm     bool // AmazonBedrockFoundationModels (else AmazonBedrock)
	global bool // the Marketplace model has global rows
	// snake: the Marketplace model's usage types are snake_case
	// ("input_tokens_global_standard", "Input Tokens - Standard, Global"),
	// as from Claude Opus 4.7 on.
	snake bool
	// name is the model as the Price List writes it: the servicename's stem
	// on AmazonBedrockFoundationModels, the model / titanModel attribute on
	// AmazonBedrock ("Nova 2.0 Lite", "TitanEmbeddingsV2-Text-input").
	name  string
	titan bool // the name is in titanModel
	// stem is the AmazonBedrock usage type's model part ("NovaLite",
	// "Nova2.0Lite", "Qwen3-32B"); "": the name without spaces.
	stem     string
	provider string // the AmazonBedrock provider attribute
	// mantle is the model id of the model's "mantle" rows
	// ("USE1-openai.gpt-oss-120b-mantle-input-tokens-standard"): twins of
	// the plain rows at the same price, with service_tier and no feature.
	mantle string
	// crossGlobal: the AmazonBedrock rows are also listed for the global
	// profile ("USE1-Nova2.0Lite-output-tokens-cross-region-global-batch"),
	// at the in-Region price here.
	crossGlobal bool
	// Prices per million tokens.
	in, out, bin, bout            float64
	cacheRead, cacheW5m, cacheW1h float64
	flexIn, flexOut               float64
	priorityIn, priorityOut       float64
	longIn, longOut               float64 // long context (the snake_case Marketplace rows)
}

// unlistedPrices are Price List rows of models the simulated account does
// not offer: the Price List lists a Region's models whatever an account
// may call (the reader must leave them unmatched, not misprice them).
var unlistedPrices = []simPriceRow{
	// snake_case rows: no batch rows are quoted in that style, so none are listed.
	{fm: true, global: true, snake: true, name: "Claude Opus 4.7", in: 5, out: 25, cacheRead: 0.5, cacheW5m: 6.25, cacheW1h: 10, longIn: 10, longOut: 37.5},
}

// DefaultPriceList is the simulated Price List of us-east-1 and us-west-2
// (the same figures; the Region filter tells them apart).
func DefaultPriceList() []PriceProduct {
	var out []PriceProduct
	for _, region := range []string{"us-east-1", "us-west-2"} {
		for _, m := range bedrockCatalog {
			if m.price != nil {
				out = append(out, m.price.products(region)...)
			}
		}
		for _, r := range unlistedPrices {
			out = append(out, r.products(region)...)
		}
	}
	return out
}

// products renders a row as the Price List lists it in region.
func (r simPriceRow) products(region string) []PriceProduct {
	if r.fm {
		return r.marketplaceProducts(region)
	}
	return r.bedrockProducts(region)
}

// marketplaceProducts are an AmazonBedrockFoundationModels model's rows:
// attributes exactly location, locationType, operation (empty), regionCode,
// servicename and usagetype, prices per "1M tokens" (the offer files of
// September–October 2026).
func (r simPriceRow) marketplaceProducts(region string) []PriceProduct {
	pre := usagePrefix[region]
	var out []PriceProduct
	row := func(usage, desc, unit string, usd float64) {
		out = append(out, PriceProduct{ServiceCode: priceServiceFM, Unit: unit, USD: usd10(usd),
			Description: "AWS Marketplace software usage|" + region + "|" + desc,
			Attributes: map[string]string{"servicename": r.name + " (Amazon Bedrock Edition)", "regionCode": region,
				"location": regionLocation[region], "locationType": "AWS Region", "operation": "",
				"usagetype": pre + "-MP:" + pre + "_" + usage + "-Units"}})
	}
	// add lists a price in each scope: the geographic rows ("… Regional
	// CRIS") bill 10% over the global ones where the model has both.
	add := func(usage, desc string, usd float64) {
		if usd == 0 {
			return
		}
		for _, global := range []bool{false, true} {
			if global && !r.global {
				continue
			}
			price := usd
			if r.global && !global {
				price = usd * 1.1
			}
			switch {
			case r.snake && global: // "input_tokens_global_standard", "Input Tokens - Standard, Global"
				row(usage+"_global_standard", desc+" - Standard, Global", "1M tokens", price)
			case r.snake:
				row(usage+"_standard", desc+" - Standard", "1M tokens", price)
			case global: // "InputTokenCount_Global(_Batch)", "Million Input Tokens Global"
				base, batch := strings.CutSuffix(usage, "_Batch")
				ut := base + "_Global"
				if batch {
					ut += "_Batch"
				}
				row(ut, desc+" Global", "1M tokens", price)
			default:
				row(usage, desc+" Regional CRIS", "1M tokens", price)
			}
		}
	}
	if r.snake {
		add("input_tokens", "Input Tokens", r.in)
		add("output_tokens", "Output Tokens", r.out)
		add("cache_read_tokens", "Cache Read Tokens", r.cacheRead)
		add("cache_write_tokens", "Cache Write Tokens", r.cacheW5m)
		add("cache_write_tokens_1h", "Cache Write Tokens 1h", r.cacheW1h)
		add("input_tokens_long_ctx", "Input Tokens Long Context", r.longIn)
		add("output_tokens_long_ctx", "Output Tokens Long Context", r.longOut)
	} else {
		add("InputTokenCount", "Million Input Tokens", r.in)
		add("OutputTokenCount", "Million Response Tokens", r.out)
		add("InputTokenCount_Batch", "Million Batch Input Tokens", r.bin)
		add("OutputTokenCount_Batch", "Million Batch Response Tokens", r.bout)
		add("CacheReadInputTokenCount", "Million Cache Read Input Tokens", r.cacheRead)
		add("CacheWriteInputTokenCount", "Million Cache Write Input Tokens", r.cacheW5m)
		add("CacheWrite1hInputTokenCount", "Million Cache Write 1h Input Tokens", r.cacheW1h)
	}
	// Provisioned throughput: listed, and not an inference price.
	row("Reserved_1Month_InputTPM_Geo", "Reserved 1 Month Input TPM Geo", "1M TPM Hour", 0.198)
	return out
}

// bedrockProducts are an AmazonBedrock model's rows, priced per "1K tokens",
// with the attributes and description of the verbatim Claude 2.0 document
// ("$0.00800 per 1K tokens for Claude2.0-input-tokens inUS East (N.
// Virginia)", the missing space included).
func (r simPriceRow) bedrockProducts(region string) []PriceProduct {
	pre := usagePrefix[region]
	key := "model"
	if r.titan {
		key = "titanModel"
	}
	stem := r.stem
	if stem == "" {
		stem = strings.ReplaceAll(r.name, " ", "")
	}
	var out []PriceProduct
	// row lists one product; feature "" leaves the attribute out (the
	// mantle rows have none), tier "" leaves out service_tier.
	row := func(usage, inference, feature, tier string, usd float64) {
		attrs := map[string]string{key: r.name, "regionCode": region, "usagetype": pre + "-" + usage,
			"inferenceType": inference, "servicecode": priceServiceBedrock, "servicename": "Amazon Bedrock",
			"provider": r.provider, "location": regionLocation[region], "locationType": "AWS Region", "operation": ""}
		if feature != "" {
			attrs["feature"] = feature
		}
		if tier != "" {
			attrs["service_tier"] = tier
		}
		out = append(out, PriceProduct{ServiceCode: priceServiceBedrock, Unit: "1K tokens", USD: usd10(usd / 1000),
			Description: fmt.Sprintf("$%s per 1K tokens for %s in%s", per1K(usd/1000), usage, regionLocation[region]),
			Attributes:  attrs})
	}
	add := func(suffix, inference, feature string, usd float64) {
		if usd == 0 {
			return
		}
		row(stem+"-"+suffix, inference, feature, "", usd)
		if r.crossGlobal && !strings.Contains(suffix, "custom") {
			// "-cross-region-global" goes before a "-batch" ending.
			base, batch := strings.CutSuffix(suffix, "-batch")
			g := base + "-cross-region-global"
			if batch {
				g += "-batch"
			}
			row(stem+"-"+g, inference, feature, "", usd)
		}
	}
	add("input-tokens", "Input tokens", "On-demand Inference", r.in)
	add("output-tokens", "Output tokens", "On-demand Inference", r.out)
	add("input-tokens-batch", "Input tokens", "Batch Inference", r.bin)
	add("output-tokens-batch", "Output tokens", "Batch Inference", r.bout)
	add("cache-read-input-token-count", "Prompt cache read input tokens", "On-demand Inference", r.cacheRead)
	add("input-tokens-flex", "Input tokens flex", "On-demand Inference", r.flexIn)
	add("output-tokens-flex", "Output tokens flex", "On-demand Inference", r.flexOut)
	add("input-tokens-priority", "Input tokens priority", "On-demand Inference", r.priorityIn)
	add("output-tokens-priority", "Output tokens priority", "On-demand Inference", r.priorityOut)
	// A fine-tuned model's rate: a product of its own, not the base model's price.
	add("input-tokens-custom-model", "Input tokens", "Custom Model Import", r.in)
	if r.mantle != "" {
		// The mantle twins, as GLM 5's and Qwen3 32B's are listed.
		m := r.mantle + "-mantle-"
		for _, t := range []struct {
			suffix, inference, tier string
			usd                     float64
		}{
			{"input-tokens-standard", "Input tokens", "standard", r.in},
			{"output-tokens-standard", "Output tokens", "standard", r.out},
			{"input-tokens-flex", "Input tokens flex", "flex", r.flexIn},
			{"output-tokens-flex", "Output tokens flex", "flex", r.flexOut},
			{"input-tokens-priority", "Input tokens priority", "priority", r.priorityIn},
			{"output-tokens-priority", "Output tokens priority", "priority", r.priorityOut},
			{"input-tokens-batch", "input tokens batch", "", r.bin},
			{"output-tokens-batch", "output tokens batch", "", r.bout},
		} {
			if t.usd != 0 {
				row(m+t.suffix, t.inference, "", t.tier, t.usd)
			}
		}
	}
	return out
}

// per1K renders a 1K-token price as the descriptions do: five decimals
// ("$0.00800"), more when the price needs them (up to the ten of the price
// itself, which also drops the float noise of a division).
func per1K(v float64) string {
	s := strings.TrimRight(usd10(v), "0")
	if d := len(s) - strings.IndexByte(s, '.') - 1; d < 5 {
		s += strings.Repeat("0", 5-d)
	}
	return s
}

// usd10 renders a price as the Price List does: ten decimals.
func usd10(v float64) string { return strconv.FormatFloat(v, 'f', 10, 64) }

// SyntheticPriceList is a Price List of n products for benchmarks: for each
// model of SyntheticAccount(models) ("Sim Model 000", ...) the products of a
// Marketplace row, and AmazonBedrock products of other models (other
// Regions too) up to n.
func SyntheticPriceList(n, models int) []PriceProduct {
	var out []PriceProduct
	for i := 0; i < models && len(out) < n; i++ {
		r := simPriceRow{fm: true, global: true, name: fmt.Sprintf("Sim Model %03d", i), in: 1 + float64(i%7), out: 5 + float64(i%7),
			bin: 0.5, bout: 2.5, cacheRead: 0.1, cacheW5m: 1.25, cacheW1h: 2}
		out = append(out, r.products("us-east-1")...)
	}
	for i := 0; len(out) < n; i++ {
		region := "us-east-1"
		if i%2 == 1 {
			region = "us-west-2"
		}
		r := simPriceRow{name: fmt.Sprintf("Other Model %04d", i), in: 0.1, out: 0.4, bin: 0.05, bout: 0.2, cacheRead: 0.01}
		out = append(out, r.products(region)...)
	}
	return out[:n]
}

// Listen serves the simulator on addr until Close and returns its base URL.
func (p *PriceListSim) Listen(addr string) (string, error) {
	log := p.Log
	if log == nil {
		log = slog.Default()
	}
	p.mu.Lock()
	if p.Products == nil {
		p.Products = DefaultPriceList()
	}
	p.mu.Unlock()
	return p.http.Listen(addr, "price list sim", p, log, "Price List SIMULATOR listening: Bedrock products of its own table")
}

// Close stops the listener.
func (p *PriceListSim) Close() error { return p.http.Close() }

// Settle: the Price List answers every call before returning (Simulator).
func (p *PriceListSim) Settle(ctx context.Context) error { return sim.Settled(ctx) }

// Calls counts the GetProducts calls answered.
func (p *PriceListSim) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// maxPriceResults is GetProducts' MaxResults range maximum (and default).
const maxPriceResults = 100

func (p *PriceListSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, done := sim.BodyFirst(w, r)
	defer done()
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "AWSPriceListService.GetProducts" {
		sim.JSONError(w, "InvalidParameterException", "SIMULATED: the Price List simulator implements GetProducts only")
		return
	}
	var in struct {
		ServiceCode   string
		FormatVersion string
		NextToken     string
		MaxResults    *int
		Filters       []struct{ Type, Field, Value string }
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
		sim.JSONError(w, "InvalidParameterException", "SIMULATED: the request body is not JSON")
		return
	}
	switch {
	case in.ServiceCode == "":
		sim.JSONError(w, "InvalidParameterException", "SIMULATED: ServiceCode is required")
		return
	case in.FormatVersion != "" && in.FormatVersion != "aws_v1":
		sim.JSONError(w, "InvalidParameterException", "SIMULATED: FormatVersion must be aws_v1")
		return
	}
	limit := maxPriceResults
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > maxPriceResults {
			sim.JSONError(w, "InvalidParameterException", "SIMULATED: MaxResults must be 1..100")
			return
		}
		limit = *in.MaxResults
	}
	for _, f := range in.Filters {
		if f.Type != "TERM_MATCH" {
			sim.JSONError(w, "InvalidParameterException", "SIMULATED: the simulator implements filters of type TERM_MATCH only, not "+f.Type)
			return
		}
		if f.Field == "" {
			sim.JSONError(w, "InvalidParameterException", "SIMULATED: a filter's Field is required")
			return
		}
	}
	p.mu.Lock()
	p.calls++
	products := p.Products
	if products == nil {
		products = DefaultPriceList()
		p.Products = products
	}
	p.mu.Unlock()
	known := false
	var docs []string
	for i := range products {
		pp := &products[i]
		if pp.ServiceCode != in.ServiceCode {
			continue
		}
		known = true
		if matches(pp, in.Filters) {
			docs = append(docs, p.doc(pp))
		}
	}
	if !known {
		sim.JSONError(w, "NotFoundException", "SIMULATED: the simulated Price List has no service code "+in.ServiceCode)
		return
	}
	start, err := sim.PageStart(in.NextToken, len(docs))
	if err != nil {
		sim.JSONError(w, "InvalidNextTokenException", "SIMULATED: invalid NextToken")
		return
	}
	end := min(start+limit, len(docs))
	out := map[string]any{"FormatVersion": "aws_v1", "PriceList": docs[start:end]}
	if end < len(docs) {
		out["NextToken"] = sim.PageToken(end)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

// matches applies TERM_MATCH filters: the attribute equals the value
// (ServiceCode matches the product's service code).
func matches(pp *PriceProduct, fs []struct{ Type, Field, Value string }) bool {
	for _, f := range fs {
		v, ok := pp.Attributes[f.Field]
		if f.Field == "ServiceCode" {
			v, ok = pp.ServiceCode, true
		}
		if !ok || v != f.Value {
			return false
		}
	}
	return true
}

// doc renders (once) the product's document as GetProducts returns it.
func (p *PriceListSim) doc(pp *PriceProduct) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pp.doc != "" {
		return pp.doc
	}
	h := fnv.New64a()
	fmt.Fprint(h, pp.ServiceCode, pp.Attributes["usagetype"], pp.Attributes["regionCode"], pp.Attributes["servicename"], pp.Attributes["model"], pp.Attributes["titanModel"])
	sku := strings.ToUpper(strconv.FormatUint(h.Sum64(), 36))
	eff := pp.EffectiveDate
	if eff == "" {
		eff = simPriceEffective
	}
	const term, rate = "JRTCKXETXF", "6YS6EN2CT7" // the Price List's on-demand offer term and rate codes
	family := "Amazon Bedrock"
	if pp.ServiceCode == priceServiceFM {
		family = "Machine Learning"
	}
	doc := map[string]any{
		"product":     map[string]any{"productFamily": family, "attributes": pp.Attributes, "sku": sku},
		"serviceCode": pp.ServiceCode,
		"terms": map[string]any{"OnDemand": map[string]any{sku + "." + term: map[string]any{
			"priceDimensions": map[string]any{sku + "." + term + "." + rate: map[string]any{
				"unit": pp.Unit, "endRange": "Inf", "description": pp.Description, "appliesTo": []string{},
				"rateCode": sku + "." + term + "." + rate, "beginRange": "0", "pricePerUnit": map[string]string{"USD": pp.USD}}},
			"sku": sku, "effectiveDate": eff, "offerTermCode": term, "termAttributes": map[string]string{}}}},
		"version":         "20261101000000",
		"publicationDate": "2026-11-01T00:00:00Z",
	}
	b, _ := json.Marshal(doc)
	pp.doc = string(b)
	return pp.doc
}
