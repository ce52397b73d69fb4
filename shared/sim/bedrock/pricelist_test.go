package bedrock_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/smithy-go"

	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

func priceListClient(t *testing.T, products []simbedrock.PriceProduct) (*pricing.Client, *simbedrock.PriceListSim) {
	t.Helper()
	s := &simbedrock.PriceListSim{Products: products, Log: slog.New(slog.DiscardHandler)}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("simulated", "simulated", ""), HTTPClient: sim.HTTPClient()}
	return pricing.NewFromConfig(cfg, func(o *pricing.Options) { o.BaseEndpoint = aws.String(url) }), s
}

func regionFilter(region string) []types.Filter {
	return []types.Filter{{Type: types.FilterTypeTermMatch, Field: aws.String("regionCode"), Value: aws.String(region)}}
}

func TestPriceListSimPagesFilteredProductsThroughTheSDK(t *testing.T) {
	c, s := priceListClient(t, nil)
	ctx := context.Background()
	p := pricing.NewGetProductsPaginator(c, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonBedrockFoundationModels"),
		FormatVersion: aws.String("aws_v1"), MaxResults: aws.Int32(7), Filters: regionFilter("us-east-1")})
	var docs []string
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		docs = append(docs, out.PriceList...)
	}
	if pages < 2 || s.Calls() != pages {
		t.Errorf("pages %d, calls %d; want several pages, one call each", pages, s.Calls())
	}
	seen := map[string]bool{}
	var sonnet []string
	for _, d := range docs {
		var doc struct {
			Product struct {
				SKU        string
				Attributes map[string]string
			}
			ServiceCode string
			Terms       struct {
				OnDemand map[string]struct {
					EffectiveDate   string
					PriceDimensions map[string]struct {
						Unit, Description string
						PricePerUnit      map[string]string
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(d), &doc); err != nil {
			t.Fatalf("document %q: %v", d, err)
		}
		if seen[doc.Product.SKU] {
			t.Errorf("SKU %s served twice across pages", doc.Product.SKU)
		}
		seen[doc.Product.SKU] = true
		a := doc.Product.Attributes
		if a["regionCode"] != "us-east-1" || doc.ServiceCode != "AmazonBedrockFoundationModels" || !strings.HasPrefix(a["usagetype"], "USE1-MP:USE1_") {
			t.Errorf("filtered to us-east-1 FoundationModels, got %v %s", a, doc.ServiceCode)
		}
		if len(doc.Terms.OnDemand) != 1 {
			t.Errorf("terms %v", doc.Terms)
		}
		for _, term := range doc.Terms.OnDemand {
			if term.EffectiveDate == "" || len(term.PriceDimensions) != 1 {
				t.Errorf("term %+v", term)
			}
			for _, dim := range term.PriceDimensions {
				if dim.PricePerUnit["USD"] == "" {
					t.Errorf("dimension %+v has no USD price", dim)
				}
				if a["servicename"] == "Claude Sonnet 4.6 (Amazon Bedrock Edition)" {
					sonnet = append(sonnet, a["usagetype"]+" "+dim.PricePerUnit["USD"])
				}
			}
		}
	}
	for _, want := range []string{"USE1-MP:USE1_InputTokenCount_Global-Units 3.0000000000", "USE1-MP:USE1_InputTokenCount-Units 3.3000000000",
		"USE1-MP:USE1_OutputTokenCount_Global_Batch-Units 7.5000000000"} {
		if !strings.Contains(strings.Join(sonnet, "\n"), want) {
			t.Errorf("Sonnet 4.6 rows %q lack %q", sonnet, want)
		}
	}
}

func TestPriceListSimTermMatch(t *testing.T) {
	c, _ := priceListClient(t, nil)
	out, err := c.GetProducts(context.Background(), &pricing.GetProductsInput{ServiceCode: aws.String("AmazonBedrock"),
		Filters: append(regionFilter("us-west-2"), types.Filter{Type: types.FilterTypeTermMatch, Field: aws.String("model"), Value: aws.String("Nova Lite")})})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.PriceList) == 0 || out.NextToken != nil {
		t.Fatalf("Nova Lite in us-west-2: %d products, next %v", len(out.PriceList), out.NextToken)
	}
	for _, d := range out.PriceList {
		if !strings.Contains(d, `"model":"Nova Lite"`) || !strings.Contains(d, `"usagetype":"USW2-NovaLite-`) {
			t.Errorf("product outside the filter: %s", d)
		}
	}
}

func TestPriceListSimRefusals(t *testing.T) {
	c, _ := priceListClient(t, nil)
	ctx := context.Background()
	for name, in := range map[string]*pricing.GetProductsInput{
		"InvalidParameterException": {ServiceCode: aws.String("AmazonBedrock"), MaxResults: aws.Int32(101)},
		"NotFoundException":         {ServiceCode: aws.String("AmazonEC3")},
		"InvalidNextTokenException": {ServiceCode: aws.String("AmazonBedrock"), NextToken: aws.String("nope")},
	} {
		_, err := c.GetProducts(ctx, in)
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != name || !strings.Contains(ae.ErrorMessage(), "SIMULATED") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	_, err := c.GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonBedrock"),
		Filters: []types.Filter{{Type: types.FilterTypeContains, Field: aws.String("model"), Value: aws.String("Nova")}}})
	if err == nil || !strings.Contains(err.Error(), "TERM_MATCH only") {
		t.Errorf("CONTAINS filter: err %v", err)
	}
}

func TestSyntheticPriceListSize(t *testing.T) {
	ps := simbedrock.SyntheticPriceList(5000, 200)
	if len(ps) != 5000 {
		t.Fatalf("%d products", len(ps))
	}
	names := map[string]bool{}
	for _, p := range ps {
		names[p.Attributes["servicename"]] = true
	}
	if !names["Sim Model 199 (Amazon Bedrock Edition)"] {
		t.Error("the 200th account model has no products")
	}
}

// simDoc is what a shape test reads of one served document.
type simDoc struct {
	family, unit, desc, usd string
	attrs                   map[string]string
}

// simDocs reads every document of code in us-east-1 through the SDK, by
// servicename and usage type ("Amazon Bedrock|USE1-NovaLite-input-tokens").
func simDocs(t *testing.T, c *pricing.Client, code string) map[string]simDoc {
	t.Helper()
	p := pricing.NewGetProductsPaginator(c, &pricing.GetProductsInput{ServiceCode: aws.String(code), Filters: regionFilter("us-east-1")})
	out := map[string]simDoc{}
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.PriceList {
			var doc struct {
				Product struct {
					ProductFamily string
					Attributes    map[string]string
				}
				Terms struct {
					OnDemand map[string]struct {
						PriceDimensions map[string]struct {
							Unit, Description string
							PricePerUnit      map[string]string
						}
					}
				}
			}
			if err := json.Unmarshal([]byte(d), &doc); err != nil {
				t.Fatal(err)
			}
			sd := simDoc{family: doc.Product.ProductFamily, attrs: doc.Product.Attributes}
			for _, term := range doc.Terms.OnDemand {
				for _, dim := range term.PriceDimensions {
					sd.unit, sd.desc, sd.usd = dim.Unit, dim.Description, dim.PricePerUnit["USD"]
				}
			}
			out[doc.Product.Attributes["servicename"]+"|"+doc.Product.Attributes["usagetype"]] = sd
		}
	}
	return out
}

// TestPriceListSimDocumentShapes: the simulated documents carry the
// attributes, units, descriptions, names and usage types of the real ones
// (the verbatim and recorded documents and the offer-file survey listed in
// shared/pricing/testdata/SOURCES.md, 2026-12-03). absent marks an
// attribute the document must not have.
func TestPriceListSimDocumentShapes(t *testing.T) {
	const absent = "<absent>"
	c, _ := priceListClient(t, nil)
	fmKeys := []string{"location", "locationType", "operation", "regionCode", "servicename", "usagetype"}
	docs := map[string]map[string]simDoc{
		"AmazonBedrockFoundationModels": simDocs(t, c, "AmazonBedrockFoundationModels"),
		"AmazonBedrock":                 simDocs(t, c, "AmazonBedrock"),
	}
	for _, tc := range []struct {
		code, usage, unit, desc, usd string
		attrs                        map[string]string
	}{
		{"AmazonBedrockFoundationModels", "Claude Sonnet 4.6 (Amazon Bedrock Edition)|USE1-MP:USE1_InputTokenCount-Units", "1M tokens",
			"AWS Marketplace software usage|us-east-1|Million Input Tokens Regional CRIS", "3.3000000000",
			map[string]string{"servicename": "Claude Sonnet 4.6 (Amazon Bedrock Edition)", "location": "US East (N. Virginia)", "locationType": "AWS Region", "operation": ""}},
		{"AmazonBedrockFoundationModels", "Claude Sonnet 4.6 (Amazon Bedrock Edition)|USE1-MP:USE1_OutputTokenCount_Global_Batch-Units", "1M tokens",
			"AWS Marketplace software usage|us-east-1|Million Batch Response Tokens Global", "7.5000000000",
			map[string]string{"servicename": "Claude Sonnet 4.6 (Amazon Bedrock Edition)"}},
		{"AmazonBedrockFoundationModels", "Claude Opus 4.7 (Amazon Bedrock Edition)|USE1-MP:USE1_input_tokens_global_standard-Units", "1M tokens",
			"AWS Marketplace software usage|us-east-1|Input Tokens - Standard, Global", "5.0000000000",
			map[string]string{"servicename": "Claude Opus 4.7 (Amazon Bedrock Edition)"}},
		{"AmazonBedrockFoundationModels", "Claude Opus 4.7 (Amazon Bedrock Edition)|USE1-MP:USE1_output_tokens_standard-Units", "1M tokens",
			"AWS Marketplace software usage|us-east-1|Output Tokens - Standard", "27.5000000000", nil},
		{"AmazonBedrockFoundationModels", "Claude Opus 4.7 (Amazon Bedrock Edition)|USE1-MP:USE1_cache_write_tokens_1h_global_standard-Units", "1M tokens",
			"AWS Marketplace software usage|us-east-1|Cache Write Tokens 1h - Standard, Global", "10.0000000000", nil},
		{"AmazonBedrockFoundationModels", "Claude Opus 4.7 (Amazon Bedrock Edition)|USE1-MP:USE1_input_tokens_long_ctx_global_standard-Units", "1M tokens",
			"AWS Marketplace software usage|us-east-1|Input Tokens Long Context - Standard, Global", "10.0000000000", nil},
		{"AmazonBedrock", "Amazon Bedrock|USE1-Claude3Haiku-input-tokens", "1K tokens",
			"$0.00025 per 1K tokens for Claude3Haiku-input-tokens inUS East (N. Virginia)", "0.0002500000",
			map[string]string{"model": "Claude 3 Haiku", "provider": "Anthropic", "location": "US East (N. Virginia)", "locationType": "AWS Region",
				"operation": "", "feature": "On-demand Inference", "inferenceType": "Input tokens", "servicecode": "AmazonBedrock", "servicename": "Amazon Bedrock"}},
		{"AmazonBedrock", "Amazon Bedrock|USE1-NovaLite-cache-read-input-token-count", "1K tokens",
			"$0.000015 per 1K tokens for NovaLite-cache-read-input-token-count inUS East (N. Virginia)", "0.0000150000",
			map[string]string{"model": "Nova Lite", "inferenceType": "Prompt cache read input tokens"}},
		{"AmazonBedrock", "Amazon Bedrock|USE1-Nova2.0Lite-output-tokens-cross-region-global-batch", "1K tokens", "", "0.0012500000",
			map[string]string{"model": "Nova 2.0 Lite", "feature": "Batch Inference"}},
		{"AmazonBedrock", "Amazon Bedrock|USE1-TitanEmbeddingV2-Text-input-tokens", "1K tokens", "", "0.0000200000",
			map[string]string{"titanModel": "TitanEmbeddingsV2-Text-input", "model": absent}},
		{"AmazonBedrock", "Amazon Bedrock|USE1-gpt-oss-120b-input-tokens-flex", "1K tokens", "", "0.0000750000",
			map[string]string{"model": "gpt-oss-120b", "feature": "On-demand Inference", "inferenceType": "Input tokens flex", "service_tier": absent}},
		{"AmazonBedrock", "Amazon Bedrock|USE1-openai.gpt-oss-120b-mantle-input-tokens-flex", "1K tokens", "", "0.0000750000",
			map[string]string{"model": "gpt-oss-120b", "service_tier": "flex", "feature": absent, "inferenceType": "Input tokens flex"}},
		{"AmazonBedrock", "Amazon Bedrock|USE1-openai.gpt-oss-120b-mantle-output-tokens-standard", "1K tokens", "", "0.0006000000",
			map[string]string{"service_tier": "standard", "feature": absent}},
	} {
		d, ok := docs[tc.code][tc.usage]
		if !ok {
			t.Errorf("%s: no document with usage type %s", tc.code, tc.usage)
			continue
		}
		if d.unit != tc.unit || d.usd != tc.usd || (tc.desc != "" && d.desc != tc.desc) {
			t.Errorf("%s: unit %q, USD %s, description %q; want %q, %s, %q", tc.usage, d.unit, d.usd, d.desc, tc.unit, tc.usd, tc.desc)
		}
		for k, want := range tc.attrs {
			got, has := d.attrs[k]
			if want == absent && has || want != absent && (!has || got != want) {
				t.Errorf("%s: attribute %s = %q (present %v); want %q", tc.usage, k, got, has, want)
			}
		}
		if tc.code == "AmazonBedrockFoundationModels" {
			keys := make([]string, 0, len(d.attrs))
			for k := range d.attrs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, fmKeys) || d.family != "Machine Learning" {
				t.Errorf("%s: family %q, attributes %v; want Machine Learning and exactly %v", tc.usage, d.family, keys, fmKeys)
			}
		}
	}
}
