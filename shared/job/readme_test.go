package job

import (
	"os"
	"regexp"
	"strconv"
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

// TestReadmeLimits: the limits the READMEs state are the ones the code
// enforces (each constant's enforcement has its own test beside the code
// that uses it).
func TestReadmeLimits(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(b)), " ")
	}
	tools, root := read("../mcpserver/README.md"), read("../../README.md")
	for _, c := range []struct {
		text, re string
		want     int
	}{
		{tools, "Record ids are yours: any text up to ([0-9,]+) characters", MaxRecordIDLen},
		{tools, "records: \\[\\{[^`]*\\}\\]` \\(([0-9,]+)\\.\\.[0-9,]+ per provider job", BedrockMinRecords},
		{tools, "records: \\[\\{[^`]*\\}\\]` \\([0-9,]+\\.\\.([0-9,]+) per provider job", BedrockMaxRecords},
		{root, "the Bedrock minimum is ([0-9,]+) per job", BedrockMinRecords},
		{tools, "`on_demand` forces it \\(up to ([0-9,]+) records", MaxOnDemandRecords},
		{tools, "with bounded concurrency \\(default ([0-9]+)\\)", DefaultOnDemandConcurrency},
		{tools, "Bodies up to ([0-9,]+) bytes go inline", SageMakerMaxInlineBody},
		{tools, "stores the one result \\(inline under ~([0-9]+) KB", MaxInlineOutputBytes / 1024},
		{tools, "`max_tokens\\?` \\(1\\.\\.the model's `max_output_tokens`, in batch jobs its `batch_max_output` where listed; default ([0-9]+)\\)", DefaultMaxTokens},
	} {
		m := regexp.MustCompile(c.re).FindStringSubmatch(c.text)
		if m == nil {
			t.Errorf("no README text matches %s", c.re)
			continue
		}
		if got := strings.ReplaceAll(m[1], ",", ""); got != strconv.Itoa(c.want) {
			t.Errorf("%s: the README says %s, the code %d", c.re, m[1], c.want)
		}
	}
}

// TestReadmeStatusOrder: infra/README.md's "Job status only moves forward"
// chain is what CanMove allows: each status may move to any later one and
// never back, and a terminal status to nothing.
func TestReadmeStatusOrder(t *testing.T) {
	b, err := os.ReadFile("../../infra/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("Job status only moves forward: `([^`]*)`").FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("infra/README.md states no status order")
	}
	steps := strings.Split(m[1], " → ")
	last := strings.Split(steps[len(steps)-1], " | ")
	var order []Status
	for _, s := range steps[:len(steps)-1] {
		order = append(order, Status(strings.Trim(s, "()")))
	}
	for i, from := range order {
		for _, to := range order[i+1:] {
			if !CanMove(from, to) {
				t.Errorf("%s → %s: the README's order allows it, CanMove does not", from, to)
			}
			if CanMove(to, from) {
				t.Errorf("%s → %s: a move back, CanMove allows it", to, from)
			}
		}
		for _, end := range last {
			if !Status(end).Terminal() {
				t.Errorf("%s: the README ends the chain with it, it is not terminal", end)
			}
			if CanMove(Status(end), from) {
				t.Errorf("%s → %s: a move back from the end, CanMove allows it", end, from)
			}
		}
	}
}
