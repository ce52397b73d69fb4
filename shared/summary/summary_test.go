package summary

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

func seq(recs []job.Record) iter.Seq2[job.Record, error] {
	return func(yield func(job.Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func ok(js string) job.Record { return job.Record{Status: job.RecordSucceeded, OutputJSON: js} }

func TestSummarize(t *testing.T) {
	recs := []job.Record{
		ok(`{"category":"bug","score":1,"meta":{"lang":"en"}}`),
		ok(`{"category":"bug","score":2,"meta":{"lang":"fr"}}`),
		ok(`{"category":"billing","score":3,"meta":{"lang":"en"}}`),
		ok(`{"category":"other","score":"high"}`),
		ok(`{"score":10}`),
		{Status: job.RecordFailed, ErrorCode: job.RecordSchemaViolation},
		{Status: job.RecordFailed, ErrorCode: job.RecordSchemaViolation},
		{Status: job.RecordFailed, ErrorCode: "ThrottlingException"},
	}
	s, err := Summarize(seq(recs), Query{Field: "category", Top: 2, StatsField: "score"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Records != 8 || s.Succeeded != 5 || s.Failed != 3 || s.Missing != 4 || s.Other != 1 {
		t.Errorf("summary = %+v", s)
	}
	if fmt.Sprint(s.Values) != "[{bug 2} {billing 1}]" {
		t.Errorf("values = %v, want bug 2, billing 1 (ties by value), other 1", s.Values)
	}
	if fmt.Sprint(s.Failures) != "[{schema_violation 2} {ThrottlingException 1}]" {
		t.Errorf("failures = %v", s.Failures)
	}
	st := s.Stats
	if st.Count != 4 || st.NotNumbers != 1 || st.Min != 1 || st.Max != 10 || st.Mean != 4 || st.P50 != 2.5 || math.Abs(st.P90-7.9) > 1e-9 || st.Approximate {
		t.Errorf("stats = %+v", st)
	}
	nested, err := Summarize(seq(recs), Query{Field: "meta.lang", WhereField: "category", WhereValue: "bug"})
	if err != nil {
		t.Fatal(err)
	}
	if nested.Records != 2 || fmt.Sprint(nested.Values) != "[{en 1} {fr 1}]" {
		t.Errorf("where category=bug by meta.lang = %+v", nested)
	}
	failed, _ := Summarize(seq(recs), Query{Status: "failed"})
	if failed.Records != 3 || failed.Succeeded != 0 {
		t.Errorf("failed only = %+v", failed)
	}
	boom := errors.New("page failed")
	_, err = Summarize(func(yield func(job.Record, error) bool) { yield(job.Record{}, boom) }, Query{})
	if !errors.Is(err, boom) {
		t.Errorf("a failed page: %v", err)
	}
	for _, q := range []Query{{Top: MaxTop + 1}, {Status: "done"}, {Field: "a..b"}, {WhereField: "x"}} {
		var fe *job.FieldError
		if _, err := Summarize(seq(nil), q); !errors.As(err, &fe) {
			t.Errorf("query %+v: %v, want a field error", q, err)
		}
	}
}

// Past the reservoir the quantiles come from a uniform sample: near the
// true ones; count, min, max and mean stay exact.
func TestQuantilesBounded(t *testing.T) {
	const n = 200_000
	gen := func(yield func(job.Record, error) bool) {
		for i := range n {
			if !yield(ok(fmt.Sprintf(`{"x":%d}`, (i*7919)%n)), nil) {
				return
			}
		}
	}
	s, err := Summarize(gen, Query{StatsField: "x"})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Stats
	if st.Count != n || st.Min != 0 || st.Max != n-1 || st.Mean != float64(n-1)/2 || !st.Approximate {
		t.Fatalf("stats = %+v", st)
	}
	if math.Abs(st.P50-n*0.5) > n*0.02 || math.Abs(st.P90-n*0.9) > n*0.02 {
		t.Errorf("p50 %g p90 %g, want near %d and %d", st.P50, st.P90, n/2, n*9/10)
	}
}

func TestMember(t *testing.T) {
	doc := []byte(`{"a":"x,}\"y","b" : [1,{"c":"]"}] ,"d\u0065":{"f":true},"g":-1.5e3}`)
	for _, tc := range []struct{ name, want string }{
		{"a", `"x,}\"y"`}, {"b", `[1,{"c":"]"}]`}, {"de", `{"f":true}`}, {"g", `-1.5e3`}, {"z", ""},
	} {
		got, ok := member(doc, tc.name)
		if string(got) != tc.want || ok != (tc.want != "") {
			t.Errorf("member %s = %s %v, want %s", tc.name, got, ok, tc.want)
		}
	}
	if _, ok := member([]byte(`[1]`), "a"); ok {
		t.Error("member of an array")
	}
}

func TestFieldsOf(t *testing.T) {
	for _, tc := range []struct{ schema, field, stats string }{
		{`{"type":"object","properties":{"category":{"enum":["a","b"]},"confidence":{"type":"number"}}}`, "category", "confidence"},
		// Schema order, not name order; a free-text string is not counted by; an enum of numbers is a category.
		{`{"properties":{"summary":{"type":"string"},"urgent":{"type":"boolean"},"score":{"type":["integer","null"]},"level":{"type":"integer","enum":[1,2,3]},"z":{"type":"number"}}}`, "level", "score"},
		{`{"properties":{"note":{"type":"string"},"ok":{"type":"boolean"}}}`, "ok", ""},
		{`{"properties":{"kind":{"const":"x"}}}`, "kind", ""},
		{`{"type":"array","items":{}}`, "", ""},
		{`not json`, "", ""},
		{``, "", ""},
	} {
		field, stats := FieldsOf(tc.schema)
		if field != tc.field || stats != tc.stats {
			t.Errorf("FieldsOf(%s) = %q, %q; want %q, %q", tc.schema, field, stats, tc.field, tc.stats)
		}
	}
}
