package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRun measures both jobs at a small scale through the metered local suite:
// every record is written once (at least one WRU each, so at least 1,000,000
// once extrapolated), and each job's bill is printed next to its inference cost.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), 120, false, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	t.Log(s)
	if got := strings.Count(s, "suite / inference:"); got != 2 {
		t.Fatalf("%d jobs priced against inference, want 2:\n%s", got, s)
	}
	for _, m := range regexp.MustCompile(`writes: record items\s+([0-9.]+) WRU`).FindAllStringSubmatch(s, -1) {
		if wru, _ := strconv.ParseFloat(m[1], 64); wru < 1_000_000 {
			t.Errorf("record writes %v WRU for 1,000,000 records, want at least one each", wru)
		}
	}
	for _, want := range []string{"extrapolated LINEARLY", "Lambda           ingest requests", "EventBridge", "https://aws.amazon.com/dynamodb/pricing/on-demand/"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
