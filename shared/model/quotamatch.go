package model

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Service Quotas names models its own way, not as ListFoundationModels does
// (names as seen in the bedrock quotas, testdata/quota_names.tsv, read
// 2026-12-03): the provider in front or not ("Anthropic Claude 3 Haiku",
// "Claude 3 Haiku"), a "V1" AWS appends to a model's first version ("Nova
// Lite V1", "Anthropic Claude Sonnet 4.5 V1"), context-length variants with
// their own rates ("… V1 1M Context Length"), a parenthesised version where
// the model has a marketing number too ("Mistral Large 2 (24.07)" for
// "Mistral Large (24.07)"), short names on the batch quotas ("Qwen3 235B")
// and long ones on the on-demand rates ("Qwen3 235B a22b 2507 V1") of one
// model, word order, case, and typos ("Mistral AI Mixtral 8X7BB Instruct",
// L-490F4D1F). QuotaMatcher reads past all of that; a name it cannot place
// on exactly one model is reported, never guessed.

// quotaTypos are AWS's own misspellings in quota names, token for token.
var quotaTypos = map[string]string{
	"8x7bb": "8x7b", // "On-demand model inference tokens per minute for Mistral AI Mixtral 8X7BB Instruct" (L-490F4D1F)
}

// quotaFiller are words either side may carry or drop for one model:
// "Mistral 7B Instruct" is "Mistral AI Mistral 7B Instruct" in one quota,
// Gemma's "IT" is its instruction tuning, "Qwen3 Coder 30B A3B Instruct" is
// "Qwen3 Coder 30B a3b V1".
var quotaFiller = []string{"instruct", "it"}

// quotaVariant is a context-length variant suffix: "… 1M Context Length".
var quotaVariant = regexp.MustCompile(`(?i)\s+(\d+[km])\s+context\s+length$`)

// datedVersion is a version written as YY.MM ("24.07"), the same as the
// "2407" of a model id.
var datedVersion = regexp.MustCompile(`^\d\d\.\d\d$`)

// QuotaMatch is where a quota's model name led.
type QuotaMatch struct {
	// Index is the model's index in the matcher's list (-1: unmatched).
	Index int
	// Variant is a context-length variant ("1M context length") whose rates
	// are not the model's own.
	Variant string
	// Reason says why a name matched no model (empty when it matched).
	Reason string
}

// QuotaMatcher finds the model a quota names among an account's models.
type QuotaMatcher struct {
	models    []AccountModel
	providers map[string]bool
	exact     map[string]int // sorted tokens of a name or id -> first model
	names     [][]string     // per model: its name's tokens
	ids       [][]string     // per model: its id's tokens
}

// NewQuotaMatcher indexes ms (ListFoundationModels' order; the first model
// wins a name several share, as the base id sorts before its context-length
// variants "…:0:48k").
func NewQuotaMatcher(ms []AccountModel) *QuotaMatcher {
	q := &QuotaMatcher{models: ms, providers: map[string]bool{}, exact: make(map[string]int, 2*len(ms)),
		names: make([][]string, len(ms)), ids: make([][]string, len(ms))}
	for _, m := range ms {
		for _, w := range rawTokens(m.Provider) {
			q.providers[w] = true
		}
	}
	for i := range ms {
		q.names[i], q.ids[i] = q.tokens(ms[i].Name), q.tokens(idName(ms[i].ID))
		for _, k := range [][]string{q.names[i], q.ids[i]} {
			if len(k) == 0 {
				continue
			}
			s := setKey(k)
			if _, ok := q.exact[s]; !ok {
				q.exact[s] = i
			}
		}
	}
	return q
}

// Match places a quota's model name (ParseQuotaName's second result).
func (q *QuotaMatcher) Match(quotaModel string) QuotaMatch {
	name := strings.TrimSpace(quotaModel)
	variant := ""
	if m := quotaVariant.FindStringSubmatch(name); m != nil {
		variant = strings.ToUpper(m[1]) + " context length"
		name = name[:len(name)-len(m[0])]
	}
	toks := q.tokens(name)
	if len(toks) == 0 {
		return QuotaMatch{Index: -1, Reason: "no model name in the quota"}
	}
	if i, ok := q.exact[setKey(toks)]; ok {
		return QuotaMatch{Index: i, Variant: variant}
	}
	// A dated version ("(24.07)") both carry identifies the model even where
	// the quota adds a bare marketing number ("Mistral Large 2 (24.07)").
	dated := q.candidates(true, func(k []string) bool {
		return subset(k, toks) && slices.ContainsFunc(k, func(t string) bool { return len(t) == 4 && isDigits(t) }) &&
			!slices.ContainsFunc(toks, func(t string) bool { return !slices.Contains(k, t) && !isDigits(t) })
	})
	if len(dated) == 1 {
		return QuotaMatch{Index: dated[0], Variant: variant}
	}
	// A short name whose model's name adds only qualifiers after it: the
	// batch quotas' "Qwen3 235B" for "Qwen3 235B A22B 2507". Names only: an
	// id's "claude-sonnet-4-5" would make "Claude Sonnet 4" a short name.
	short := q.candidates(false, func(k []string) bool {
		return len(k) > len(toks) && slices.Equal(k[:len(toks)], toks) && !slices.ContainsFunc(k[len(toks):], func(t string) bool { return !qualifier(t) })
	})
	switch {
	case len(short) == 1:
		return QuotaMatch{Index: short[0], Variant: variant}
	case len(short) > 1 || len(dated) > 1:
		var ids []string
		for _, i := range append(dated, short...) {
			ids = append(ids, q.models[i].ID)
		}
		return QuotaMatch{Index: -1, Reason: "names several models: " + strings.Join(uniq(ids), ", ")}
	}
	return QuotaMatch{Index: -1, Reason: "no model the account lists has this name"}
}

func (q *QuotaMatcher) candidates(withIDs bool, ok func(k []string) bool) []int {
	var out []int
	for i := range q.models {
		if (len(q.names[i]) > 0 && ok(q.names[i])) || (withIDs && len(q.ids[i]) > 0 && ok(q.ids[i])) {
			out = append(out, i)
		}
	}
	return out
}

// tokens normalizes a model name: lower case, words split at punctuation
// ("+" is "plus": "Command R+" is "Command R Plus" in quotas), typos fixed,
// "24.07" as "2407", the provider's words in front dropped, filler dropped,
// and a trailing "v1" dropped (AWS's suffix for a first version; "V2" names
// another model: "Claude 3.5 Sonnet v2").
func (q *QuotaMatcher) tokens(s string) []string {
	in := rawTokens(s)
	out := make([]string, 0, len(in))
	lead := true
	for _, t := range in {
		if fix, ok := quotaTypos[t]; ok {
			t = fix
		}
		if datedVersion.MatchString(t) {
			t = strings.ReplaceAll(t, ".", "")
		}
		if lead && q.providers[t] {
			continue
		}
		lead = false
		if slices.Contains(quotaFiller, t) {
			continue
		}
		out = append(out, t)
	}
	for len(out) > 1 && (out[len(out)-1] == "v1" || out[len(out)-1] == "v1.0") {
		out = out[:len(out)-1]
	}
	return out
}

func rawTokens(s string) []string {
	s = strings.ReplaceAll(strings.ToLower(s), "+", " plus ")
	f := strings.FieldsFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' })
	out := f[:0]
	for _, t := range f {
		if t = strings.Trim(t, "."); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// idName is a model id read as a name: "qwen.qwen3-235b-a22b-2507-v1:0" is
// "qwen3 235b a22b 2507", "deepseek.v3-v1:0" is "v3", "anthropic.claude-v2"
// is "claude v2", "openai.gpt-oss-120b-1:0" is "gpt oss 120b".
func idName(id string) string {
	if _, rest, ok := strings.Cut(id, "."); ok {
		id = rest
	}
	id, _, _ = strings.Cut(id, ":")
	for _, suf := range []string{"-v1", "-v0", "-1"} {
		if s, ok := strings.CutSuffix(id, suf); ok && s != "" {
			id = s
			break
		}
	}
	return strings.ReplaceAll(id, "-", " ")
}

func setKey(toks []string) string {
	s := slices.Clone(toks)
	slices.Sort(s)
	return strings.Join(slices.Compact(s), " ")
}

func subset(small, big []string) bool {
	return !slices.ContainsFunc(small, func(t string) bool { return !slices.Contains(big, t) })
}

// qualifier is a word a model's name may carry past its quotas' short name:
// one with a digit ("a22b", "2507") or "dense" (Qwen3 32B (dense)); not a
// version ("v2": "Claude 3.5 Sonnet v2" is not "Claude 3.5 Sonnet").
func qualifier(t string) bool {
	if version.MatchString(t) {
		return false
	}
	return t == "dense" || strings.ContainsAny(t, "0123456789")
}

var version = regexp.MustCompile(`^v\d`)

func isDigits(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
}

// QuotaMiss is a quota model name no model took, for the refresh report.
type QuotaMiss struct {
	// Name is the model name as the quotas write it.
	Name string `json:"name"`
	// Quotas counts the quotas naming it.
	Quotas int    `json:"quotas"`
	Reason string `json:"reason"`
}

func (m QuotaMiss) String() string {
	return fmt.Sprintf("%s (%d quotas): %s", m.Name, m.Quotas, m.Reason)
}
