package local_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// Anthropic kept the batch of a create that answered 529 while another job's
// batch of the same size was made moments before: the marker (size, created
// since the first try) matches both, and the store's record of which part
// holds which batch leaves only the part's own. Each job ends with its own
// results, none failed, no batch left without a job.
func TestAnthropicFindSkipsAnotherJobsBatchOfTheSameSize(t *testing.T) {
	s := newSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	var n atomic.Int32
	cs := s.client("alice")
	other := call[mcpserver.JobHandle](t, s.client("bob"), "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	s.l.Anthropic.AcceptThenFail = func() int {
		if n.Add(1) == 1 {
			return 529
		}
		return 0
	}
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": records(9)})
	ctx := context.Background()
	mine, err := s.l.Service.Core.Store.GetJob(ctx, h.JobID)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.l.Service.Core.Store.GetJob(ctx, other.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if p := mine.Parts[0]; p.Ref == "" || p.Ref == theirs.Parts[0].Ref {
		t.Fatalf("part after an accepted-then-failed create: status %s ref %q (other job's %q) message %q; want its own batch",
			p.Status, p.Ref, theirs.Parts[0].Ref, p.Message)
	}
	if n := len(s.l.Anthropic.Statuses()); n != 2 {
		t.Fatalf("Anthropic holds %d batches for two jobs, want 2 (calls %v)", n, s.l.Anthropic.Calls())
	}
	s.l.Anthropic.Step()
	s.reconcile()
	for _, id := range []string{h.JobID, other.JobID} {
		owner := "alice"
		if id == other.JobID {
			owner = "bob"
		}
		if j := call[mcpserver.JobView](t, s.client(owner), "get_job", map[string]any{"job_id": id}); j.Status != "completed" || j.Succeeded != 9 {
			t.Fatalf("job %s = %+v, want completed with 9", id, j)
		}
	}
}
