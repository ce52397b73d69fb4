package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(2, 1024, 0, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "records=2048") || !strings.Contains(out.String(), "peak_rss_mb=") {
		t.Fatalf("output %q", out.String())
	}
}
