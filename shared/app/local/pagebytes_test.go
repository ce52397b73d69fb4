package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// bigResultsJob stores a finished job of alice's with n records of about
// size bytes of output each.
func bigResultsJob(t *testing.T, s *suite, n, size int) string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	j := &job.Job{ID: job.NewID(now), Owner: "alice", Provider: job.ProviderBedrock, Model: haiku, Status: job.StatusCompleted,
		RecordCount: n, Succeeded: n, Shards: 1, TTLDays: 1, CreatedAt: now, UpdatedAt: now, CompletedAt: now, ExpiresAt: now.Add(24 * time.Hour)}
	if err := s.l.Service.Core.Store.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	recs := make([]job.Record, n)
	for i := range recs {
		recs[i] = job.Record{JobID: j.ID, ID: fmt.Sprintf("big%03d", i), Status: job.RecordSucceeded,
			Output: strings.Repeat(string(rune('a'+i%26)), size), ExpiresAt: j.ExpiresAt}
	}
	if err := s.l.Service.Core.Store.PutRecords(ctx, j.RecordSet(), recs); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// A results page stops at a byte budget (≤ 4 MB of records) whatever the
// limit, says so, and its cursor leads on through every record exactly once.
func TestResultsPageByteBudget(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	const n, size = 40, 300 << 10 // 12 MB of outputs
	id := bigResultsJob(t, s, n, size)
	seen := map[string]int{}
	cursor, pages := "", 0
	for {
		args := map[string]any{"job_id": id, "limit": 500}
		if cursor != "" {
			args["cursor"] = cursor
		}
		page := call[mcpserver.ResultsOut](t, cs, "get_job_results", args)
		pages++
		raw, _ := json.Marshal(page.Records)
		if len(raw) > service.MaxResultsPageBytes {
			t.Fatalf("page %d holds %d bytes of records, over the %d budget", pages, len(raw), service.MaxResultsPageBytes)
		}
		for _, r := range page.Records {
			seen[r.ID]++
		}
		if page.NextCursor != "" && !page.TruncatedByBytes {
			t.Fatalf("page %d: %d records with a cursor but not marked truncated_by_bytes (limit 500 not reached)", pages, len(page.Records))
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
		if pages > n {
			t.Fatal("cursor loops")
		}
	}
	if len(seen) != n || pages < 3 {
		t.Fatalf("%d distinct records in %d pages, want %d in at least 3", len(seen), pages, n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("record %s seen %d times", id, c)
		}
	}
	var page mcpserver.ResultsOut
	readJSON(t, cs, "mcpbatch://jobs/"+id+"/results", &page)
	raw, _ := json.Marshal(page.Records)
	if len(raw) > service.MaxResultsPageBytes || page.NextCursor == "" || !page.TruncatedByBytes {
		t.Fatalf("results resource: %d records, %d bytes, next %q, truncated %v; want a page within the budget that says so",
			len(page.Records), len(raw), page.NextCursor, page.TruncatedByBytes)
	}
}
