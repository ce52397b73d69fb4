package pricing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

// Price is one classified, normalized price of a model.
type Price struct {
	Class Class
	// USD is per million tokens for the token kinds, per image or per second
	// for those kinds (as listed).
	USD       float64
	Unit      string
	UsageType string
	// EffectiveDate is YYYY-MM-DD.
	EffectiveDate string
}

// ModelPrices are one Price List model's prices by scope and field.
type ModelPrices struct {
	Name string
	// Global and Geo hold the token prices by Class.Field of the global
	// rows and of the others (in-Region and geographic profiles).
	Global, Geo map[string]Price
	// Other are the per-image and per-second prices.
	Other []Price
}

// Sheet is what a read of the Price List found for one Region.
type Sheet struct {
	Models map[string]*ModelPrices
	// Unclassified are the dimensions the classifier could not place.
	Unclassified []string
	// Notes are classified dimensions not used (a conflict, a volume tier).
	Notes []string
	// Skipped counts products that are not inference (throughput, custom models).
	Skipped int
}

// BuildSheet classifies the products' dimensions. Two rows of the same model,
// scope and class at different prices are a conflict: both are dropped and
// noted (which one applies cannot be told).
func BuildSheet(products []Product) *Sheet {
	s := &Sheet{Models: map[string]*ModelPrices{}}
	conflicted := map[string]bool{}
	for _, p := range products {
		name := p.ModelName()
		for _, d := range p.Dimensions {
			where := fmt.Sprintf("%s %q: %s (%s)", p.ServiceCode, name, p.Attributes["usagetype"], d.Description)
			c, err := Classify(p, d)
			if err != nil {
				s.Unclassified = append(s.Unclassified, where+": "+err.Error())
				continue
			}
			if c.Kind == KindNotInference {
				s.Skipped++
				continue
			}
			if name == "" {
				s.Unclassified = append(s.Unclassified, where+": the product names no model")
				continue
			}
			if d.BeginRange != "" && d.BeginRange != "0" {
				s.Notes = append(s.Notes, where+": a volume tier from "+d.BeginRange+" is not read")
				continue
			}
			pr := Price{Class: c, Unit: d.Unit, UsageType: p.Attributes["usagetype"], EffectiveDate: day(d.EffectiveDate), USD: d.USD}
			mp := s.Models[name]
			if mp == nil {
				mp = &ModelPrices{Name: name, Global: map[string]Price{}, Geo: map[string]Price{}}
				s.Models[name] = mp
			}
			if c.Field() == "" {
				mp.Other = append(mp.Other, pr)
				continue
			}
			v, err := PerMillion(d)
			if err != nil {
				s.Unclassified = append(s.Unclassified, where+": "+err.Error())
				continue
			}
			pr.USD = roundMicro(v)
			scope := mp.Geo
			if c.Global {
				scope = mp.Global
			}
			key := fmt.Sprintf("%s|%v|%s", name, c.Global, c.Field())
			if conflicted[key] {
				continue
			}
			if old, ok := scope[c.Field()]; ok && old.USD != pr.USD {
				s.Notes = append(s.Notes, fmt.Sprintf("%s: %s listed at %v (%s) and %v (%s): neither is used",
					where, c, old.USD, old.UsageType, pr.USD, pr.UsageType))
				delete(scope, c.Field())
				conflicted[key] = true
				continue
			}
			scope[c.Field()] = pr
		}
	}
	sort.Strings(s.Unclassified)
	sort.Strings(s.Notes)
	return s
}

// roundMicro keeps a normalized price to 1e-9 USD: 1K-token prices times
// 1000 carry float noise (0.00006*1000).
func roundMicro(v float64) float64 { return math.Round(v*1e9) / 1e9 }

func day(rfc3339 string) string {
	if len(rfc3339) >= len("2006-01-02") {
		return rfc3339[:len("2006-01-02")]
	}
	return rfc3339
}

// baseFields are the model.Prices fields a Price List scope fills.
var baseFields = []string{"input", "output", "batch_input", "batch_output", "cache_write", "cache_read",
	"cache_write_1h", "batch_cache_write", "batch_cache_read", "batch_cache_write_1h"}

// Listed renders a model's prices in the catalog's convention: the global
// rows where the Price List has them (the geographic rows' extra over them
// is the regional premium), else the in-Region/geographic rows. Notes name
// what it leaves out: a price listed for geographic profiles only while
// global rows set the prices, and the per-image and per-second prices (this
// suite prices tokens).
func (mp *ModelPrices) Listed() (lp model.ListedPrices, ok bool, notes []string) {
	scope, global := mp.Geo, false
	if len(mp.Global) > 0 {
		scope, global = mp.Global, true
	}
	lp = model.ListedPrices{Name: mp.Name, AsOf: map[string]string{}}
	if global {
		for _, f := range sortedKeys(mp.Geo) {
			if _, both := mp.Global[f]; !both && f != "input" && f != "output" {
				notes = append(notes, fmt.Sprintf("%q: %s is listed for geographic profiles only: not used", mp.Name, f))
			}
		}
	}
	for _, o := range mp.Other {
		notes = append(notes, fmt.Sprintf("%q: a %s price (%v per %s, %s) is not a token price: not used", mp.Name, o.Class, o.USD, o.Unit, o.UsageType))
	}
	ptr := func(field string) *float64 {
		p, ok := scope[field]
		if !ok {
			return nil
		}
		v := p.USD
		lp.AsOf[field] = p.EffectiveDate
		return &v
	}
	fields := map[string]**float64{
		"input": &lp.Prices.Input, "output": &lp.Prices.Output, "batch_input": &lp.Prices.BatchInput,
		"batch_output": &lp.Prices.BatchOutput, "cache_write": &lp.Prices.CacheWrite, "cache_read": &lp.Prices.CacheRead,
		"cache_write_1h": &lp.Prices.CacheWrite1h, "batch_cache_write": &lp.Prices.BatchCacheWrite,
		"batch_cache_read": &lp.Prices.BatchCacheRead, "batch_cache_write_1h": &lp.Prices.BatchCacheWrite1h,
	}
	for _, f := range baseFields {
		*fields[f] = ptr(f)
	}
	for _, tier := range []string{"flex", "priority"} {
		in, out := ptr(tier+"_input"), ptr(tier+"_output")
		if in != nil || out != nil {
			if lp.ServiceTiers == nil {
				lp.ServiceTiers = map[string]model.TierPrices{}
			}
			lp.ServiceTiers[tier] = model.TierPrices{Input: in, Output: out}
		}
	}
	lc := model.LongContextPrices{Input: ptr("long_context_input"), Output: ptr("long_context_output"),
		CacheWrite: ptr("long_context_cache_write"), CacheWrite1h: ptr("long_context_cache_write_1h"), CacheRead: ptr("long_context_cache_read")}
	if lc.Input != nil || lc.Output != nil || lc.CacheWrite != nil || lc.CacheWrite1h != nil || lc.CacheRead != nil {
		lp.LongContext = &lc
	}
	if global {
		if g, ok := mp.Geo["input"]; ok && lp.Prices.Input != nil && *lp.Prices.Input > 0 {
			prem := math.Round((g.USD / *lp.Prices.Input - 1)*1e6) / 1e6
			if prem >= 0 {
				lp.RegionalPremium = &prem
			}
		}
	}
	return lp, len(lp.AsOf) > 0, notes
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// byName finds a model by its name with the quota matcher's rules (the
// Price List names models as Service Quotas does); a context-length variant
// is not the model itself.
func byName(q *model.QuotaMatcher) func(string) (int, bool) {
	return func(n string) (int, bool) {
		m := q.Match(n)
		return m.Index, m.Index >= 0 && m.Variant == ""
	}
}

// ForAccount matches the sheet's models to the account's Bedrock models by
// name (the Price List's "Claude Sonnet 4.6", "Nova Lite" against
// ListFoundationModels' modelName, with or without a trailing "Instruct")
// and renders their prices for the snapshot.
func (s *Sheet) ForAccount(ms []model.AccountModel, endpoint string) *model.PriceList {
	pl := &model.PriceList{Endpoint: endpoint, Models: map[string]model.ListedPrices{},
		Unclassified: s.Unclassified, Notes: slices.Clone(s.Notes)}
	exact := byName(model.NewQuotaMatcher(ms))
	bare := make([]model.AccountModel, len(ms))
	for i, m := range ms {
		bare[i] = m
		bare[i].Name = strings.TrimSuffix(strings.TrimSpace(m.Name), " Instruct")
	}
	loose := byName(model.NewQuotaMatcher(bare))
	for _, n := range sortedKeys(s.Models) {
		i, ok := exact(n)
		if !ok {
			i, ok = loose(n)
		}
		for _, alt := range []string{spelled(n), wholeVersion(n)} {
			if !ok && alt != "" && alt != n {
				i, ok = exact(alt)
			}
		}
		if !ok {
			pl.Unmatched = append(pl.Unmatched, n)
			continue
		}
		lp, ok, notes := s.Models[n].Listed()
		pl.Notes = append(pl.Notes, notes...)
		if !ok {
			continue
		}
		if _, dup := pl.Models[ms[i].ID]; dup {
			pl.Notes = append(pl.Notes, fmt.Sprintf("%q: a second Price List model for %s is not used", n, ms[i].ID))
			continue
		}
		pl.Models[ms[i].ID] = lp
	}
	return pl
}

// spelled reads a model name the Price List writes as a code, as the
// titanModel of Titan Text Embeddings V2 is ("TitanEmbeddingsV2-Text-input",
// as public Price List readers quote it, 2026; testdata/SOURCES.md): words
// split at "-" and at a lower-to-upper change, and a trailing "input" or
// "output" (the quantity the row prices, not the model) dropped. "" when n
// has spaces (a name, not a code).
func spelled(n string) string {
	if strings.ContainsAny(n, " ") {
		return ""
	}
	var ws []string
	for _, part := range strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' }) {
		start := 0
		for i := 1; i < len(part); i++ {
			if unicode.IsUpper(rune(part[i])) && unicode.IsLower(rune(part[i-1])) {
				ws = append(ws, part[start:i])
				start = i
			}
		}
		ws = append(ws, part[start:])
	}
	if last := len(ws) - 1; last > 0 && (strings.EqualFold(ws[last], "input") || strings.EqualFold(ws[last], "output")) {
		ws = ws[:last]
	}
	return strings.Join(ws, " ")
}

// wholeVersion reads a version the Price List writes with ".0" as the
// whole number ListFoundationModels names: the Price List's "Nova 2.0 Lite"
// is "Nova 2 Lite" (public Price List readers map it by hand, 2026;
// testdata/SOURCES.md). n unchanged when it has no such version.
func wholeVersion(n string) string {
	ws := strings.Fields(n)
	for i, w := range ws {
		if whole, ok := strings.CutSuffix(w, ".0"); ok && whole != "" && strings.Trim(whole, "0123456789") == "" {
			ws[i] = whole
		}
	}
	return strings.Join(ws, " ")
}

// AccountReader reads the Price List for the account's Region and stores
// what it lists for the account's models in the snapshot (the refresh's
// price reader).
type AccountReader struct {
	Reader Reader
}

// Read fills a.PriceList from both service codes, read side by side (each
// is a dozen pages a Region: the cold start waits for them); a failed read
// is returned for the refresh to name as a gap.
func (r *AccountReader) Read(ctx context.Context, a *model.Account) error {
	codes := []string{ServiceBedrock, ServiceFoundationModels}
	products := make([][]Product, len(codes))
	errs := make([]error, len(codes))
	var wg sync.WaitGroup
	for i, code := range codes {
		wg.Go(func() { products[i], errs[i] = r.Reader.Products(ctx, code, a.Region) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	a.PriceList = BuildSheet(slices.Concat(products...)).ForAccount(a.Bedrock, EndpointRegion(a.Region))
	return nil
}
