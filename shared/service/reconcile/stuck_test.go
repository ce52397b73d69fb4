package reconcile_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
)

// faultBlobs refuses writes and reads of URIs containing match while on
// says so, with an S3-like access-denied error.
type faultBlobs struct {
	service.Blobs
	match string
	on    atomic.Bool
}

var errDenied = errors.New("AccessDenied: simulated S3 403")

func (f *faultBlobs) Put(ctx context.Context, uri string, r io.Reader, ct string) (int64, error) {
	if f.on.Load() && strings.Contains(uri, f.match) {
		io.Copy(io.Discard, r)
		return 0, errDenied
	}
	return f.Blobs.Put(ctx, uri, r, ct)
}

func (f *faultBlobs) Open(ctx context.Context, uri string, off int64) (io.ReadCloser, error) {
	if f.on.Load() && strings.Contains(uri, f.match) {
		return nil, errDenied
	}
	return f.Blobs.Open(ctx, uri, off)
}

func faulty(match string) (*faultBlobs, func(service.Blobs) service.Blobs) {
	f := &faultBlobs{match: match}
	f.on.Store(true)
	return f, func(b service.Blobs) service.Blobs { f.Blobs = b; return f }
}

// An ingest that keeps failing (its event went to the DLQ) is announced again
// with backoff and, after a bounded number of tries, the job fails with an
// error naming the cause; nothing stays ingesting forever.
func TestStuckIngestIsRetriedThenFailed(t *testing.T) {
	f, wrap := faulty("/results.jsonl")
	h := newHarness(t, wrap)
	h.sim.ErrorEvery = 0
	j := h.submit(5, 7)
	h.sim.Step()
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.job(j.ID); got.Status != job.StatusIngesting {
		t.Fatalf("job after a failed ingest = %s, want ingesting", got.Status)
	}
	ready := func() int { return h.bus.count(config.DetailJobOutputReady) }
	// Right after a retry nothing is due: the wait doubles each time.
	for i := 1; i <= reconcile.MaxRetries; i++ {
		h.clock.Add(reconcile.DefaultStaleAfter<<(i-1) - time.Minute)
		h.reconcile()
		if n := ready(); n != i {
			t.Fatalf("retry %d announced before its backoff: %d announcements", i, n)
		}
		h.clock.Add(time.Minute)
		h.reconcile()
		if n := ready(); n != i+1 {
			t.Fatalf("retry %d: %d announcements, want %d", i, n, i+1)
		}
	}
	h.clock.Add(reconcile.DefaultStaleAfter << reconcile.MaxRetries)
	h.reconcile()
	got, err := h.job(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusFailed || !strings.Contains(got.Error, "ingest") || !strings.Contains(got.Error, "AccessDenied") {
		t.Fatalf("job after %d failed retries = %s %q, want failed naming the ingest and its cause", reconcile.MaxRetries, got.Status, got.Error)
	}
	if h.bus.count(config.DetailJobCompleted) != 1 {
		t.Errorf("Job Completed published %d times, want once", h.bus.count(config.DetailJobCompleted))
	}
	_ = f
}

// A retried ingest that then works finishes the job.
func TestStuckIngestRecoversOnRetry(t *testing.T) {
	f, wrap := faulty("/results.jsonl")
	h := newHarness(t, wrap)
	h.sim.ErrorEvery = 0
	j := h.submit(5, 7)
	h.sim.Step()
	h.reconcile()
	f.on.Store(false)
	h.clock.Add(reconcile.DefaultStaleAfter)
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	got, _ := h.job(j.ID)
	if got.Status != job.StatusCompleted || got.Succeeded != 5 {
		t.Fatalf("job after a retried ingest = %+v, want completed with 5", got)
	}
}

// A queued on-demand job is not a batch job: the reconciler never submits it
// to Bedrock batch (which refused it for its missing output location); a
// stalled one gets its run requested again with backoff, and fails after
// MaxRetries requests that made no progress.
func TestStalledOnDemandIsResumedNotSubmitted(t *testing.T) {
	h := newHarness(t, nil) // no on-demand runtime: runs are requested, never run
	j, err := h.svc.Batch.Submit(context.Background(), batchReqMode(bedrockModel, 3, job.ModeOnDemand))
	if err != nil {
		t.Fatal(err)
	}
	runs := func() int { return h.bus.count(config.DetailOnDemandRun) }
	first := runs()
	if err := h.reconcile(); err != nil {
		t.Fatalf("reconcile with a queued on-demand job: %v", err)
	}
	if got, _ := h.job(j.ID); got.Status != job.StatusQueued {
		t.Fatalf("on-demand job after a reconcile = %s %q, want still queued", got.Status, got.Error)
	}
	for i := 1; i <= reconcile.MaxRetries; i++ {
		h.clock.Add(reconcile.DefaultStaleAfter << (i - 1))
		if err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		if n := runs() - first; n != i {
			t.Fatalf("after %d stale periods: %d run requests, want %d", i, n, i)
		}
	}
	h.clock.Add(reconcile.DefaultStaleAfter << reconcile.MaxRetries)
	h.reconcile()
	got, _ := h.job(j.ID)
	if got.Status != job.StatusFailed || !strings.Contains(got.Error, "on-demand run made no progress") {
		t.Fatalf("on-demand job after %d requests = %s %q, want failed naming the run", reconcile.MaxRetries, got.Status, got.Error)
	}
}
