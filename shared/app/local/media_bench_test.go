package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// BenchmarkSubmit1000S3Images: the product's batch submit of 1,000 records
// each referencing a 1 MB PNG by s3:// (100 distinct objects in the caller's
// upload area, each read like any other): every image checked, the job split,
// and its input file written with the images inlined as base64 (~1.4 GB),
// streaming. Reports the peak live heap and the process's peak RSS (target:
// RSS ≤ 256 MB). Run alone: go test ./shared/app/local -run X -bench Submit1000S3Images -benchtime 1x
func BenchmarkSubmit1000S3Images(b *testing.B) {
	const records, distinct = 1000, 100
	l, err := local.New(context.Background(), local.Options{Dir: b.TempDir(), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Owner: func(*http.Request) (string, error) { return "bench", nil }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	ctx := context.Background()
	img := pngOf(&testing.T{}, 592, 592, true) // ~1 MB of noise
	area := batch.UploadArea(local.Bucket, "bench")
	for i := 0; i < distinct; i++ {
		if _, err := l.Blobs.Put(ctx, fmt.Sprintf("%simg-%03d.png", area, i), bytes.NewReader(img), "image/png"); err != nil {
			b.Fatal(err)
		}
	}
	recs := make([]job.Input, records)
	for i := range recs {
		msgs, _ := json.Marshal([]any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image", "source": map[string]any{"type": "s3", "uri": fmt.Sprintf("%simg-%03d.png", area, i%distinct)}},
			map[string]any{"type": "text", "text": "Describe the image."}}}})
		recs[i] = job.Input{ID: fmt.Sprintf("img-%04d", i), Messages: msgs}
	}
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
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
	b.SetBytes(int64(records * len(img)))
	for b.Loop() {
		j, err := l.Service.Batch.Submit(ctx, batch.SubmitRequest{Owner: "bench", Model: sonnet45, Mode: "batch", Records: recs})
		if err != nil {
			b.Fatal(err)
		}
		if j.Status == job.StatusFailed || len(j.Parts) != 2 { // ~1.4 GB of lines: two 1 GB Bedrock input files
			b.Fatalf("job = %+v", j)
		}
	}
	close(stop)
	b.ReportMetric(float64(len(img))/(1<<20), "image-MB")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(procstat.PeakRSSMB(), "peak-RSS-MB")
}
