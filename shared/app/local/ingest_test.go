package local_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// cutWriter fails one PutRecords call with a deadline, as if the Lambda ran out
// of time mid-file, then writes normally.
type cutWriter struct {
	next  ingest.RecordWriter
	calls atomic.Int64
	cutAt int64
}

func (w *cutWriter) PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	if w.calls.Add(1) == w.cutAt {
		return context.DeadlineExceeded
	}
	return w.next.PutRecords(ctx, rs, recs)
}

// TestIngestCutOffAndResumed: an ingest interrupted mid-file hands over to a new
// run that resumes from the checkpoint; the final counts and results are exactly
// those of one clean run, with nothing counted twice.
func TestIngestCutOffAndResumed(t *testing.T) {
	tests := []struct {
		name  string
		cutAt int64
	}{
		{"first batch", 1},
		{"mid file, after checkpoints", 5},
		{"never", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSuite(t)
			ing := s.l.Service.Batch.Ingester.(*ingest.Ingester)
			ing.ChunkLines = 300 // several checkpoints inside the file
			cut := &cutWriter{next: ing.Records, cutAt: tc.cutAt}
			ing.Records = cut
			cs := s.client("alice")
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(3000)})
			s.settle()
			j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
			if j.Status != "partially_completed" || j.Succeeded != 2700 || j.Failed != 300 || j.BadLines != 0 {
				t.Fatalf("job after a cut at call %d: %+v", tc.cutAt, j)
			}
			// A clean run writes a chunk's records a call (the job's
			// records are packed, see ingest.DefaultPackedBatchSize).
			if tc.cutAt > 0 && cut.calls.Load() <= 3000/int64(ing.ChunkLines) {
				t.Fatalf("%d writes: the cut did not force a second run", cut.calls.Load())
			}
			got := allResults(t, cs, h.JobID, "", 500)
			ids := map[string]bool{}
			for _, r := range got {
				ids[r.ID] = true
			}
			if len(got) != 3000 || len(ids) != 3000 {
				t.Fatalf("%d results, %d distinct, want 3000", len(got), len(ids))
			}
		})
	}
}
