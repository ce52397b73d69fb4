package local_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// TestResultsOrderAsDocumented: get_job_results does not return records in
// input order (they are stored by id within a hash shard); its description
// says so and says to match by id, and the listing keeps that order.
func TestResultsOrderAsDocumented(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "get_job_results" && (!strings.Contains(tool.Description, "not in input order") || !strings.Contains(tool.Description, "by id")) {
			t.Errorf("get_job_results description does not say its order: %q", tool.Description)
		}
	}
	id := s.finishedJob(cs, 150)
	j := call[map[string]any](t, cs, "get_job", map[string]any{"job_id": id})
	shards := job.ShardsFor(int(j["record_count"].(float64)))
	var prevShard int
	var prevID string
	for i, r := range allResults(t, cs, id, "", 40) {
		sh := job.RecordShard(r.ID, shards)
		if i > 0 && (sh < prevShard || sh == prevShard && r.ID <= prevID) {
			t.Fatalf("record %d %s (shard %d) after %s (shard %d): not the documented order", i, r.ID, sh, prevID, prevShard)
		}
		prevShard, prevID = sh, r.ID
	}
}
