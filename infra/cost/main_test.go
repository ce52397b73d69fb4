package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRun measures the jobs at a small scale through the metered local
// suite, each priced in both layouts from its one run: in today's layout
// every record is at least one WRU (so at least 1,000,000 once
// extrapolated), packed far fewer; each bill is printed next to its
// inference cost.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), 120, false, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	t.Log(s)
	if got := strings.Count(s, "suite / inference:"); got != 2*len(jobs) {
		t.Fatalf("%d bills priced against inference, want %d:\n%s", got, 2*len(jobs), s)
	}
	var wru []float64
	for _, m := range regexp.MustCompile(`writes: record items\s+([0-9.]+) WRU`).FindAllStringSubmatch(s, -1) {
		w, _ := strconv.ParseFloat(m[1], 64)
		wru = append(wru, w)
	}
	if len(wru) != 2*len(jobs) {
		t.Fatalf("%d record write lines, want %d", len(wru), 2*len(jobs))
	}
	for i := 0; i < len(wru); i += 2 {
		packed, today := wru[i], wru[i+1]
		if today < 1_000_000 {
			t.Errorf("today's layout writes %v WRU for 1,000,000 records, want at least one each", today)
		}
		if packed >= today/2 {
			t.Errorf("packed %v WRU against today's %v, want far fewer", packed, today)
		}
	}
	for _, want := range []string{"extrapolated LINEARLY", "Lambda           ingest requests", "EventBridge", "https://aws.amazon.com/dynamodb/pricing/on-demand/", "Nova Micro"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestRunJSON: -json is one document with a line per job and layout, its
// share the suite's cost over the inference's.
func TestRunJSON(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), 60, true, &out); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs []Line `json:"jobs"`
	}
	dec := json.NewDecoder(strings.NewReader(out.String()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out.String())
	}
	if len(doc.Jobs) != 2*len(jobs) {
		t.Fatalf("%d lines, want %d", len(doc.Jobs), 2*len(jobs))
	}
	models := map[string]bool{}
	for _, l := range doc.Jobs {
		models[l.Model] = true
		if l.Records != target || l.SuiteUSD <= 0 || l.InferenceUSD <= 0 || l.Share != l.SuiteUSD/l.InferenceUSD {
			t.Errorf("line %+v", l)
		}
		if l.InputTokensPerRecord < 400 || l.InputTokensPerRecord > 600 {
			t.Errorf("%s: %d input tokens a record, want about %d", l.Model, l.InputTokensPerRecord, promptTokens)
		}
	}
	for _, m := range []string{"anthropic.claude-haiku-4-5-20251001-v1:0", "amazon.nova-micro-v1:0", "amazon.titan-embed-text-v2:0"} {
		if !models[m] {
			t.Errorf("no line for %s", m)
		}
	}
}
