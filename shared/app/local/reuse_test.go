package local_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// The result cache: a 150-record classification job submitted with reuse
// (temperature 0), then the same records again: the second job is answered
// from the store at once, cost 0, every record reused_from the first and
// nothing sent to the simulator; a dry run said so first. Another owner's
// identical records are not reused; a job that shares only some records
// sends only the others; a sampled job (no temperature) reuses nothing
// unless reuse_sampled asks for it.
var _ = flow("ResultReuse", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{})
	alice, bob := s.client("alice"), s.client("bob")
	zero := 0.0
	args := func(recs []map[string]any, extra map[string]any) map[string]any {
		a := map[string]any{"model": haiku, "records": recs, "categories": ticketCategories, "confidence": true, "temperature": zero, "reuse": true}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	recs := tickets(150, "reuse")
	first := call[mcpserver.JobHandle](t, alice, "submit_batch", args(recs, nil))
	if fj := s.runToEnd(alice, first.JobID); fj.Succeeded != 150 || fj.Reused != 0 {
		t.Fatalf("first job = %+v", fj)
	}
	dry := call[mcpserver.JobHandle](t, alice, "submit_batch", args(recs, map[string]any{"dry_run": true}))
	if dry.DryRun == nil || dry.DryRun.Reused != 150 || dry.DryRun.ReuseSavingUSD <= 0 {
		t.Fatalf("dry run = %+v, want 150 reused and a saving", dry.DryRun)
	}
	jobsBefore := len(s.l.Sim.Statuses())
	callsBefore := s.l.Reports.Runtime.Stats().Calls
	again := call[mcpserver.JobHandle](t, alice, "submit_batch", args(recs, nil))
	if again.Status != "completed" || again.RecordCount != 150 || again.Reused != 150 || again.Parts != 0 {
		t.Fatalf("resubmit = %+v, want completed at once with 150 reused", again)
	}
	j := call[mcpserver.JobView](t, alice, "get_job", map[string]any{"job_id": again.JobID})
	if !j.Terminal || j.Succeeded != 150 || j.Reused != 150 || j.CostUSD != 0 || j.InputTokens != 0 {
		t.Fatalf("reused job = %+v, want 150 succeeded at cost 0", j)
	}
	got := allResults(t, alice, again.JobID, "", 500)
	if len(got) != 150 {
		t.Fatalf("%d results, want 150", len(got))
	}
	for i, r := range got {
		if r.Status != "succeeded" || r.ReusedFrom != first.JobID || r.Path != job.PathReused || r.InputTokens != 0 || r.ID != recs[i]["id"] {
			t.Errorf("reused result %d = %+v, want succeeded from %s in input order", i, r, first.JobID)
		}
		checkTicket(t, r)
	}
	if n, calls := len(s.l.Sim.Statuses()), s.l.Reports.Runtime.Stats().Calls; n != jobsBefore || calls != callsBefore {
		t.Errorf("the reused submit reached the simulators: %d batch jobs (was %d), %d runtime calls (was %d)", n, jobsBefore, calls, callsBefore)
	}

	other := call[mcpserver.JobHandle](t, bob, "submit_batch", args(recs, nil))
	if other.Reused != 0 || other.Status != "submitted" || other.RecordCount != 150 {
		t.Errorf("another owner's identical records = %+v, want none reused and the job sent", other)
	}

	// The key is the content, not the id: renamed records are found too.
	mixed := tickets(150, "reuse")[:120]
	for i, r := range tickets(30, "fresh") {
		r["id"] = fmt.Sprintf("f%03d", i)
		mixed = append(mixed, r)
	}
	part := call[mcpserver.JobHandle](t, alice, "submit_batch", args(mixed, nil))
	if part.Reused != 120 || part.RecordCount != 150 || part.Mode != job.ModeOnDemand {
		t.Fatalf("partly known records = %+v, want 120 reused and the other 30 run on demand (mode auto)", part)
	}
	pj := s.runToEnd(alice, part.JobID)
	if pj.Succeeded != 150 || pj.Failed != 0 || pj.Reused != 120 {
		t.Errorf("partly reused job = %+v", pj)
	}
	for i, r := range allResults(t, alice, part.JobID, "", 500) {
		reused := r.Path == job.PathReused
		if r.ID != mixed[i]["id"] || reused != (i < 120) {
			t.Errorf("result %d = %+v: want input order, the first 120 reused", i, r)
		}
	}

	sampled := func(extra map[string]any) map[string]any {
		a := args(tickets(150, "sampled"), extra)
		delete(a, "temperature")
		return a
	}
	sj := call[mcpserver.JobHandle](t, alice, "submit_batch", sampled(nil))
	s.runToEnd(alice, sj.JobID)
	if h := call[mcpserver.JobHandle](t, alice, "submit_batch", sampled(nil)); h.Reused != 0 {
		t.Errorf("a sampled job reused %d records without reuse_sampled", h.Reused)
	}
	if h := call[mcpserver.JobHandle](t, alice, "submit_batch", sampled(map[string]any{"reuse_sampled": true})); h.Reused != 150 {
		t.Errorf("a sampled job with reuse_sampled reused %d records, want 150", h.Reused)
	}
})

// The result cache for file submits (one input file): a file resubmitted
// with reuse completes from the store at once, cost 0, nothing sent; a file
// sharing some records sends only the others, its results in file order with
// the ids the file gave or generated; another owner's file reuses nothing; a
// sampled file reuses only with reuse_sampled.
var _ = flow("ResultReuseFile", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{})
	alice, bob := s.client("alice"), s.client("bob")
	// Every 5th line without an id: its generated id must be the same on each pass.
	file := func(n int, tag string) string {
		return jsonlLines(n, func(i int) string {
			prompt := fmt.Sprintf("Ticket %d of %s: the customer writes about a %s problem with their account.", i, tag, ticketCategories[i%len(ticketCategories)])
			if i%5 == 4 {
				return fmt.Sprintf(`{"prompt":%q}`, prompt)
			}
			return fmt.Sprintf(`{"id":"t%03d","prompt":%q}`, i, prompt)
		})
	}
	submitWith := func(cs *mcp.ClientSession, body string, extra map[string]any) mcpserver.JobHandle {
		a := map[string]any{"model": haiku, "input_upload_id": uploadFiles(t, cs, body)[0], "categories": ticketCategories,
			"confidence": true, "temperature": 0.0, "reuse": true}
		for k, v := range extra {
			a[k] = v
		}
		return submitFile(t, cs, a)
	}
	submit := func(cs *mcp.ClientSession, body string) mcpserver.JobHandle { return submitWith(cs, body, nil) }
	old := file(200, "reuse")
	first := submit(alice, old)
	if fj := s.runToEnd(alice, first.JobID); fj.Succeeded != 200 || fj.Reused != 0 {
		t.Fatalf("first file job = %+v", fj)
	}
	firstIDs := allResults(t, alice, first.JobID, "", 500)

	jobsBefore := len(s.l.Sim.Statuses())
	again := submit(alice, old)
	s.settle()
	j := call[mcpserver.JobView](t, alice, "get_job", map[string]any{"job_id": again.JobID})
	if j.Status != "completed" || j.Succeeded != 200 || j.Reused != 200 || j.CostUSD != 0 || j.InputTokens != 0 {
		t.Fatalf("resubmitted file = %+v, want completed from the store: 200 reused at cost 0", j)
	}
	if n := len(s.l.Sim.Statuses()); n != jobsBefore {
		t.Errorf("the reused file reached the simulator: %d batch jobs (was %d)", n, jobsBefore)
	}
	for i, r := range allResults(t, alice, again.JobID, "", 500) {
		if r.Status != "succeeded" || r.ReusedFrom != first.JobID || r.Path != job.PathReused || r.ID != firstIDs[i].ID {
			t.Errorf("reused result %d = %+v, want %s's %s from %s", i, r, first.JobID, firstIDs[i].ID, first.JobID)
		}
	}

	// 120 known records (lines 0-119 of the first file), then 150 new ones.
	mixed := jsonlLines(270, func(i int) string {
		if i < 120 {
			return strings.Split(old, "\n")[i]
		}
		return fmt.Sprintf(`{"id":"n%03d","prompt":"Ticket %d, new: a billing question."}`, i, i)
	})
	part := submit(alice, mixed)
	pj := s.runToEnd(alice, part.JobID)
	if pj.Succeeded != 270 || pj.Failed != 0 || pj.Reused != 120 {
		t.Errorf("partly reused file = %+v, want 270 succeeded, 120 reused", pj)
	}
	got := allResults(t, alice, part.JobID, "", 500)
	if len(got) != 270 {
		t.Fatalf("%d results, want 270", len(got))
	}
	for i, r := range got {
		want := fmt.Sprintf("n%03d", i)
		if i < 120 {
			want = firstIDs[i].ID
		}
		if reused := r.Path == job.PathReused; r.ID != want || reused != (i < 120) || r.Status != "succeeded" {
			t.Errorf("result %d = %s %s %s, want %s in file order, the first 120 reused", i, r.ID, r.Status, r.Path, want)
		}
	}

	// 180 known and 20 new leave too few to send for Bedrock's minimum per job.
	few := jsonlLines(200, func(i int) string {
		if i < 180 {
			return strings.Split(old, "\n")[i]
		}
		return fmt.Sprintf(`{"id":"m%03d","prompt":"Ticket %d, new: a bug report."}`, i, i)
	})
	fh := submit(alice, few)
	s.settle()
	if fj := call[mcpserver.JobView](t, alice, "get_job", map[string]any{"job_id": fh.JobID}); fj.Status != "failed" || !strings.Contains(fj.Error, "reuse: 180 of the 200 records") {
		t.Errorf("a file leaving 20 records to send = %s %q, want failed naming reuse and the counts", fj.Status, fj.Error)
	}

	other := submit(bob, old)
	if oj := s.runToEnd(bob, other.JobID); oj.Reused != 0 || oj.Succeeded != 200 {
		t.Errorf("another owner's identical file = %+v, want none reused and every record sent", oj)
	}

	// A sampled job (temperature 0.7) reuses only with reuse_sampled.
	hot := file(100, "sampled")
	sampled := map[string]any{"temperature": 0.7}
	s.runToEnd(alice, submitWith(alice, hot, sampled).JobID)
	if sj := s.runToEnd(alice, submitWith(alice, hot, sampled).JobID); sj.Reused != 0 || sj.Succeeded != 100 {
		t.Errorf("a sampled file without reuse_sampled = %+v, want none reused", sj)
	}
	sampled["reuse_sampled"] = true
	if sj := s.runToEnd(alice, submitWith(alice, hot, sampled).JobID); sj.Reused != 100 || sj.Status != "completed" {
		t.Errorf("a sampled file with reuse_sampled = %+v, want all 100 reused", sj)
	}
})
