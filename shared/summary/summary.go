// Package summary answers "how many of a job's records say what": counts by
// the values of an output_json field, numeric statistics of a field and
// failures by code, over a stream of records in bounded memory, so a whole
// job is summarized without paging it into a tool answer.
package summary

import (
	"bytes"
	"cmp"
	"encoding/json"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// Bounds of a summary.
const (
	DefaultTop = 10
	MaxTop     = 100
	// MaxDistinct bounds the values counted apart; past it, new values count
	// as other (ValuesCapped).
	MaxDistinct = 10_000
	// Reservoir is how many values the quantiles are taken from: exact up to
	// it, a uniform sample of the values beyond.
	Reservoir = 16_384
	// MaxFieldLen bounds a field path.
	MaxFieldLen = 256
)

// Query is what to summarize. Field and StatsField are paths into
// output_json: member names joined by "." ("category", "scores.overall").
type Query struct {
	// Field counts the records by its values (top Top, the rest as other).
	Field string
	Top   int
	// StatsField takes the numeric statistics of its values.
	StatsField string
	// Status keeps only succeeded or failed records ("" or all: every one).
	Status string
	// WhereField / WhereValue keep only records whose WhereField is WhereValue.
	WhereField, WhereValue string
}

// Count is one value and how many records have it.
type Count struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// Stats are the numeric statistics of a field.
type Stats struct {
	Field string  `json:"field"`
	Count int     `json:"count"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	// Approximate: more values than Reservoir; p50 and p90 are of a uniform sample.
	Approximate bool `json:"approximate,omitempty"`
	// NotNumbers counts records whose field is there but is not a number.
	NotNumbers int `json:"not_numbers,omitempty"`
}

// Summary is a summarized record stream.
type Summary struct {
	Records   int `json:"records"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	// Field's values, most frequent first (ties by value), the rest in Other;
	// Missing counts records without the field (or without output_json).
	Field        string  `json:"field,omitempty"`
	Values       []Count `json:"values,omitempty"`
	Other        int     `json:"other,omitempty"`
	Missing      int     `json:"missing,omitempty"`
	ValuesCapped bool    `json:"values_capped,omitempty"`
	Stats        *Stats  `json:"stats,omitempty"`
	// Failures are the failed records by error code, most frequent first.
	Failures []Count `json:"failures,omitempty"`
}

// Check refuses a bad query, naming the field.
func (q *Query) Check() error {
	switch {
	case q.Top == 0:
		q.Top = DefaultTop
	case q.Top < 1 || q.Top > MaxTop:
		return job.Fieldf("top", "must be 1..%d (got %d)", MaxTop, q.Top)
	}
	switch q.Status {
	case "", job.ResultsAll, string(job.RecordSucceeded), string(job.RecordFailed):
	default:
		return job.Fieldf("status", "must be one of all, succeeded, failed (got %q)", q.Status)
	}
	for _, f := range []struct{ name, v string }{{"field", q.Field}, {"stats_field", q.StatsField}, {"where_field", q.WhereField}} {
		if len(f.v) > MaxFieldLen {
			return job.Fieldf(f.name, "at most %d characters (got %d)", MaxFieldLen, len(f.v))
		}
		if f.v != "" && slices.Contains(strings.Split(f.v, "."), "") {
			return job.Fieldf(f.name, "%q is not a path: member names joined by \".\", e.g. category or scores.overall", f.v)
		}
	}
	if (q.WhereField == "") != (q.WhereValue == "") {
		return job.Fieldf("where_value", "where_field and where_value go together")
	}
	return nil
}

// Summarize reads recs to the end (or their first error) and summarizes
// those q keeps. Its memory is bounded by MaxDistinct values, Reservoir
// numbers and the failure codes, whatever the number of records.
func Summarize(recs iter.Seq2[job.Record, error], q Query) (Summary, error) {
	if err := q.Check(); err != nil {
		return Summary{}, err
	}
	a := newAcc(q)
	for r, err := range recs {
		if err != nil {
			return Summary{}, err
		}
		a.add(&r)
	}
	return a.result(), nil
}

type acc struct {
	q                  Query
	field, stats, wher []string
	sum                Summary
	values             map[string]int
	failures           map[string]int
	n                  int
	total, min, max    float64
	sample             []float64
	rng                *rand.Rand
	notNumbers         int
}

func newAcc(q Query) *acc {
	split := func(p string) []string {
		if p == "" {
			return nil
		}
		return strings.Split(p, ".")
	}
	return &acc{q: q, field: split(q.Field), stats: split(q.StatsField), wher: split(q.WhereField),
		values: map[string]int{}, failures: map[string]int{}, min: math.Inf(1), max: math.Inf(-1),
		rng: rand.New(rand.NewPCG(1, 2))}
}

func (a *acc) add(r *job.Record) {
	switch a.q.Status {
	case string(job.RecordSucceeded), string(job.RecordFailed):
		if string(r.Status) != a.q.Status {
			return
		}
	}
	if a.wher != nil {
		v, ok := a.lookup(r, a.wher)
		if !ok || text(v) != a.q.WhereValue {
			return
		}
	}
	a.sum.Records++
	if r.Status == job.RecordSucceeded {
		a.sum.Succeeded++
	} else {
		a.sum.Failed++
		a.failures[cmp.Or(r.ErrorCode, "unknown")]++
	}
	if a.field != nil {
		switch v, ok := a.lookup(r, a.field); {
		case !ok:
			a.sum.Missing++
		default:
			t := text(v)
			if _, seen := a.values[t]; seen || len(a.values) < MaxDistinct {
				a.values[t]++
			} else {
				a.sum.Other++
				a.sum.ValuesCapped = true
			}
		}
	}
	if a.stats != nil {
		if v, ok := a.lookup(r, a.stats); ok {
			x, err := strconv.ParseFloat(string(v), 64)
			if err != nil || bytes.HasPrefix(v, []byte(`"`)) {
				a.notNumbers++
			} else {
				a.number(x)
			}
		}
	}
}

// number takes x into the statistics: exact count, min, max and mean, and
// the quantile reservoir (Vitter's algorithm R).
func (a *acc) number(x float64) {
	a.n++
	a.total += x
	a.min, a.max = min(a.min, x), max(a.max, x)
	if len(a.sample) < Reservoir {
		a.sample = append(a.sample, x)
		return
	}
	if i := a.rng.IntN(a.n); i < Reservoir {
		a.sample[i] = x
	}
}

// lookup is the value at path in r's output_json.
func (a *acc) lookup(r *job.Record, path []string) (json.RawMessage, bool) {
	v, ok := []byte(r.OutputJSON), r.OutputJSON != ""
	for _, name := range path {
		if !ok {
			break
		}
		v, ok = member(v, name)
	}
	return v, ok
}

// text is a value as counted: a string as itself, anything else as its JSON.
func text(v json.RawMessage) string {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(v))
}

func (a *acc) result() Summary {
	s := a.sum
	if a.field != nil {
		s.Field = a.q.Field
		all := sorted(a.values)
		if len(all) > a.q.Top {
			for _, c := range all[a.q.Top:] {
				s.Other += c.Count
			}
			all = all[:a.q.Top]
		}
		s.Values = all
	}
	if a.stats != nil {
		st := &Stats{Field: a.q.StatsField, Count: a.n, NotNumbers: a.notNumbers, Approximate: a.n > Reservoir}
		if a.n > 0 {
			slices.Sort(a.sample)
			st.Min, st.Max, st.Mean = a.min, a.max, a.total/float64(a.n)
			st.P50, st.P90 = quantile(a.sample, 0.5), quantile(a.sample, 0.9)
		}
		s.Stats = st
	}
	s.Failures = sorted(a.failures)
	return s
}

// quantile is the q-quantile of sorted xs, interpolated between ranks.
func quantile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(xs)-1)
	return xs[lo] + (xs[hi]-xs[lo])*(pos-float64(lo))
}

func sorted(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for v, n := range m {
		out = append(out, Count{Value: v, Count: n})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Value, b.Value)) })
	return out
}
