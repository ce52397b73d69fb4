package batch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// blockingSink holds WriteJob until released, counting the writes that ran.
type blockingSink struct {
	VectorSink
	entered chan struct{}
	release chan struct{}
	writes  int
}

func (b *blockingSink) WriteJob(ctx context.Context, j *job.Job) error {
	b.writes++
	if b.entered != nil {
		b.entered <- struct{}{}
		<-b.release
	}
	return nil
}

// Two ingests of one embedding job (a duplicate "Job Output Ready") never
// write its vectors at once: S3 Vectors has no conditional write, so both
// would count the same vectors as new (EmbedIndexSearch on moto: 300 for
// 150). The second stops while the first writes; once the first is done, or
// its claim has lapsed, another may write again.
func TestOneVectorWriterAtATime(t *testing.T) {
	st, blobs := localdeps.New(t)
	sink := &blockingSink{entered: make(chan struct{}), release: make(chan struct{})}
	now := time.Now()
	s := &Service{Store: st, Blobs: blobs, Bucket: "s3://test", Clock: func() time.Time { return now }, Vectors: sink}
	ctx := context.Background()
	j := &job.Job{ID: job.NewID(now), Owner: "o", Provider: job.ProviderBedrock, Model: "amazon.titan-embed-text-v2:0", Mode: job.ModeBatch,
		Status: job.StatusIngesting, RecordCount: 1, Shards: 1, TTLDays: 7, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(7 * 24 * time.Hour),
		Index: &job.IndexTarget{Name: "docs", Metric: "cosine", Dimension: 2}}
	if err := st.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	first := make(chan error)
	go func() { first <- s.writeVectors(ctx, j) }()
	<-sink.entered
	if err := s.writeVectors(ctx, j); !errors.Is(err, errOtherWriter) {
		t.Fatalf("a second writer while the first writes: %v; want errOtherWriter", err)
	}
	close(sink.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	sink.entered = nil
	if err := s.writeVectors(ctx, j); err != nil {
		t.Fatalf("a writer after the first finished: %v", err)
	}
	// A claim whose run died lapses.
	if _, err := st.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
		cur.Index.Writer, cur.Index.WriterUntil = "dead-run", now.Add(job.RunClaim)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.writeVectors(ctx, j); !errors.Is(err, errOtherWriter) {
		t.Fatalf("under a dead run's live claim: %v; want errOtherWriter", err)
	}
	now = now.Add(job.RunClaim + time.Second)
	if err := s.writeVectors(ctx, j); err != nil {
		t.Fatalf("after the dead run's claim lapsed: %v", err)
	}
	if sink.writes != 3 {
		t.Fatalf("%d writes, want 3 (the first, the one after it, the one after the lapse)", sink.writes)
	}
}
