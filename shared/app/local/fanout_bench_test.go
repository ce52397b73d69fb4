package local_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// slowBlobs adds a fixed latency to every object request, as S3's
// first-byte latency (the 20 ms the benchmarks use is S3's typical
// first-byte latency for small objects within a region).
type slowBlobs struct {
	*fsblob.Store
	delay time.Duration
}

func (s *slowBlobs) wait() { time.Sleep(s.delay) }
func (s *slowBlobs) Put(ctx context.Context, uri string, r io.Reader, ct string) (int64, error) {
	s.wait()
	return s.Store.Put(ctx, uri, r, ct)
}
func (s *slowBlobs) Open(ctx context.Context, uri string, off int64) (io.ReadCloser, error) {
	s.wait()
	return s.Store.Open(ctx, uri, off)
}
func (s *slowBlobs) List(ctx context.Context, prefix string) ([]blob.Object, error) {
	s.wait()
	return s.Store.List(ctx, prefix)
}
func (s *slowBlobs) Stat(ctx context.Context, uri string) (blob.Version, error) {
	s.wait()
	return s.Store.Stat(ctx, uri)
}
func (s *slowBlobs) OpenVersionAt(ctx context.Context, uri string, v blob.Version, off int64) (io.ReadCloser, error) {
	s.wait()
	return s.Store.OpenVersionAt(ctx, uri, v, off)
}

// captureQueue keeps the units sent instead of running them.
type captureQueue struct {
	mu    sync.Mutex
	units []transfer.Unit
}

func (c *captureQueue) SendUnits(_ context.Context, units []transfer.Unit) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.units = append(c.units, units...)
	return nil
}

// ticketLine is a typical record: an id and a 120-character prompt.
func ticketLine(f, i int) string {
	return fmt.Sprintf(`{"id":"t%d-%07d","prompt":"Summarise support ticket %d: the customer reports the export stalls at 80%% and asks for a refund"}`, f, i, i)
}

// checkBench is a planned job whose check units can be run again and again.
type checkBench struct {
	l     *local.Suite
	units []transfer.Unit
	bytes int64
	job   string
}

// newCheckBench puts files uploads of lines lines each, submits them as one
// job and plans it, keeping the check units.
func newCheckBench(b *testing.B, files, lines int, unitBytes int64, delay time.Duration) *checkBench {
	b.Helper()
	ctx := context.Background()
	o := local.Options{Dir: b.TempDir(), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Fanout: local.FanoutOptions{UnitBytes: unitBytes}}
	if delay > 0 {
		fs, err := fsblob.New(filepath.Join(o.Dir, "objects"))
		if err != nil {
			b.Fatal(err)
		}
		o.Adapters.Blobs = &slowBlobs{Store: fs, delay: delay}
	}
	l, err := local.New(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	cq := &captureQueue{}
	tr := l.Service.Transfer
	tr.Units = cq
	var ids []string
	var total int64
	for f := range files {
		body := jsonlLines(lines, func(i int) string { return ticketLine(f, i) })
		total += int64(len(body))
		up := tr.NewUpload("bench")
		if _, err := l.Blobs.Put(ctx, up.URI, strings.NewReader(body), "application/jsonl"); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, up.ID)
	}
	j, err := tr.SubmitFile(ctx, transfer.FileSubmitRequest{SubmitRequest: batch.SubmitRequest{Owner: "bench", Model: haiku}, UploadIDs: ids})
	if err != nil {
		b.Fatal(err)
	}
	l.Bus.Wait()
	if len(cq.units) == 0 {
		b.Fatalf("no units planned (job %s)", j.ID)
	}
	return &checkBench{l: l, units: cq.units, bytes: total, job: j.ID}
}

// run checks every unit once with workers at a time, after clearing the
// markers of the run before (outside the timer).
func (c *checkBench) run(b *testing.B, workers int) {
	ctx := context.Background()
	b.StopTimer()
	j, err := c.l.Service.Core.Store.GetJob(ctx, c.job)
	if err != nil {
		b.Fatal(err)
	}
	objs, err := c.l.Blobs.List(ctx, blob.Join(j.InputURI, "fanout", "check")+"/")
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range objs {
		c.l.Blobs.Delete(ctx, o.URI)
	}
	b.StartTimer()
	next := atomic.Int64{}
	var wg sync.WaitGroup
	var fail atomic.Value
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(c.units) {
					return
				}
				if err := c.l.Service.Transfer.RunUnit(ctx, c.units[k]); err != nil {
					fail.Store(err)
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := fail.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFanoutCheck: the check phase of a 24 MiB job (6 files, 6 units of
// 4 MiB) in make dev at 1 and 2 workers; MB/s is the throughput.
func BenchmarkFanoutCheck(b *testing.B) {
	c := newCheckBench(b, 6, 32_000, 4<<20, 0)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			b.SetBytes(c.bytes)
			for range b.N {
				c.run(b, w)
			}
		})
	}
}

// BenchmarkFanoutCheckS3Latency: the check phase of 64 small files (one unit
// each) with 20 ms added to every object request, at 1 and 4 workers.
func BenchmarkFanoutCheckS3Latency(b *testing.B) {
	c := newCheckBench(b, 64, 100, 1<<20, 20*time.Millisecond)
	for _, w := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			b.SetBytes(c.bytes)
			for range b.N {
				c.run(b, w)
			}
		})
	}
}

// BenchmarkFanoutUnit64MiB: one check unit of the default size (64 MiB),
// with the peak heap it adds (peakHeap) and records a second: the
// per-unit figures the model of a large job is built from.
func BenchmarkFanoutUnit64MiB(b *testing.B) {
	lines := int(transfer.DefaultUnitBytes) / (len(ticketLine(0, 9_999_999)) + 1) // the longest line
	c := newCheckBench(b, 1, lines, transfer.DefaultUnitBytes, 0)
	if len(c.units) != 1 {
		b.Fatalf("%d units, want 1", len(c.units))
	}
	b.SetBytes(c.bytes)
	var per float64
	peak := peakHeap(func() {
		start := time.Now()
		for range b.N {
			c.run(b, 1)
		}
		per = time.Since(start).Seconds() / float64(b.N)
	})
	b.ReportMetric(peak, "peak-heap-MiB")
	b.ReportMetric(float64(lines)/per, "records/s")
}

// peakHeap runs fn and returns the heap it added at its peak, in MiB: the
// peak (sampled every millisecond; garbage not yet collected counts, as it
// does in a Lambda's memory) less what was in use before (collected first).
func peakHeap(fn func()) float64 {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	fn()
	close(done)
	<-sampled
	return float64(peak.Load()-min(peak.Load(), base.HeapInuse)) / (1 << 20)
}

// BenchmarkFanoutWritePart: the write unit of a job's second part (50,000
// records, Bedrock's most per provider job) after the 50,000 records of the
// first in the same check unit, which it reads past: the per-part figures of
// the write phase (time, records a second, the heap it adds).
func BenchmarkFanoutWritePart(b *testing.B) {
	c := newCheckBench(b, 1, 100_000, transfer.DefaultUnitBytes, 0)
	ctx := context.Background()
	tr := c.l.Service.Transfer
	cq := tr.Units.(*captureQueue)
	var write []transfer.Unit
	for len(cq.units) > 0 { // every phase up to the writes, one unit at a time
		u := cq.units[0]
		cq.units = cq.units[1:]
		if u.Kind == transfer.UnitWrite {
			write = append(write, u)
			continue
		}
		if err := tr.RunUnit(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
	if len(write) != 2 {
		b.Fatalf("%d write units, want 2", len(write))
	}
	j, err := c.l.Service.Core.Store.GetJob(ctx, c.job)
	if err != nil {
		b.Fatal(err)
	}
	marker := blob.Join(j.InputURI, "fanout", "write", "0000", "0000001.json")
	b.SetBytes(c.bytes / 2)
	peak := peakHeap(func() {
		for range b.N {
			b.StopTimer()
			c.l.Blobs.Delete(ctx, marker)
			b.StartTimer()
			if err := tr.RunUnit(ctx, write[1]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(peak, "peak-heap-MiB")
	b.ReportMetric(float64(50_000*b.N)/b.Elapsed().Seconds(), "records/s")
}
