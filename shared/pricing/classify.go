package pricing

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Kinds of a price dimension.
const (
	KindInput      = "input"
	KindOutput     = "output"
	KindCacheRead  = "cache_read"
	KindCacheWrite = "cache_write"
	KindPerImage   = "per_image"
	KindPerSecond  = "per_second"
	// KindNotInference is a product that is not on-demand or batch
	// inference of a base model (provisioned/reserved throughput, custom
	// models, customization, storage): known, and not a price of this suite.
	KindNotInference = "not_inference"
)

// Class is what a price dimension prices.
type Class struct {
	Kind string
	// TTL is a cache write's lifetime: "5m" or "1h".
	TTL         string
	Batch       bool
	Global      bool
	LongContext bool
	// Tier is the on-demand service tier: "" (standard), "flex", "priority".
	Tier string
}

// Field is the class's price name as the catalog spells it ("input",
// "batch_cache_write_1h", "flex_output", "long_context_cache_read", ...);
// "" for the kinds that are not per-token prices.
func (c Class) Field() string {
	var f string
	switch c.Kind {
	case KindInput, KindOutput, KindCacheRead:
		f = c.Kind
	case KindCacheWrite:
		f = KindCacheWrite
		if c.TTL == "1h" {
			f += "_1h"
		}
	default:
		return ""
	}
	switch {
	case c.Tier != "":
		return c.Tier + "_" + f
	case c.LongContext:
		return "long_context_" + f
	case c.Batch:
		return "batch_" + f
	}
	return f
}

// String names the class for reports and tests ("input global", "cache_write
// 1h batch", ...).
func (c Class) String() string {
	parts := []string{c.Kind}
	if c.TTL != "" {
		parts = append(parts, c.TTL)
	}
	for _, m := range []struct {
		on   bool
		name string
	}{{c.Batch, "batch"}, {c.Tier != "", c.Tier}, {c.LongContext, "long_context"}, {c.Global, "global"}} {
		if m.on {
			parts = append(parts, m.name)
		}
	}
	return strings.Join(parts, " ")
}

// words splits a usage type into lower-case words at "_", "-", ":", ".",
// spaces, lower-to-upper and letter-to-digit changes:
// "CacheWrite1hInputTokenCount_Global" is cache write 1h input token count
// global.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == ':' || r == ' ' || r == '/':
			flush()
			continue
		case i > 0 && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]):
			flush()
		case i > 0 && unicode.IsDigit(r) && unicode.IsLetter(rs[i-1]):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// usageWords is the part of a usage type that says what is priced: the
// region prefix ("USE1-MP:USE1_", "USE1-", "EU-") and the "-Units" suffix
// go; on AmazonBedrock the model's name, which comes before the first word
// of a kind, goes too.
func usageWords(serviceCode, usageType string) []string {
	u := usageType
	if i := strings.Index(u, "-MP:"); i >= 0 {
		u = u[i+len("-MP:"):]
		if j := strings.IndexByte(u, '_'); j >= 0 {
			u = u[j+1:]
		}
	} else if j := strings.IndexByte(u, '-'); j >= 0 {
		u = u[j+1:]
	}
	u = strings.TrimSuffix(u, "-Units")
	ws := words(u)
	if serviceCode == ServiceFoundationModels {
		return ws
	}
	for i, w := range ws {
		if kindWords[w] {
			return ws[i:]
		}
	}
	return nil
}

var kindWords = map[string]bool{
	"input": true, "output": true, "response": true, "cache": true, "prompt": true,
	"image": true, "images": true, "second": true, "seconds": true, "video": true, "audio": true,
}

// knownWords are the other words a price dimension's usage type may carry;
// a word outside both sets makes the dimension unclassified (a new variant
// AWS added is reported, not read as the plain price).
var knownWords = map[string]bool{
	"read": true, "write": true, "1h": true, "5m": true, "token": true, "tokens": true, "count": true,
	"units": true, "unit": true, "million": true, "batch": true, "flex": true, "priority": true, "global": true,
	"standard": true, "long": true, "ctx": true, "context": true, "cross": true, "region": true, "regional": true,
	"geo": true, "text": true, "created": true, "generated": true,
}

// notInference are words that mark a product other than inference of a
// base model on demand or in batch, in its usage type or in its
// AmazonBedrock feature ("Model Customization", "Custom Model Import",
// "Provisioned Throughput"); any other feature without "inference" is
// reported.
var notInference = []string{"reserved", "provisioned", "customization", "training", "storage", "evaluation", "distillation", "tpm", "import"}

// Classify says what dimension d of product p prices, from the usage type
// (the product's usagetype attribute), the AmazonBedrock attributes feature
// and inferenceType, the unit and the description. An error says why it
// cannot: the caller reports it.
func Classify(p Product, d Dimension) (Class, error) {
	usage := p.Attributes["usagetype"]
	all := words(usage)
	feature := strings.ToLower(p.Attributes["feature"])
	if slices.ContainsFunc(all, func(w string) bool { return slices.Contains(notInference, w) }) ||
		(slices.Contains(all, "custom") && slices.Contains(all, "model")) ||
		slices.ContainsFunc(words(feature), func(w string) bool { return slices.Contains(notInference, w) || w == "custom" }) {
		return Class{Kind: KindNotInference}, nil
	}
	if feature != "" && !strings.Contains(feature, "inference") {
		return Class{}, fmt.Errorf("feature %q is not one this reader knows", p.Attributes["feature"])
	}
	ws := usageWords(p.ServiceCode, usage)
	if len(ws) == 0 {
		return Class{}, fmt.Errorf("usage type %q names no priced quantity", usage)
	}
	inference := strings.ToLower(p.Attributes["inferenceType"])
	tier := strings.ToLower(p.Attributes["service_tier"]) // present on some AmazonBedrock rows only
	var c Class
	has := func(w string) bool { return slices.Contains(ws, w) }
	for _, w := range ws {
		if !kindWords[w] && !knownWords[w] {
			return Class{}, fmt.Errorf("usage type %q: word %q is not a known price variant", usage, w)
		}
	}
	unitDesc := strings.ToLower(d.Unit + " " + d.Description)
	switch {
	case has("cache") && has("read"):
		c.Kind = KindCacheRead
	case has("cache") && has("write"):
		c.Kind, c.TTL = KindCacheWrite, "5m"
		if has("1h") {
			c.TTL = "1h"
		}
	case has("image") || has("images"):
		if !strings.Contains(unitDesc, "image") || strings.Contains(unitDesc, "token") {
			return Class{}, fmt.Errorf("usage type %q: image dimension in unit %q", usage, d.Unit)
		}
		c.Kind = KindPerImage
	case has("second") || has("seconds") || has("video") || has("audio"):
		if !strings.Contains(unitDesc, "second") {
			return Class{}, fmt.Errorf("usage type %q: media dimension in unit %q", usage, d.Unit)
		}
		c.Kind = KindPerSecond
	case has("input"):
		c.Kind = KindInput
	case has("output") || has("response"):
		c.Kind = KindOutput
	default:
		return Class{}, fmt.Errorf("usage type %q names no priced quantity", usage)
	}
	c.Batch = has("batch") || strings.Contains(feature, "batch") || strings.Contains(inference, "batch") || tier == "batch"
	c.Global = has("global")
	c.LongContext = has("long") && (has("ctx") || has("context"))
	switch {
	case has("flex") || strings.Contains(inference, "flex") || tier == "flex":
		c.Tier = "flex"
	case has("priority") || strings.Contains(inference, "priority") || tier == "priority":
		c.Tier = "priority"
	}
	if tier != "" && tier != "standard" && tier != "batch" && tier != c.Tier {
		return Class{}, fmt.Errorf("usage type %q: service_tier %q", usage, p.Attributes["service_tier"])
	}
	if c.Tier != "" && (c.Batch || c.LongContext) {
		return Class{}, fmt.Errorf("usage type %q: a %s tier price of a batch or long-context kind", usage, c.Tier)
	}
	return c, nil
}

// PerMillion normalizes a token price to USD per million tokens from its
// unit ("1K tokens", "1M tokens", or "Units" with a description saying
// "Million" or "thousand"); an unknown unit is an error, never a guess.
func PerMillion(d Dimension) (float64, error) {
	unit := strings.ToLower(strings.TrimSpace(d.Unit))
	desc := strings.ToLower(d.Description)
	switch unit {
	case "1k tokens", "1000 tokens":
		return d.USD * 1000, nil
	case "1m tokens", "1000000 tokens":
		return d.USD, nil
	case "tokens", "token":
		return d.USD * 1e6, nil
	case "units", "unit":
		switch {
		case strings.Contains(desc, "million"):
			return d.USD, nil
		case strings.Contains(desc, "thousand"):
			return d.USD * 1000, nil
		}
	}
	return 0, fmt.Errorf("unit %q (%q) is not a token count this reader knows", d.Unit, d.Description)
}
