package bedrock_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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
