package content

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"
)

// BenchmarkValidatePDF5MB: one record holding a 5 MB PDF as base64, from its
// JSON to a checked block (target: under 20 ms per op).
func BenchmarkValidatePDF5MB(b *testing.B) {
	pdf := mkPDF(40, 5<<20, "")
	raw := mustJSON(b, userMsg(docBlock("application/pdf", "Big", pdf), map[string]any{"type": "text", "text": "summarise"}))
	ch, _ := NewChecker(PathAnthropic, "m", multimodal, nil)
	ctx := context.Background()
	b.Run("parse+check", func(b *testing.B) {
		b.SetBytes(int64(len(pdf)))
		for b.Loop() {
			rec, err := Parse(0, "big", raw)
			if err != nil {
				b.Fatal(err)
			}
			if err := ch.Validate(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	rec, _ := Parse(0, "big", raw)
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(pdf)))
		for b.Loop() {
			if err := ch.Validate(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
		if rec.Messages[0].Blocks[0].Info.Pages != 40 {
			b.Fatal("pages", rec.Messages[0].Blocks[0].Info.Pages)
		}
	})
}

// BenchmarkRender1000S3Images: 1,000 records each referencing a 1 MB PNG by
// s3://, checked and written as Bedrock batch JSONL lines (Claude native
// body), the way a submission streams its part. Reports the peak live heap
// and the process's peak RSS (target: RSS ≤ 256 MB).
func BenchmarkRender1000S3Images(b *testing.B) {
	const records = 1000
	img := noisePNG(b, 1<<20)
	objs := &countingOpener{data: img}
	store := &Store{Opener: objs, Prefix: prefix}
	ch, _ := NewChecker(PathBedrockBatchClaude, "m", multimodal, store)
	r := &Renderer{Path: PathBedrockBatchClaude, Store: store}
	raws := make([][]byte, records)
	for i := range raws {
		raws[i] = mustJSON(b, userMsg(s3Block("image", fmt.Sprintf("%simg-%04d.png", prefix, i)), map[string]any{"type": "text", "text": "describe"}))
	}
	ctx := context.Background()
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() { // sample the live heap while the benchmark runs
		var ms runtime.MemStats
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	var out countWriter
	b.SetBytes(int64(records * len(img)))
	b.ReportAllocs()
	for b.Loop() {
		out = countWriter{}
		w := bufio.NewWriterSize(&out, 64<<10)
		for i, raw := range raws {
			rec, err := Parse(i, strconv.Itoa(i), raw)
			if err != nil {
				b.Fatal(err)
			}
			if err := ch.Validate(ctx, rec); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(w, `{"recordId":%q,"modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tokens":512,"messages":`, rec.ID)
			if err := r.WriteMessages(ctx, w, rec.Messages); err != nil {
				b.Fatal(err)
			}
			w.WriteString("}}\n")
		}
		w.Flush()
	}
	close(stop)
	if out.n < records*int64(len(img))*4/3 {
		b.Fatalf("wrote %d bytes", out.n)
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(procstat.PeakRSSMB(), "peak-RSS-MB")
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// countingOpener serves the same bytes for every key, streaming, so that the
// benchmark measures the renderer, not the fixture.
type countingOpener struct{ data []byte }

func (o *countingOpener) Open(_ context.Context, uri string) (io.ReadCloser, int64, error) {
	return io.NopCloser(bytes.NewReader(o.data)), int64(len(o.data)), nil
}
