package console_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// stored is what a classification job's stored results say, counted here
// from get_job_results pages (not from summarize_results): records by
// output_json.category, records without one, and the confidence numbers.
type stored struct {
	records, missing, failed int
	byCategory               map[string]int
	failures                 map[string]int
	confidences              int
	min, max                 float64
}

func storedSummary(t *testing.T, page func(cursor string) mcpserver.ResultsOut) stored {
	t.Helper()
	s := stored{byCategory: map[string]int{}, failures: map[string]int{}, min: 2, max: -1}
	for cursor := ""; ; {
		p := page(cursor)
		for _, r := range p.Records {
			s.records++
			if r.Status == "failed" {
				s.failed++
				s.failures[cmp.Or(r.ErrorCode, "unknown")]++
			}
			out, _ := r.OutputJSON.(map[string]any)
			c, ok := out["category"].(string)
			if !ok {
				s.missing++
				continue
			}
			s.byCategory[c]++
			if x, ok := out["confidence"].(float64); ok {
				s.confidences++
				s.min, s.max = min(s.min, x), max(s.max, x)
			}
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if s.records == 0 || len(s.byCategory) < 2 || s.failed == 0 {
		t.Fatalf("setup: stored results %+v, want records of several categories and some failures", s)
	}
	return s
}

// chartRead is what the summary chart on a page shows.
type chartRead struct {
	Records  string
	Values   [][2]string // label, count of each bar
	Missing  string
	Failures [][2]string
	Numbers  map[string]string // dt → dd of the statistics
}

// readChart is a JavaScript expression reading the chart under doc.
func readChart(doc string) string {
	return `(() => { const d = ` + doc + `, box = d.querySelector(".results-summary");
		const rows = sel => [...d.querySelectorAll(sel)].map(r => [r.dataset.value, r.dataset.count]);
		const rest = box.querySelector(".rest");
		return {Records: box.dataset.records, Values: rows(".results-summary table.values tr"), Missing: rest ? rest.dataset.missing : "0",
			Failures: rows("table.failures tr"),
			Numbers: Object.fromEntries([...box.querySelectorAll("dl.numbers .stat")].map(s => [s.querySelector("dt").innerText, s.querySelector("dd").innerText]))};
	})()`
}

// check: the chart's bars are the stored counts, most first; its failures
// by code too; the statistics count the confidence numbers.
func (s stored) check(t *testing.T, got chartRead) {
	t.Helper()
	if got.Records != strconv.Itoa(s.records) || got.Missing != strconv.Itoa(s.missing) {
		t.Errorf("chart of %s records, %s without a category; stored: %d and %d", got.Records, got.Missing, s.records, s.missing)
	}
	bars := map[string]int{}
	last := -1
	for i, v := range got.Values {
		n, _ := strconv.Atoi(v[1])
		if i > 0 && n > last {
			t.Errorf("bars %v are not most first", got.Values)
		}
		last, bars[v[0]] = n, n
	}
	if !maps.Equal(bars, s.byCategory) {
		t.Errorf("bars %v, stored counts by category %v", bars, s.byCategory)
	}
	failures := map[string]int{}
	for _, v := range got.Failures {
		failures[v[0]], _ = strconv.Atoi(v[1])
	}
	if !maps.Equal(failures, s.failures) {
		t.Errorf("failures by code %v, stored %v", failures, s.failures)
	}
	if got.Numbers["count"] != strconv.Itoa(s.confidences) || got.Numbers["min"] != trim(s.min) || got.Numbers["max"] != trim(s.max) {
		t.Errorf("statistics %v, stored: %d confidences from %g to %g", got.Numbers, s.confidences, s.min, s.max)
	}
}

// trim is a number as the chart writes it (up to four decimals).
func trim(x float64) string {
	b, _ := json.Marshal(float64(int64(x*1e4+0.5)) / 1e4)
	return string(b)
}

// triageCategories are the categories of triageRecords' job.
var triageCategories = []string{"billing", "bug", "feature"}

// triageRecords are support tickets that name a category (the simulator
// answers the first category a prompt names): half billing, a third bug, a
// sixth feature. 150 of them go to a batch, where every 10th fails.
func triageRecords(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		c := triageCategories[[]int{0, 0, 0, 1, 1, 2}[i%6]]
		out[i] = map[string]any{"id": fmt.Sprintf("t%03d", i), "prompt": fmt.Sprintf("Classify ticket #%d, a %s report.", i, c)}
	}
	return out
}
