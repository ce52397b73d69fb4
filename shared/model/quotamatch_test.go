package model

import (
	"os"
	"strings"
	"testing"
)

// readTSV reads a testdata table: # lines are comments, fields are tab-separated.
func readTSV(t *testing.T, path string, min int) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < min {
			t.Fatalf("%s:%d: %d fields, want at least %d", path, i+1, len(f), min)
		}
		rows = append(rows, f)
	}
	return rows
}

// TestQuotaNamesMatchModels: every real quota name of the table reaches the
// model it is for, or stays unmatched where the table says so on purpose.
func TestQuotaNamesMatchModels(t *testing.T) {
	var ms []AccountModel
	for _, r := range readTSV(t, "testdata/quota_models.tsv", 4) {
		ms = append(ms, AccountModel{ID: r[0], Name: r[1], Provider: r[2]})
	}
	rows := readTSV(t, "testdata/quota_names.tsv", 4)
	if len(rows) < 40 {
		t.Fatalf("%d quota names in the table, want at least 40", len(rows))
	}
	match := NewQuotaMatcher(ms)
	for _, r := range rows {
		name, want, variant, source := r[0], r[1], r[2], r[3]
		if source == "" {
			t.Errorf("%q: no source", name)
		}
		_, modelName, ok := ParseQuotaName(name)
		if !ok {
			t.Errorf("%q: not read as a model's quota", name)
			continue
		}
		got := match.Match(modelName)
		gotID := "-"
		if got.Index >= 0 {
			gotID = ms[got.Index].ID
		}
		if gotID != want || got.Variant != variant {
			t.Errorf("%q (model %q) = %s %q (%s), want %s %q", name, modelName, gotID, got.Variant, got.Reason, want, variant)
		}
		if gotID == "-" && got.Reason == "" {
			t.Errorf("%q: unmatched without a reason", name)
		}
	}
}

// A short name two models extend is reported with both, never given to one.
func TestQuotaMatchAmbiguous(t *testing.T) {
	m := NewQuotaMatcher([]AccountModel{
		{ID: "x.model-a-2507", Name: "Model 9B A1B 2507", Provider: "X"},
		{ID: "x.model-a-2604", Name: "Model 9B A1B 2604", Provider: "X"},
	})
	got := m.Match("X Model 9B")
	if got.Index != -1 || !strings.Contains(got.Reason, "x.model-a-2507") || !strings.Contains(got.Reason, "x.model-a-2604") {
		t.Errorf("Match = %+v, want unmatched naming both models", got)
	}
	if got := m.Match("Model 9B A1B 2604 V1"); got.Index != 1 {
		t.Errorf("exact name = %+v, want index 1", got)
	}
}
