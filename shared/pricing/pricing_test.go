package pricing

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/pricing"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

// recorded reads the testdata pages (see testdata/SOURCES.md) as products.
func recorded(t *testing.T, files ...string) []Product {
	t.Helper()
	if len(files) == 0 {
		all, err := filepath.Glob("testdata/*.json")
		if err != nil || len(all) < 4 {
			t.Fatalf("testdata pages: %v %v", all, err)
		}
		files = all
	}
	var out []Product
	for _, f := range files {
		if !strings.Contains(f, "/") {
			f = filepath.Join("testdata", f)
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// ServiceCode is the code the page was asked for (GetProducts'
		// request), as the Reader knows it.
		var page struct {
			ServiceCode string
			PriceList   []string
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, doc := range page.PriceList {
			p, err := ParseProduct(doc)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if p.ServiceCode == "" {
				p.ServiceCode = page.ServiceCode
			}
			if p.ServiceCode == "" {
				t.Fatalf("%s: a product without a service code", f)
			}
			out = append(out, p)
		}
	}
	return out
}

// classesGolden holds, per testdata page and dimension, the class the
// classifier gives it ("!" and the start of the reason when it is reported
// unclassified). Regenerate with: go test ./shared/pricing -run
// TestClassifyRecordedDimensions -update, then review the diff line by line:
// each line is a claim about a real (or, per SOURCES.md, assembled) Price
// List row.
const classesGolden = "testdata/classes.golden.tsv"

var update = flag.Bool("update", false, "rewrite golden files")

// TestClassifyRecordedDimensions classifies every dimension of every
// recorded document and compares the result with the golden table: a
// dimension without a line, or a line without a dimension, fails.
func TestClassifyRecordedDimensions(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("testdata pages: %v %v", files, err)
	}
	var got strings.Builder
	got.WriteString("# file\tusagetype\tunit\tclass (\"!\" unclassified: the reason's start)\tUSD per million tokens (\"-\" not a token price)\n")
	for _, f := range files {
		for _, p := range recorded(t, f) {
			for _, d := range p.Dimensions {
				c, err := Classify(p, d)
				class, usd := c.String(), "-"
				if err != nil {
					class = "!" + reasonHead(err)
				} else if c.Field() != "" {
					// The token price as the sheet stores it: USD per million.
					if v, err := PerMillion(d); err != nil {
						usd = "!" + err.Error()
					} else {
						usd = strconv.FormatFloat(roundMicro(v), 'f', -1, 64)
					}
				}
				fmt.Fprintf(&got, "%s\t%s\t%s\t%s\t%s\n", filepath.Base(f), p.Attributes["usagetype"], d.Unit, class, usd)
			}
		}
	}
	if *update {
		if err := os.WriteFile(classesGolden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(classesGolden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	gotLines, wantLines := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
	for _, l := range wantLines {
		if !slices.Contains(gotLines, l) {
			t.Errorf("golden line not produced by the recorded documents: %q", l)
		}
	}
	for _, l := range gotLines {
		if !slices.Contains(wantLines, l) {
			t.Errorf("recorded dimension not in %s as classified: %q", classesGolden, l)
		}
	}
}

// reasonHead is why a classification failed, without the usage type the
// golden line already shows: the unknown variant word, or the message after
// its first ": ".
func reasonHead(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": word "); i >= 0 {
		return "unknown word " + strings.SplitN(msg[i+len(": word "):], " ", 2)[0]
	}
	if i := strings.Index(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// Every class the classifier knows appears among the recorded dimensions.
func TestRecordedDocumentsCoverEveryClass(t *testing.T) {
	got := map[string]bool{}
	for _, p := range recorded(t) {
		for _, d := range p.Dimensions {
			c, err := Classify(p, d)
			if err != nil {
				continue
			}
			got[c.Kind] = true
			if c.TTL != "" {
				got["ttl "+c.TTL] = true
			}
			for name, on := range map[string]bool{"batch": c.Batch, "global": c.Global, "geographic": !c.Global, "long_context": c.LongContext, "tier " + c.Tier: c.Tier != ""} {
				if on {
					got[name] = true
				}
			}
		}
	}
	for _, k := range []string{KindInput, KindOutput, KindCacheRead, KindCacheWrite, KindPerImage, KindPerSecond, KindNotInference,
		"ttl 5m", "ttl 1h", "batch", "global", "geographic", "long_context", "tier flex", "tier priority"} {
		if !got[k] {
			t.Errorf("no recorded dimension of class %q", k)
		}
	}
}

func TestClassifyFeatures(t *testing.T) {
	for _, c := range []struct {
		feature, want string
	}{
		{"On-demand Inference", "input"},
		{"Batch Inference", "input batch"},
		{"Model Customization", "not_inference"},
		{"Custom Model Import", "not_inference"},
		{"Provisioned Throughput", "not_inference"},
		{"Prompt Routing", "!feature"},
	} {
		p := Product{ServiceCode: ServiceBedrock, Attributes: map[string]string{"model": "Nova Lite", "usagetype": "USE1-NovaLite-input-tokens", "feature": c.feature}}
		got, err := Classify(p, Dimension{Unit: "1K tokens"})
		if bad, isBad := strings.CutPrefix(c.want, "!"); isBad {
			if err == nil || !strings.Contains(err.Error(), bad) {
				t.Errorf("feature %q: %v, %v; want reported", c.feature, got, err)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("feature %q: %v, %v; want %s", c.feature, got, err, c.want)
		}
	}
}

// An image-generation row (the usage type public code quotes for
// AmazonBedrockFoundationModels, agentstation/starmap
// internal/providers/bedrock/pricing_test.go) is a per-image price; the same
// usage type priced in tokens is reported.
func TestClassifyCreatedImages(t *testing.T) {
	p := Product{ServiceCode: ServiceFoundationModels, Attributes: map[string]string{"servicename": "Stable Image Ultra (Amazon Bedrock Edition)", "usagetype": "USE1-MP:USE1_Created_image-Units"}}
	if c, err := Classify(p, Dimension{Unit: "Units", Description: "Image"}); err != nil || c.Kind != KindPerImage {
		t.Errorf("created image: %v, %v", c, err)
	}
	if c, err := Classify(p, Dimension{Unit: "1K tokens", Description: "Image tokens"}); err == nil {
		t.Errorf("an image row in tokens classified as %v", c)
	}
}

// service_tier (on the "mantle" rows) names the tier where the usage type may not.
func TestClassifyServiceTier(t *testing.T) {
	for tier, want := range map[string]string{"standard": "input", "flex": "input flex", "priority": "input priority", "batch": "input batch", "reserved-capacity": "!service_tier"} {
		p := Product{ServiceCode: ServiceBedrock, Attributes: map[string]string{"model": "GLM 5", "usagetype": "APN1-zai.glm5-mantle-input-tokens", "service_tier": tier}}
		got, err := Classify(p, Dimension{Unit: "1K tokens"})
		if bad, isBad := strings.CutPrefix(want, "!"); isBad {
			if err == nil || !strings.Contains(err.Error(), bad) {
				t.Errorf("service_tier %q: %v, %v; want reported", tier, got, err)
			}
			continue
		}
		if err != nil || got.String() != want {
			t.Errorf("service_tier %q: %v, %v; want %s", tier, got, err, want)
		}
	}
}

func TestPerMillion(t *testing.T) {
	for _, c := range []struct {
		unit, desc string
		usd, want  float64
		err        bool
	}{
		{"1K tokens", "", 0.00006, 0.06, false},
		{"1M tokens", "", 3, 3, false},
		{"Units", "AWS Marketplace software usage|us-east-1|Million Input Tokens Global", 3, 3, false},
		{"Units", "…|thousand Cache Read Input Tokens Regional", 0.00033, 0.33, false},
		{"Units", "Input video second", 0.0007, 0, true},
		{"Units", "AWS Marketplace software usage|us-east-1|Input Tokens - Standard, Global", 5, 0, true},
		{"1M TPM Hour", "", 0.198, 0, true},
	} {
		got, err := PerMillion(Dimension{Unit: c.unit, Description: c.desc, USD: c.usd})
		if (err != nil) != c.err || (!c.err && roundMicro(got) != c.want) {
			t.Errorf("PerMillion(%q, %q, %v) = %v, %v; want %v (error %v)", c.unit, c.desc, c.usd, got, err, c.want, c.err)
		}
	}
}

func TestEndpointRegion(t *testing.T) {
	for region, want := range map[string]string{
		"us-west-2": "us-east-1", "ca-central-1": "us-east-1", "sa-east-1": "us-east-1", "eu-west-3": "eu-central-1",
		"me-central-1": "eu-central-1", "il-central-1": "eu-central-1", "ap-northeast-1": "ap-south-1", "ap-south-1": "ap-south-1",
	} {
		if got := EndpointRegion(region); got != want {
			t.Errorf("EndpointRegion(%s) = %s, want %s", region, got, want)
		}
	}
}

func TestSheetListsSonnet46AtGlobalPricesWithTheRegionalPremium(t *testing.T) {
	s := BuildSheet(recorded(t))
	mp := s.Models["Claude Sonnet 4.6"]
	if mp == nil {
		t.Fatalf("no Claude Sonnet 4.6 in %v", keys(s.Models))
	}
	lp, ok, _ := mp.Listed()
	if !ok {
		t.Fatal("Sonnet 4.6 lists no price")
	}
	check := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || *got != want {
			t.Errorf("%s = %v, want %v", name, deref(got), want)
		}
	}
	p := lp.Prices
	check("input", p.Input, 3)
	check("output", p.Output, 15)
	check("cache_read", p.CacheRead, 0.3)
	check("cache_write", p.CacheWrite, 3.75)
	check("cache_write_1h", p.CacheWrite1h, 6)
	check("batch_input", p.BatchInput, 1.5)
	check("batch_output", p.BatchOutput, 7.5)
	check("regional_premium", lp.RegionalPremium, 0.1)
	if p.BatchCacheRead != nil || p.BatchCacheWrite != nil {
		t.Errorf("batch cache prices %v %v: none is listed", deref(p.BatchCacheRead), deref(p.BatchCacheWrite))
	}
	if lp.AsOf["input"] != "2026-08-01" {
		t.Errorf("input as of %q, want the effective date 2026-08-01", lp.AsOf["input"])
	}

	nova, _, _ := s.Models["Nova Lite"].Listed()
	check("nova input", nova.Prices.Input, 0.06)
	check("nova batch_output", nova.Prices.BatchOutput, 0.12)
	check("nova cache_read", nova.Prices.CacheRead, 0.015)
	if nova.RegionalPremium != nil {
		t.Errorf("Nova Lite has no global rows, yet a regional premium %v", *nova.RegionalPremium)
	}
	qwen, _, _ := s.Models["Qwen3 32B"].Listed()
	check("qwen flex input", qwen.ServiceTiers["flex"].Input, 0.075)
	check("qwen priority input", qwen.ServiceTiers["priority"].Input, 0.2625)
	check("qwen batch input", qwen.Prices.BatchInput, 0.075)
	opus, _, _ := s.Models["Claude Opus 4.7"].Listed()
	if opus.LongContext == nil {
		t.Fatal("Opus 4.7: no long-context prices")
	}
	check("opus long-context input", opus.LongContext.Input, 10)
	check("opus cache_write_1h", opus.Prices.CacheWrite1h, 10)
	emb, _, _ := s.Models["TitanEmbeddingsV2-Text-input"].Listed() // the Price List's titanModel for it
	check("titan v2 input", emb.Prices.Input, 0.02)
	if other := s.Models["Titan Embeddings G1 Image"].Other; len(other) != 1 || other[0].Class.Kind != KindPerImage || other[0].USD != 0.00006 {
		t.Errorf("Titan G1 per-image prices = %+v", other)
	}

	// The verbatim documents: GLM 5's service-tier twins agree (no conflict).
	glm, _, _ := s.Models["GLM 5"].Listed()
	check("glm 5 input", glm.Prices.Input, 1.2)
	check("glm 5 output", glm.Prices.Output, 3.84)
	check("glm 5 flex input", glm.ServiceTiers["flex"].Input, 0.6)
	novaPro, _, _ := s.Models["Nova Pro"].Listed()
	check("nova pro input", novaPro.Prices.Input, 0.96)
	check("nova pro batch input", novaPro.Prices.BatchInput, 0.48)
	check("nova pro cache read", novaPro.Prices.CacheRead, 0.24)
	if len(s.Notes) != 0 {
		t.Errorf("notes %q: the recorded documents hold no conflict", s.Notes)
	}
	if len(s.Unclassified) != 1 || !strings.Contains(s.Unclassified[0], "cache_write_tokens_30m") {
		t.Errorf("unclassified = %q; want exactly the 30m cache write", s.Unclassified)
	}
}

// The one whole GetProducts document on record (every field as the service
// sends it): its price is dated by the term's effectiveDate.
func TestSheetDatesAPriceByItsTerm(t *testing.T) {
	s := BuildSheet(recorded(t, "br-aws-cli-9567-use1.json"))
	mp := s.Models["Claude 2.0"]
	if mp == nil {
		t.Fatalf("no Claude 2.0 in %v", keys(s.Models))
	}
	lp, ok, _ := mp.Listed()
	if !ok || lp.Prices.Input == nil || *lp.Prices.Input != 8 || lp.AsOf["input"] != "2025-06-01" {
		t.Errorf("Claude 2.0 = %+v (ok %v), want input 8 as of 2025-06-01", lp, ok)
	}
}

func TestSheetDropsAConflictingPrice(t *testing.T) {
	ps := recorded(t, "br-nova-lite.json")
	dup := ps[0]
	dup.Dimensions = slices.Clone(dup.Dimensions)
	dup.Dimensions[0].USD *= 2
	dup.Attributes = map[string]string{"model": "Nova Lite", "usagetype": "USE1-NovaLite-input-tokens-cross-region"}
	s := BuildSheet(append(ps, dup))
	lp, _, _ := s.Models["Nova Lite"].Listed()
	if lp.Prices.Input != nil {
		t.Errorf("input = %v: two rows of one class at different prices must leave it unpriced", *lp.Prices.Input)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "neither is used") {
		t.Errorf("notes = %q", s.Notes)
	}
}

func TestForAccountMatchesNames(t *testing.T) {
	s := BuildSheet(recorded(t))
	ms := []model.AccountModel{
		{ID: "anthropic.claude-sonnet-4-6", Name: "Claude Sonnet 4.6", Provider: "Anthropic"},
		{ID: "amazon.nova-lite-v1:0", Name: "Nova Lite", Provider: "Amazon"},
		{ID: "qwen.qwen3-32b-v1:0", Name: "Qwen3 32B Instruct", Provider: "Qwen"},
		{ID: "amazon.titan-embed-text-v2:0", Name: "Titan Text Embeddings V2", Provider: "Amazon"},
		{ID: "anthropic.claude-opus-4-7", Name: "Claude Opus 4.7", Provider: "Anthropic"},
		{ID: "amazon.titan-embed-image-v1", Name: "Titan Multimodal Embeddings G1", Provider: "Amazon"},
		{ID: "twelvelabs.marengo-embed-2-7-v1:0", Name: "Marengo Embed 2.7", Provider: "TwelveLabs"},
	}
	pl := s.ForAccount(ms, "us-east-1")
	if !slices.ContainsFunc(pl.Notes, func(n string) bool {
		return strings.Contains(n, "Marengo Embed 2.7") && strings.Contains(n, "per_second")
	}) {
		t.Errorf("notes %q: the per-second price is not named", pl.Notes)
	}
	for _, m := range ms {
		_, ok := pl.Models[m.ID]
		// Titan G1 lists a per-image price only, under the Price List's name
		// "Titan Embeddings G1 Image": nothing says it is the multimodal
		// model, so it stays unmatched (and has no token price anyway).
		// Marengo lists a per-second price only: matched, not priced.
		if want := m.ID != "amazon.titan-embed-image-v1" && !strings.HasPrefix(m.ID, "twelvelabs."); ok != want {
			t.Errorf("%s (%q) priced %v, want %v; unmatched %q", m.ID, m.Name, ok, want, pl.Unmatched)
		}
	}
	// Titan Text Embeddings V2 is "TitanEmbeddingsV2-Text-input" in the Price List.
	if got := pl.Models["amazon.titan-embed-text-v2:0"].Prices.BatchInput; got == nil || *got != 0.01 {
		t.Errorf("Titan V2 batch input = %v, want 0.01", deref(got))
	}
	if !slices.Contains(pl.Unmatched, "Titan Embeddings G1 Image") {
		t.Errorf("unmatched = %q; want Titan Embeddings G1 Image reported", pl.Unmatched)
	}
}

func TestSpelled(t *testing.T) {
	for in, want := range map[string]string{
		"TitanEmbeddingsV2-Text-input": "Titan Embeddings V2 Text",
		"Claude Sonnet 4.6":            "", // a name already
		"zai.glm5":                     "zai.glm5",
		"Nova-output":                  "Nova",
		"input":                        "input", // nothing but the quantity: kept
	} {
		if got := spelled(in); got != want {
			t.Errorf("spelled(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWholeVersion(t *testing.T) {
	for in, want := range map[string]string{
		"Nova 2.0 Lite":    "Nova 2 Lite",
		"Ministral 3B 3.0": "Ministral 3B 3",
		"Claude Opus 4.5":  "Claude Opus 4.5",
		"v.0 x":            "v.0 x",
	} {
		if got := wholeVersion(in); got != want {
			t.Errorf("wholeVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// pagedAPI answers GetProducts from a product list in pages, like the service.
type pagedAPI struct {
	docs  map[string][]string
	mu    sync.Mutex
	calls []sdk.GetProductsInput
	fail  error
}

func (f *pagedAPI) GetProducts(_ context.Context, in *sdk.GetProductsInput, _ ...func(*sdk.Options)) (*sdk.GetProductsOutput, error) {
	f.mu.Lock()
	f.calls = append(f.calls, *in)
	f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	all := f.docs[aws.ToString(in.ServiceCode)]
	start := 0
	if in.NextToken != nil {
		start, _ = strconv.Atoi(*in.NextToken)
	}
	end := min(start+int(aws.ToInt32(in.MaxResults)), len(all))
	out := &sdk.GetProductsOutput{PriceList: all[start:end], FormatVersion: aws.String("aws_v1")}
	if end < len(all) {
		out.NextToken = aws.String(strconv.Itoa(end))
	}
	return out, nil
}

func pageDocs(t *testing.T, file string) []string {
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ PriceList []string }
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	return page.PriceList
}

func TestReaderPagesBothServiceCodes(t *testing.T) {
	api := &pagedAPI{docs: map[string][]string{
		ServiceFoundationModels: pageDocs(t, "fm-claude-sonnet-4-6.json"),
		ServiceBedrock:          append(pageDocs(t, "br-nova-lite.json"), pageDocs(t, "br-embeddings.json")[:3]...),
	}}
	r := &AccountReader{Reader: Reader{API: api, PageSize: 4}}
	a := &model.Account{Region: "us-east-1", Bedrock: []model.AccountModel{
		{ID: "anthropic.claude-sonnet-4-6", Name: "Claude Sonnet 4.6"}, {ID: "amazon.nova-lite-v1:0", Name: "Nova Lite"},
	}}
	if err := r.Read(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	// 15 FoundationModels products in pages of 4 (4 calls), 10 AmazonBedrock (3 calls).
	if len(api.calls) != 7 {
		t.Errorf("GetProducts calls = %d, want 7", len(api.calls))
	}
	for _, in := range api.calls {
		if len(in.Filters) != 1 || aws.ToString(in.Filters[0].Field) != "regionCode" || aws.ToString(in.Filters[0].Value) != "us-east-1" ||
			in.Filters[0].Type != "TERM_MATCH" || aws.ToString(in.FormatVersion) != "aws_v1" {
			t.Errorf("call %+v: want one TERM_MATCH regionCode=us-east-1 filter, format aws_v1", in)
		}
	}
	if got := a.PriceList.Models["anthropic.claude-sonnet-4-6"].Prices.Output; got == nil || *got != 15 {
		t.Errorf("Sonnet 4.6 output = %v after paging, want 15 (a page lost?)", deref(got))
	}
	if got := a.PriceList.Models["amazon.nova-lite-v1:0"].Prices.CacheRead; got == nil || *got != 0.015 {
		t.Errorf("Nova Lite cache read = %v, want 0.015", deref(got))
	}
	if a.PriceList.Endpoint != "us-east-1" {
		t.Errorf("endpoint %q", a.PriceList.Endpoint)
	}

	boom := &AccountReader{Reader: Reader{API: &pagedAPI{fail: errors.New("AccessDeniedException")}}}
	if err := boom.Read(context.Background(), &model.Account{Region: "us-east-1"}); err == nil || !strings.Contains(err.Error(), "AccessDeniedException") {
		t.Errorf("a failed GetProducts: err %v", err)
	}
}

// endless never stops paginating.
type endless struct{ calls int }

func (e *endless) GetProducts(context.Context, *sdk.GetProductsInput, ...func(*sdk.Options)) (*sdk.GetProductsOutput, error) {
	e.calls++
	return &sdk.GetProductsOutput{NextToken: aws.String("again")}, nil
}

func TestReaderStopsAnEndlessPagination(t *testing.T) {
	e := &endless{}
	_, err := (&Reader{API: e}).Products(context.Background(), ServiceBedrock, "us-east-1")
	if err == nil || !strings.Contains(err.Error(), "still paginating") || e.calls != maxPages {
		t.Errorf("err %v after %d calls; want the guard after %d", err, e.calls, maxPages)
	}
}

func TestParseProductRefusesABadPrice(t *testing.T) {
	for _, doc := range []string{
		`{"product":{"sku":"X","attributes":{"usagetype":"USE1-x"}},"terms":{"OnDemand":{"O":{"priceDimensions":{"R":{"unit":"1K tokens","pricePerUnit":{"USD":"not-a-number"}}}}}}}`,
		`{"product":{"sku":"X","attributes":{}},"terms":{"OnDemand":{"O":{"priceDimensions":{"R":{"unit":"1K tokens","pricePerUnit":{"EUR":"1"}}}}}}}`,
		`<html>`,
	} {
		if _, err := ParseProduct(doc); err == nil {
			t.Errorf("ParseProduct(%.40s) accepted", doc)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Model names as the Price List writes them (the model / titanModel
// attribute, or servicename without its edition suffix) against the names
// ListFoundationModels gives. The Price List names are the ones public
// Price List readers map by hand (a bulk-pricing updater's alias table,
// 2026, and the titanModel quoted in testdata/SOURCES.md); a name the
// account's names cannot place is unmatched on purpose: reported, not
// guessed.
func TestForAccountMatchesPriceListNames(t *testing.T) {
	ms := []model.AccountModel{
		{ID: "amazon.titan-embed-text-v2:0", Name: "Titan Text Embeddings V2", Provider: "Amazon"},
		{ID: "amazon.titan-embed-text-v1", Name: "Titan Embeddings G1 - Text", Provider: "Amazon"},
		{ID: "amazon.titan-embed-image-v1", Name: "Titan Multimodal Embeddings G1", Provider: "Amazon"},
		{ID: "amazon.nova-2-lite-v1:0", Name: "Nova 2 Lite", Provider: "Amazon"},
		{ID: "deepseek.r1-v1:0", Name: "DeepSeek-R1", Provider: "DeepSeek"},
		{ID: "qwen.qwen3-coder-30b-a3b-v1:0", Name: "Qwen3-Coder-30B-A3B-Instruct", Provider: "Qwen"},
		{ID: "mistral.pixtral-large-2502-v1:0", Name: "Pixtral Large (25.02)", Provider: "Mistral AI"},
		{ID: "anthropic.claude-sonnet-4-6", Name: "Claude Sonnet 4.6", Provider: "Anthropic"},
		{ID: "nvidia.nemotron-nano-9b-v2", Name: "NVIDIA Nemotron Nano 9B v2", Provider: "NVIDIA"},
	}
	for _, c := range []struct{ priceList, want string }{
		{"TitanEmbeddingsV2-Text-input", "amazon.titan-embed-text-v2:0"},
		{"Titan Embeddings G1 Text", "amazon.titan-embed-text-v1"},
		{"Nova 2.0 Lite", "amazon.nova-2-lite-v1:0"},
		{"R1", "deepseek.r1-v1:0"},
		{"Qwen3 Coder 30B A3B", "qwen.qwen3-coder-30b-a3b-v1:0"},
		{"Pixtral Large 25.02", "mistral.pixtral-large-2502-v1:0"},
		{"Claude Sonnet 4.6", "anthropic.claude-sonnet-4-6"},
		// Nothing in the names says "Image" is the multimodal model, or which
		// size "Nano 2" is: unmatched on purpose.
		{"Titan Embeddings G1 Image", ""},
		{"NVIDIA Nemotron Nano 2", ""},
	} {
		s := &Sheet{Models: map[string]*ModelPrices{c.priceList: {Name: c.priceList,
			Geo: map[string]Price{"input": {Class: Class{Kind: KindInput}, USD: 1, EffectiveDate: "2026-12-01"}}, Global: map[string]Price{}}}}
		pl := s.ForAccount(ms, "us-east-1")
		var got string
		for id := range pl.Models {
			got = id
		}
		if got != c.want {
			t.Errorf("Price List name %q priced as %q, want %q (unmatched %q)", c.priceList, got, c.want, pl.Unmatched)
		}
		if c.want == "" && !slices.Contains(pl.Unmatched, c.priceList) {
			t.Errorf("Price List name %q: not reported unmatched (%q)", c.priceList, pl.Unmatched)
		}
	}
}

// Usage types seen in real bills and Price List files, as public code
// quotes them (no whole document around them; sources in
// testdata/SOURCES.md, "Observed usage types"): each is classified as its
// words say, or reported. A unit left empty is one no source gives.
func TestClassifyObservedUsageTypes(t *testing.T) {
	for _, c := range []struct {
		service, usage, inference, unit, want string
	}{
		{ServiceBedrock, "USE1-Nova2.0Lite-output-tokens-cross-region-global-batch", "Output tokens", "", "output batch global"},
		{"AmazonBedrockService", "USE1-Claude4Sonnet-input-tokens-long-context-cross-region-global", "Input tokens long context", "1K tokens", "input long_context global"},
		{"AmazonBedrockService", "USE1-Claude4Sonnet-cache-write-input-token-count-long-context-cross-region-global", "", "1K tokens", "cache_write 5m long_context global"},
		{ServiceBedrock, "USE1-anthropic.claude-sonnet-4-5-mantle-input-tokens-standard", "", "1M tokens", "input"},
		{ServiceBedrock, "USE1-moonshotai.kimi-k2.5-input", "", "", "input"},
		{ServiceBedrock, "USE1-minimax.minimax-m2.5-output", "", "", "output"},
		{ServiceBedrock, "USE1-NovaMultiModalEmbeddings-input-audio-second", "", "1K seconds", "per_second"},
		{ServiceBedrock, "USE1-TitanEmbeddingsG1-Image-input-image", "", "Images Processed", "per_image"},
		{ServiceBedrock, "USE1-KnowledgeBase-Storage-Hours", "", "", "not_inference"},
		{ServiceBedrock, "USW2-AmazonRerank-v1-searchunits", "", "Search Units", "!names no priced quantity"},
		{ServiceBedrock, "USE1-NovaReel-T2V-Medfps-HDRes", "", "", "!names no priced quantity"},
		{ServiceBedrock, "USE1-Guardrails-Text-Units", "", "", "!names no priced quantity"},
		{ServiceBedrock, "USE1-DataAutomation-Custom-PagesProcessed", "", "", "!names no priced quantity"},
		// Usage types a Bedrock cost exporter's tests quote (grafana/cloudcost-exporter).
		{ServiceBedrock, "USE1-Claude3-5Haiku-input-tokens-latency-optimized", "", "", "!word \"latency\""},
		{ServiceBedrock, "USE1-Nova2.0Pro-text-input-tokens-priority-cross-region-global", "", "", "input priority global"},
		{ServiceBedrock, "USE1-Nova2.0Pro-input-image-token-count-cross-region-global", "Input Image Token Count", "", "!image dimension"},
		{ServiceBedrock, "USE1-NovaPro-cache-write-input-token-count-custom-model", "Prompt cache write input tokens", "", "not_inference"},
		{ServiceBedrock, "USE1-NovaSonic-text-input-tokens", "Input tokens", "", "input"},
		{ServiceBedrock, "USE1-GPT-OSS-Safeguard-20B-input-tokens-priority", "", "", "input priority"},
		{ServiceBedrock, "USE1-Gemma-3-4B-IT-input-tokens-flex", "", "", "input flex"},
		{ServiceBedrock, "USE1-Llama4-Maverick-17B-input-tokens-batch", "input tokens batch", "", "input batch"},
		{ServiceBedrock, "USE1-cohere.rerank-english-v3-search-units", "Search units", "", "!names no priced quantity"},
		{ServiceBedrock, "USE1-Guardrail-AutomatedReasoningPolicyUnitsConsumed", "", "", "!names no priced quantity"},
	} {
		p := Product{ServiceCode: c.service, Attributes: map[string]string{"usagetype": c.usage, "inferenceType": c.inference}}
		got, err := Classify(p, Dimension{Unit: c.unit})
		if bad, isBad := strings.CutPrefix(c.want, "!"); isBad {
			if err == nil || !strings.Contains(err.Error(), bad) {
				t.Errorf("%s: %v, %v; want reported (%s)", c.usage, got, err, bad)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("%s: %q, %v; want %q", c.usage, got, err, c.want)
		}
	}
}
