package vectors

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// pagedOutputs serves n stored results of a Titan batch job (1,024-dimension
// embeddings in the model's JSON, as ingest keeps them), page by page as the
// store does. Outputs cycle over 512 distinct vectors so the source itself
// holds little memory.
type pagedOutputs struct {
	n       int
	outputs []string
}

func newPagedOutputs(n, dim int) *pagedOutputs {
	r := rand.New(rand.NewPCG(1, 2))
	p := &pagedOutputs{n: n}
	for range 512 {
		b := []byte(`{"embedding":[`)
		for d := range dim {
			if d > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, r.Float64()*2-1, 'g', 8, 32)
		}
		b = append(b, `],"inputTextTokenCount":42}`...)
		p.outputs = append(p.outputs, string(b))
	}
	return p
}

func (p *pagedOutputs) ListRecords(_ context.Context, _ job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	start := 0
	if q.Cursor != "" {
		start, _ = strconv.Atoi(q.Cursor)
	}
	end := min(start+q.Limit, p.n)
	recs := make([]job.Record, 0, end-start)
	for i := start; i < end; i++ {
		recs = append(recs, job.Record{ID: fmt.Sprintf("doc-%06d", i), Status: job.RecordSucceeded, Output: p.outputs[i%len(p.outputs)]})
	}
	next := ""
	if end < p.n {
		next = strconv.Itoa(end)
	}
	return recs, next, nil
}

// checkingIndex validates every Put as the adapters do (limits, request
// batches) and counts the vectors, keeping none: the benchmark measures the
// ingest side, not a store.
type checkingIndex struct {
	index.Index
	info index.Info
	n    int
}

func (c *checkingIndex) Put(_ context.Context, _ index.Ref, vecs []index.Vector) error {
	if _, err := index.CheckVectors(c.info, vecs); err != nil {
		return err
	}
	c.n += len(index.Batches(vecs)[0])
	for _, b := range index.Batches(vecs)[1:] {
		c.n += len(b)
	}
	return nil
}

type noBlobs struct{}

func (noBlobs) Put(context.Context, string, io.Reader, string) (int64, error) { return 0, nil }
func (noBlobs) Open(context.Context, string, int64) (io.ReadCloser, error) {
	return nil, blob.ErrNotFound
}

// BenchmarkWriteJob100k is the ingest of 100,000 × 1,024-dimension embeddings
// of a batch job into its index: results read page by page, vectors parsed
// from the model's output, validated and written in batches of 500. It
// reports vectors/s and the process's peak RSS (getrusage; it includes the
// test binary).
func BenchmarkWriteJob100k(b *testing.B) {
	const n, dim = 100_000, 1024
	src := newPagedOutputs(n, dim)
	for i := 0; i < b.N; i++ {
		ix := &checkingIndex{info: index.Info{Dimension: dim, Metric: index.Cosine, NonFilterable: []string{TextKey}}}
		s := &Sink{Index: ix, Records: src, Blobs: noBlobs{}}
		j := &job.Job{ID: "bench", Owner: "bench", RecordCount: n, Shards: 1, InputURI: "s3://b/input/bench",
			Index: &job.IndexTarget{Name: "bench", Metric: "cosine", Dimension: dim}}
		t0 := time.Now()
		if err := s.WriteJob(context.Background(), j); err != nil {
			b.Fatal(err)
		}
		if ix.n != n {
			b.Fatalf("wrote %d vectors, want %d", ix.n, n)
		}
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "vectors/s")
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB") // Linux: KiB
	}
}
