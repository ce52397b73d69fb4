package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDemoAsTheReadmeSays: make demo generates the sample corpus of the
// number of documents the tool reference states, runs support-triage
// offline, and prints report paths that exist.
func TestDemoAsTheReadmeSays(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "mcpserver", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`make demo # generates a ([0-9]+)-document sample corpus, runs ([a-z-]+) offline, prints the report paths`).FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("the tool reference does not describe make demo")
	}
	dir := t.TempDir()
	var out strings.Builder
	if err := run(dir, m[2], "2026-11-27", "../pipelines/pipelines.json", &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	// A document is a file or a .jsonl line; each becomes a record or is skipped.
	sub := regexp.MustCompile(`submitted \([a-z_]+, ([0-9]+) records, ([0-9]+) documents skipped\)`).FindStringSubmatch(out.String())
	if sub == nil {
		t.Fatalf("the demo does not say what it submitted:\n%s", out.String())
	}
	recs, _ := strconv.Atoi(sub[1])
	skipped, _ := strconv.Atoi(sub[2])
	if strconv.Itoa(recs+skipped) != m[1] {
		t.Errorf("the demo ran over %d documents (%d records, %d skipped); the README says %s", recs+skipped, recs, skipped, m[1])
	}
	reports := regexp.MustCompile(`(?m)^report: (\S+)$`).FindAllStringSubmatch(out.String(), -1)
	if len(reports) != 3 {
		t.Fatalf("printed %d report paths:\n%s", len(reports), out.String())
	}
	for _, r := range reports {
		if _, err := os.Stat(r[1]); err != nil {
			t.Errorf("printed report path %s: %v", r[1], err)
		}
	}
}
