package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

func devSuite(t *testing.T, dir string, throttle float64) *local.Suite {
	t.Helper()
	l, err := local.New(context.Background(), local.Options{Dir: dir, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Reports: local.ReportsOptions{Pipelines: &pipeline.Config{}, ThrottleRate: throttle, Concurrency: 2}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Ctrl-C while an on-demand run backs off (every call throttled, a minute
// between retries): shutdown cancels the run within the bound, and the next
// start picks the job up from its checkpoint and finishes it, every record
// counted once.
func TestOnDemandRunStopsAtShutdownAndResumesAtStart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l := devSuite(t, dir, 1)
	l.Service.OnDemandRuns.BaseBackoff, l.Service.OnDemandRuns.MaxBackoff = time.Minute, time.Minute
	const n = 6
	recs := make([]job.Input, n)
	for i := range recs {
		recs[i] = job.Input{ID: fmt.Sprintf("r%02d", i), Prompt: fmt.Sprintf("question %d", i)}
	}
	j, err := l.Service.Batch.Submit(ctx, batch.SubmitRequest{Owner: "dev", Model: config.DefaultBedrockModels[0], Records: recs, Mode: job.ModeOnDemand})
	if err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) until the run is in progress and backing off on throttles.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		cur, err := l.Service.Batch.Store.GetJob(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Status == job.StatusInProgress && l.Reports.Runtime.Stats().Throttled >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run never started backing off: status %s, runtime %+v", cur.Status, l.Reports.Runtime.Stats())
		}
	}
	sctx, cancel := context.WithTimeout(ctx, shutdownGrace)
	defer cancel()
	if err := l.Bus.Shutdown(sctx); err != nil {
		t.Fatalf("bus shutdown: %v (the on-demand run did not stop within %s)", err, shutdownGrace)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Next start, throttling gone.
	l2 := devSuite(t, dir, 0)
	defer l2.Close()
	cur, err := l2.Service.Batch.Store.GetJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status.Terminal() || cur.OnDemand == nil || cur.OnDemand.Line != 0 {
		t.Fatalf("after shutdown: status %s checkpoint %+v, want in flight at line 0", cur.Status, cur.OnDemand)
	}
	resumed, err := resumeOnDemand(ctx, l2.Service, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if resumed != 1 {
		t.Fatalf("resumed %d on-demand jobs, want 1", resumed)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		l2.Bus.Wait()
		if cur, err = l2.Service.Batch.Store.GetJob(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
		if cur.Status.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("resumed job never finished: %s", cur.Status)
		}
	}
	if cur.Status != job.StatusCompleted || cur.Succeeded != n || cur.Failed != 0 {
		t.Fatalf("resumed job: status %s succeeded %d failed %d, want completed %d/0", cur.Status, cur.Succeeded, cur.Failed, n)
	}
	got, _, err := l2.Service.Batch.Store.ListRecords(ctx, cur.RecordSet(), store.RecordQuery{Limit: job.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d records stored, want %d", len(got), n)
	}
}
