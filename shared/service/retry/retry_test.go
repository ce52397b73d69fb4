package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/retry"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

const haiku = "anthropic.claude-haiku-4-5-20251001-v1:0"

// suite is make dev's wiring: the Bedrock simulator fails every 10th record,
// half with 400 and half with ThrottlingException, and the runtime simulator
// answers on-demand calls.
func suite(t *testing.T) *local.Suite {
	t.Helper()
	l, err := local.New(context.Background(), local.Options{Dir: t.TempDir(), FailEvery: 10,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func settle(t *testing.T, l *local.Suite) {
	t.Helper()
	for range 3 {
		if err := l.Sim.Settle(context.Background()); err != nil {
			t.Fatal(err)
		}
		l.Bus.Wait()
	}
}

// finishedParent submits n records as owner and runs them to the end.
func finishedParent(t *testing.T, l *local.Suite, owner string, n int) *job.Job {
	t.Helper()
	recs := make([]job.Input, n)
	for i := range recs {
		recs[i] = job.Input{ID: fmt.Sprintf("doc/%03d", i), Prompt: fmt.Sprintf("Summarise document %d.", i)}
	}
	j, err := l.Service.Batch.Submit(context.Background(), batch.SubmitRequest{Owner: owner, Model: haiku, Name: "nightly", Records: recs,
		Params: job.Params{System: "Be brief.", MaxTokens: 300}})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, l)
	j, err = l.Service.Queries.Get(context.Background(), owner, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.StatusPartiallyCompleted || j.Failed != n/10 {
		t.Fatalf("setup: parent %s is %s with %d failed, want partially_completed with %d", j.ID, j.Status, j.Failed, n/10)
	}
	return j
}

// allResults reads every page of a job's results (merged when latest).
func allResults(t *testing.T, l *local.Suite, owner, id, status string, latest bool, limit int) []job.Record {
	t.Helper()
	var out []job.Record
	cursor := ""
	for range 1000 {
		q := service.ResultsQuery{JobID: id, Status: status, Cursor: cursor, Limit: limit}
		var recs []job.Record
		var err error
		var p service.ResultsPage
		if latest {
			p, err = l.Service.Retry.LatestResults(context.Background(), owner, q)
		} else {
			p, err = l.Service.Queries.ResultsPage(context.Background(), owner, q)
		}
		recs, cursor = p.Records, p.Next
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) > limit {
			t.Fatalf("page of %d records, limit %d", len(recs), limit)
		}
		out = append(out, recs...)
		if cursor == "" {
			return out
		}
	}
	t.Fatal("results never ended")
	return nil
}

func TestRetryAllMergedAndIdempotent(t *testing.T) {
	l := suite(t)
	ctx := context.Background()
	parent := finishedParent(t, l, "alice", 150)
	failed := allResults(t, l, "alice", parent.ID, "failed", false, 500)

	child, existed, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID})
	if err != nil {
		t.Fatal(err)
	}
	if existed || child.RetryOf != parent.ID || child.RecordCount != 15 || child.Mode != job.ModeOnDemand || child.Model != haiku {
		t.Fatalf("child %+v: want a new on-demand job of the 15 failed records of %s on %s", child, parent.ID, haiku)
	}
	if child.OnDemand == nil || child.OnDemand.Params.MaxTokens != 300 || child.OnDemand.Params.System != "Be brief." {
		t.Fatalf("child params %+v, want the parent's (max_tokens 300, system)", child.OnDemand)
	}
	settle(t, l)
	child, _ = l.Service.Queries.Get(ctx, "alice", child.ID)
	if child.Status != job.StatusCompleted || child.Succeeded != 15 {
		t.Fatalf("child %s is %s with %d succeeded, want completed with 15", child.ID, child.Status, child.Succeeded)
	}
	// The child's records are the parent's failed ones, under the same caller ids.
	var got, want []string
	for _, r := range allResults(t, l, "alice", child.ID, "all", false, 500) {
		got = append(got, r.ID)
	}
	for _, r := range failed {
		want = append(want, r.ID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("child record ids %q, want the parent's failed ids %q", got, want)
	}

	t.Run("idempotent", func(t *testing.T) {
		again, existed, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, Which: "all"})
		if err != nil {
			t.Fatal(err)
		}
		if !existed || again.ID != child.ID {
			t.Fatalf("second retry gave %s (existed %v), want the first child %s", again.ID, existed, child.ID)
		}
		p, _ := l.Service.Queries.Get(ctx, "alice", parent.ID)
		if !slices.Equal(p.RetriedBy, []string{child.ID}) {
			t.Fatalf("parent retried_by %q, want [%s]", p.RetriedBy, child.ID)
		}
	})

	t.Run("merged view", func(t *testing.T) {
		for _, limit := range []int{7, 40, 500} {
			merged := allResults(t, l, "alice", parent.ID, "all", true, limit)
			if len(merged) != 150 {
				t.Fatalf("limit %d: merged view has %d records, want 150", limit, len(merged))
			}
			fromChild := 0
			for _, r := range merged {
				if r.Status != job.RecordSucceeded {
					t.Fatalf("record %s is %s in the merged view, want succeeded (its retry succeeded)", r.ID, r.Status)
				}
				if r.JobID == child.ID {
					fromChild++
				}
			}
			if fromChild != 15 {
				t.Fatalf("limit %d: %d records come from the retry, want 15", limit, fromChild)
			}
		}
		if f := allResults(t, l, "alice", parent.ID, "failed", true, 10); len(f) != 0 {
			t.Fatalf("merged failed records %d, want 0", len(f))
		}
		if f := allResults(t, l, "alice", parent.ID, "failed", false, 10); len(f) != 15 {
			t.Fatalf("the parent's own failed records %d, want 15 (unchanged)", len(f))
		}
	})
}

func TestRetrySelections(t *testing.T) {
	l := suite(t)
	ctx := context.Background()
	parent := finishedParent(t, l, "alice", 150)
	failed := allResults(t, l, "alice", parent.ID, "failed", false, 500)
	var throttled, other []string
	for _, r := range failed {
		if r.ErrorCode == "ThrottlingException" {
			throttled = append(throttled, r.ID)
		} else {
			other = append(other, r.ID)
		}
	}
	if len(throttled) == 0 || len(other) == 0 {
		t.Fatalf("setup: %d throttled and %d other failures, want some of both", len(throttled), len(other))
	}

	c, _, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, Which: job.RetryRetryable})
	if err != nil {
		t.Fatal(err)
	}
	if c.RecordCount != len(throttled) {
		t.Fatalf("retryable-only child has %d records, want the %d throttled ones", c.RecordCount, len(throttled))
	}
	ids, _, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, RecordIDs: other[:1], MaxTokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	if ids.RecordCount != 1 || ids.ID == c.ID || ids.OnDemand.Params.MaxTokens != 50 {
		t.Fatalf("ids child %+v, want one record with max_tokens 50 in a job of its own", ids)
	}
	p, _ := l.Service.Queries.Get(ctx, "alice", parent.ID)
	if !slices.Equal(p.RetriedBy, []string{c.ID, ids.ID}) {
		t.Fatalf("parent retried_by %q, want [%s %s]", p.RetriedBy, c.ID, ids.ID)
	}
}

func TestRetryBadInput(t *testing.T) {
	l := suite(t)
	ctx := context.Background()
	parent := finishedParent(t, l, "alice", 150)
	recs := make([]job.Input, 120)
	for i := range recs {
		recs[i] = job.Input{Prompt: "hi"}
	}
	running, err := l.Service.Batch.Submit(ctx, batch.SubmitRequest{Owner: "alice", Model: haiku, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := l.Service.Batch.Submit(ctx, batch.SubmitRequest{Owner: "alice", Model: haiku, Records: recs[:5]}) // on demand: no failures
	if err != nil {
		t.Fatal(err)
	}
	l.Bus.Wait()
	succeeded := allResults(t, l, "alice", parent.ID, "succeeded", false, 500)[0].ID
	for _, tc := range []struct {
		name string
		req  retry.Request
		want string // in the error
	}{
		{"not terminal", retry.Request{Owner: "alice", JobID: running.ID}, "retry_failed takes finished jobs"},
		{"no failed records", retry.Request{Owner: "alice", JobID: ok.ID}, "has no failed records"},
		{"someone else's job", retry.Request{Owner: "mallory", JobID: parent.ID}, service.ErrJobNotFound.Error()},
		{"not a failed id", retry.Request{Owner: "alice", JobID: parent.ID, RecordIDs: []string{succeeded}}, "record_ids[0]"},
		{"ids with which=all", retry.Request{Owner: "alice", JobID: parent.ID, Which: "all", RecordIDs: []string{succeeded}}, "record_ids: only with which=ids"},
		{"unknown which", retry.Request{Owner: "alice", JobID: parent.ID, Which: "some"}, "which: must be one of all, retryable, ids"},
		{"bad override", retry.Request{Owner: "alice", JobID: parent.ID, MaxTokens: 10_000_000}, "max_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := l.Service.Retry.Retry(ctx, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			var fe *job.FieldError
			if tc.name != "someone else's job" && !errors.As(err, &fe) {
				t.Fatalf("error %v is not a field error", err)
			}
			p, _ := l.Service.Queries.Get(ctx, "alice", parent.ID)
			if len(p.RetriedBy) != 0 {
				t.Fatalf("parent retried_by %q after a refused retry, want none", p.RetriedBy)
			}
		})
	}
	jobs, _, _ := l.Service.Queries.List(ctx, "alice", service.ListQuery{Limit: 500})
	if len(jobs) != 3 {
		t.Fatalf("%d jobs after refused retries, want the 3 submitted", len(jobs))
	}
}

// TestRetryCapPerJob: each new selection or override of one job makes a new
// retry job; their number is capped (retried_by stays far from DynamoDB's
// item limit) with an error that says what to do instead.
func TestRetryCapPerJob(t *testing.T) {
	l := suite(t)
	ctx := context.Background()
	parent := finishedParent(t, l, "alice", 150)
	failed := allResults(t, l, "alice", parent.ID, "failed", false, 500)
	var err error
	made := 0
	for i := 0; i < len(failed) && err == nil; i++ {
		_, _, err = l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, RecordIDs: []string{failed[i].ID}})
		if err == nil {
			made++
		}
	}
	var fe *job.FieldError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "retries") || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("after %d retries: %v; want a field error naming the cap", made, err)
	}
	p, _ := l.Service.Queries.Get(ctx, "alice", parent.ID)
	if len(p.RetriedBy) != made {
		t.Fatalf("retried_by has %d ids, %d retries were made", len(p.RetriedBy), made)
	}
	// Asking again for a selection already made still answers its job.
	if c, existed, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, RecordIDs: []string{failed[0].ID}}); err != nil || !existed {
		t.Fatalf("repeat of the first selection: %v, existed %v (%v)", c, existed, err)
	}
}

// TestRetryRetryableAfterMergedRetry: which=retryable (and all) retry only
// what is still failed in the merged view: a record a retry already turned
// into a success is not run again.
func TestRetryRetryableAfterMergedRetry(t *testing.T) {
	l := suite(t)
	ctx := context.Background()
	parent := finishedParent(t, l, "alice", 150)
	var throttled []string
	for _, r := range allResults(t, l, "alice", parent.ID, "failed", false, 500) {
		if r.ErrorCode == "ThrottlingException" {
			throttled = append(throttled, r.ID)
		}
	}
	if len(throttled) < 2 {
		t.Fatalf("setup: %d throttled records", len(throttled))
	}
	first, _, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, RecordIDs: throttled[:1]})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, l)
	if c, _ := l.Service.Queries.Get(ctx, "alice", first.ID); c.Succeeded != 1 {
		t.Fatalf("setup: first retry %+v", c)
	}
	c, _, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, Which: job.RetryRetryable})
	if err != nil {
		t.Fatal(err)
	}
	if c.RecordCount != len(throttled)-1 {
		t.Fatalf("retryable retry has %d records, want the %d still failed (one already succeeded in %s)", c.RecordCount, len(throttled)-1, first.ID)
	}
	// The same selection again answers its job; a new one naming the record is refused.
	if again, existed, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, RecordIDs: throttled[:1]}); err != nil || !existed || again.ID != first.ID {
		t.Fatalf("same selection again: %v existed %v (%v), want %s", again, existed, err, first.ID)
	}
	_, _, err = l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID, RecordIDs: throttled[:2]})
	if err == nil || !strings.Contains(err.Error(), "record_ids[0]") || !strings.Contains(err.Error(), "already succeeded") {
		t.Fatalf("retrying a record that already succeeded in a retry: %v", err)
	}
}

// TestExportLatest: export_results takes latest like get_job_results: the
// file holds each record's newest outcome across the job's retries.
func TestExportLatest(t *testing.T) {
	l := suite(t)
	ctx := context.Background()
	parent := finishedParent(t, l, "alice", 150)
	if _, _, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: "alice", JobID: parent.ID}); err != nil {
		t.Fatal(err)
	}
	settle(t, l)
	for _, latest := range []bool{false, true} {
		e, err := l.Service.Transfer.Export(ctx, transfer.ExportRequest{Owner: "alice", JobID: parent.ID, Status: "failed", Latest: latest})
		if err != nil {
			t.Fatal(err)
		}
		want := 15
		if latest {
			want = 0
		}
		if e.Records != want {
			t.Fatalf("latest %v: export of failed records has %d, want %d", latest, e.Records, want)
		}
	}
}
