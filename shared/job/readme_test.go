package job

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeRetryableCodes: every error code the retry_failed section of the
// tool reference calls retryable is one Retryable takes (`5xx` standing for
// every 5xx status).
func TestReadmeRetryableCodes(t *testing.T) {
	b, err := os.ReadFile("../mcpserver/README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	m := regexp.MustCompile("`retryable` \\(only failures worth another try: (.*?)\\), or `ids`").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("no list of retryable codes")
	}
	codes := regexp.MustCompile("`([A-Za-z0-9_]+)`").FindAllStringSubmatch(m[1], -1)
	if len(codes) < 8 {
		t.Fatalf("found %d codes in %q", len(codes), m[1])
	}
	for _, c := range codes {
		tries := []string{c[1]}
		if c[1] == "5xx" {
			tries = []string{"500", "502", "503", "504", "599"}
		}
		for _, code := range tries {
			if !Retryable(code) {
				t.Errorf("the README calls %s retryable; Retryable(%q) is false", c[1], code)
			}
		}
	}
}
