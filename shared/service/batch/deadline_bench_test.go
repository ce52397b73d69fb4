package batch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// BenchmarkRedriveSetup is what a deadline re-drive costs ingest once the
// stopped parts are read, for a 50,000-record job whose batch part produced
// half: list the stored results, then write the caller's records no part
// produced as the run's input (startRedrive's reads and write).
func BenchmarkRedriveSetup(b *testing.B) {
	ctx := context.Background()
	st, blobs := localdeps.New(b)
	s := &Service{Store: st, Blobs: blobs, Bucket: "s3://bench"}
	const n = 50_000
	j := &job.Job{ID: "bench1", Mode: job.ModeBatch, RecordCount: n, Shards: job.ShardsFor(n), InputURI: "s3://bench/input/bench1", InputOrder: true}
	ins := make([]job.Input, n)
	recs := make([]job.Record, 0, n/2)
	exp := time.Now().Add(24 * time.Hour)
	for i := range ins {
		ins[i] = job.Input{ID: fmt.Sprintf("rec-%05d", i), Prompt: fmt.Sprintf("Summarise fact #%d in one sentence.", i)}
		if i%2 == 0 {
			recs = append(recs, job.Record{JobID: j.ID, ID: ins[i].ID, Ordinal: i, Status: job.RecordSucceeded, Output: "an answer of a few words", Path: job.PathBatch, ExpiresAt: exp})
		}
	}
	if err := service.WriteInputs(ctx, s.Blobs, j, ins); err != nil {
		b.Fatal(err)
	}
	for k := 0; k < len(recs); k += 1000 {
		if err := st.PutRecords(ctx, j.RecordSet(), recs[k:min(k+1000, len(recs))]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		have, c, err := service.StoredResults(ctx, s.Store, j, "")
		if err != nil || c.Succeeded != n/2 {
			b.Fatalf("stored %+v, %v", c, err)
		}
		left, err := s.writeUnproduced(ctx, j, have, "s3://bench/input/bench1/redrive/records.jsonl")
		if err != nil || left != n/2 {
			b.Fatalf("%d left, %v", left, err)
		}
	}
}
