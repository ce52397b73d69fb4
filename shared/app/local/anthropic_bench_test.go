package local_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

func benchSuite(b *testing.B) *local.Suite {
	b.Helper()
	l, err := local.New(context.Background(), local.Options{Dir: b.TempDir(), Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// resetPeakRSS restarts VmHWM from the current RSS (Linux: "5" to clear_refs),
// after returning the setup's garbage, so the peak is the ingest's own.
func resetPeakRSS(b *testing.B) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the RSS peak: %v", err)
	}
}

// BenchmarkAnthropicIngest100k ingests 100,000 Anthropic results of ~1 KB,
// streamed by the simulator through the real SDK into object storage and then
// into the store, and reports throughput and the process's peak RSS during it.
//
//	go test ./shared/app/local/ -run '^$' -bench AnthropicIngest100k -benchtime 1x
func BenchmarkAnthropicIngest100k(b *testing.B) {
	const n = 100_000
	var peak, secs float64
	for b.Loop() {
		b.StopTimer()
		l := benchSuite(b)
		l.Anthropic.ErrorEvery = 0
		l.Anthropic.AnswerBytes = 900 // with the envelope, ~1.1 KB per result line
		recs := make([]job.Input, n)
		for i := range recs {
			recs[i] = job.Input{ID: fmt.Sprintf("r%06d", i), Prompt: "Summarise ticket " + strconv.Itoa(i)}
		}
		j, err := l.Service.Batch.Submit(context.Background(), batch.SubmitRequest{Owner: "bench", Model: claudeHaiku, Records: recs})
		if err != nil {
			b.Fatal(err)
		}
		recs = nil
		l.Anthropic.Step()
		resetPeakRSS(b)
		b.StartTimer()
		t0 := time.Now()
		if _, err := l.Service.Reconciler.Reconcile(context.Background()); err != nil {
			b.Fatal(err)
		}
		l.Bus.Wait()
		secs += time.Since(t0).Seconds()
		b.StopTimer()
		if p := procstat.PeakRSSMB(); p > peak {
			peak = p
		}
		got, err := l.Service.Queries.Get(context.Background(), "bench", j.ID)
		if err != nil || got.Status != job.StatusCompleted || got.Succeeded != n {
			b.Fatalf("job %v %v, want %d ingested", got, err, n)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/secs, "records/s")
	b.ReportMetric(peak, "peak-RSS-MB")
	if peak > 128 {
		b.Errorf("peak RSS %.0f MB over the 128 MB budget", peak)
	}
}

// BenchmarkReconcile1000InFlight is one reconciler run over 1,000 Anthropic
// jobs in flight, of which 10 have ended, next to 0 or 5,000 finished jobs: the
// API calls follow the jobs in flight, not the jobs stored.
//
//	go test ./shared/app/local/ -run '^$' -bench Reconcile1000InFlight -benchtime 1x
func BenchmarkReconcile1000InFlight(b *testing.B) {
	for _, finished := range []int{0, 5000} {
		b.Run(fmt.Sprintf("finished=%d", finished), func(b *testing.B) {
			var calls, changed, ms float64
			for b.Loop() {
				b.StopTimer()
				l := benchSuite(b)
				l.Anthropic.ErrorEvery = 0
				l.Anthropic.SlowSteps = 1_000_000
				l.Anthropic.SlowRequest = func(id string) bool { return !strings.HasPrefix(id, "fast") }
				ctx := context.Background()
				for i := range 1000 {
					id := "slow"
					if i%100 == 0 {
						id = "fast"
					}
					if _, err := l.Service.Batch.Submit(ctx, batch.SubmitRequest{Owner: "bench", Model: claudeHaiku,
						Records: []job.Input{{ID: id, Prompt: "p"}}}); err != nil {
						b.Fatal(err)
					}
				}
				now := time.Now().UTC()
				for i := range finished {
					done := &job.Job{ID: job.NewID(now), Owner: "bench", Provider: job.ProviderAnthropic, Model: claudeHaiku,
						Status: job.StatusCompleted, RecordCount: 1, Shards: 1, TTLDays: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
						Parts: []job.Part{{Name: fmt.Sprint("done", i), Ref: "msgbatch_done", Status: job.StatusCompleted}}}
					if err := l.Service.Batch.Store.CreateJob(ctx, done); err != nil {
						b.Fatal(err)
					}
				}
				// A first run sees every batch in progress (submitted → in_progress); then 10 end.
				if _, err := l.Service.Reconciler.Reconcile(ctx); err != nil {
					b.Fatal(err)
				}
				l.Anthropic.Step()
				before := l.Anthropic.Calls()["get"]
				b.StartTimer()
				t0 := time.Now()
				rep, err := l.Service.Reconciler.Reconcile(ctx)
				ms += float64(time.Since(t0).Milliseconds())
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				l.Bus.Wait()
				if got := l.Anthropic.Calls()["get"] - before; got != rep.Polled || rep.Changed != 10 || rep.InFlight != 1000 {
					b.Fatalf("report %+v, simulator saw %d gets", rep, got)
				}
				calls += float64(rep.Calls)
				changed += float64(rep.Changed)
				b.StartTimer()
			}
			b.ReportMetric(calls/float64(b.N), "api-calls/run")
			b.ReportMetric(changed/float64(b.N), "changed/run")
			b.ReportMetric(ms/float64(b.N), "ms/run")
		})
	}
}
