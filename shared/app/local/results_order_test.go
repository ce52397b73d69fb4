package local_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// orderIDs are n record ids whose input order is neither their string order
// nor their hash-shard order: "10", "9", "b", "a", then descending numbers.
func orderIDs(n int) []string {
	ids := []string{"10", "9", "b", "a"}
	for i := len(ids); i < n; i++ {
		ids = append(ids, fmt.Sprintf("z%d", n-i))
	}
	return ids[:n]
}

func orderRecords(ids []string) []map[string]any {
	out := make([]map[string]any, len(ids))
	for i, id := range ids {
		out[i] = map[string]any{"id": id, "prompt": fmt.Sprintf("Summarise fact #%d", i)}
	}
	return out
}

func resultIDs(recs []mcpserver.RecordOut) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// latestResults pages through get_job_results with latest: true.
func latestResults(t *testing.T, s *suite, jobID string, limit int) []mcpserver.RecordOut {
	t.Helper()
	cs := s.client("alice")
	var all []mcpserver.RecordOut
	for cursor, pages := "", 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		args := map[string]any{"job_id": jobID, "limit": limit, "latest": true}
		if cursor != "" {
			args["cursor"] = cursor
		}
		page := call[mcpserver.ResultsOut](t, cs, "get_job_results", args)
		all = append(all, page.Records...)
		if cursor = page.NextCursor; cursor == "" {
			return all
		}
	}
}

// exportIDs are the record ids of an export_results JSONL file, in file order.
func exportIDs(t *testing.T, s *suite, args map[string]any) []string {
	t.Helper()
	out := call[mcpserver.ExportOut](t, s.client("alice"), "export_results", args)
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(readURL(t, out.URL)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct{ ID string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		ids = append(ids, l.ID)
	}
	return ids
}

// TestResultsInInputOrder: get_job_results and export_results return a job's
// records in the order the caller gave them, over several pages, for a
// Bedrock batch job spread over two shards, an Anthropic message batch, an
// on-demand job, a status filter, and a job's merged view over its retry
// (whose own results keep that order too), batch and on demand.
var _ = flow("ResultsInInputOrder", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{FailEvery: 10}) // every 10th record fails, so there is something to retry
	cs := s.client("alice")
	check := func(t *testing.T, what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			n := min(len(got), len(want), 12)
			t.Fatalf("%s: %d records in this order (first %d): %q, want %d in input order: %q",
				what, len(got), n, got[:min(n, len(got))], len(want), want[:min(n, len(want))])
		}
	}

	// page is a listing's page size: on the AWS wiring five times larger
	// (still odd, so pages end mid-shard), as one page of a 1,300-record
	// partition costs moto_server about a second.
	page := func(n int) int {
		if w.name == awsWiring.name {
			return 5 * n
		}
		return n
	}

	t.Run("batch over two shards", func(t *testing.T) {
		ids := orderIDs(2600) // job.ShardsFor gives 2 shards
		h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": orderRecords(ids)})
		if j := s.finish(cs, h.JobID); j.Mode != "batch" {
			t.Fatalf("setup: mode %q", j.Mode)
		}
		check(t, "get_job_results", resultIDs(allResults(t, cs, h.JobID, "", page(97))), ids)
		check(t, "export_results", exportIDs(t, s, map[string]any{"job_id": h.JobID}), ids)
		var failed []string
		for i, id := range ids {
			if (i+1)%10 == 0 {
				failed = append(failed, id)
			}
		}
		check(t, "status=failed", resultIDs(allResults(t, cs, h.JobID, "failed", page(7))), failed)
		// 260 failed records: the retry is a batch job too.
		c := call[mcpserver.RetryOut](t, cs, "retry_failed", map[string]any{"job_id": h.JobID})
		if j := s.finish(cs, c.JobID); j.Mode != "batch" {
			t.Fatalf("setup: retry mode %q", j.Mode)
		}
		check(t, "retry get_job_results", resultIDs(allResults(t, cs, c.JobID, "", page(31))), failed)
		check(t, "latest: true", resultIDs(latestResults(t, s, h.JobID, page(97))), ids)
	})

	t.Run("anthropic message batch", func(t *testing.T) {
		ids := orderIDs(40) // the simulator's results come in no particular order
		h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": orderRecords(ids)})
		if h.Provider != "anthropic" {
			t.Fatalf("setup: provider %q", h.Provider)
		}
		s.l.Anthropic.Step()
		s.reconcile()
		if j := s.finish(cs, h.JobID); j.Succeeded+j.Failed != len(ids) {
			t.Fatalf("setup: job %+v", j)
		}
		check(t, "get_job_results", resultIDs(allResults(t, cs, h.JobID, "", 9)), ids)
	})

	t.Run("on demand, retried, latest", func(t *testing.T) {
		ids := orderIDs(60)
		recs := orderRecords(ids)
		// The runtime simulator fails the prompts that carry its marker:
		// every seventh here, and none once the marker is cleared.
		s.l.Reports.Runtime.FailMarker = "[fail me]"
		for i := 2; i < len(recs); i += 7 {
			recs[i]["prompt"] = recs[i]["prompt"].(string) + " [fail me]"
		}
		h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": recs})
		if j := s.finish(cs, h.JobID); j.Mode != "on_demand" {
			t.Fatalf("setup: mode %q", j.Mode)
		}
		all := allResults(t, cs, h.JobID, "", 7)
		check(t, "on-demand get_job_results", resultIDs(all), ids)
		var failed []string
		for _, r := range all {
			if r.Status == "failed" {
				failed = append(failed, r.ID)
			}
		}
		if len(failed) < 2 {
			t.Fatalf("setup: %d failed records, want some to retry", len(failed))
		}
		s.l.Reports.Runtime.FailMarker = ""
		c := call[mcpserver.RetryOut](t, cs, "retry_failed", map[string]any{"job_id": h.JobID})
		if j := s.finish(cs, c.JobID); j.Mode != "on_demand" || j.Succeeded != len(failed) {
			t.Fatalf("setup: retry %+v, want on demand with all %d succeeded", j, len(failed))
		}
		// The retry's own results: its records in the parent's input order.
		check(t, "retry get_job_results", resultIDs(allResults(t, cs, c.JobID, "", 2)), failed)
		merged := latestResults(t, s, h.JobID, 7)
		check(t, "latest: true", resultIDs(merged), ids)
		fromRetry := 0
		for _, r := range merged {
			if r.JobID == c.JobID {
				fromRetry++
			}
		}
		if fromRetry != len(failed) {
			t.Errorf("latest: true shows %d outcomes from retry %s, want %d", fromRetry, c.JobID, len(failed))
		}
		check(t, "export latest", exportIDs(t, s, map[string]any{"job_id": h.JobID, "latest": true}), ids)
	})
})
