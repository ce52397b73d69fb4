package localstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// benchResults is how many results the results benchmarks read among: a
// job of 1,000,000 records, 2 % of them failed (every 50th), outputs of
// about 800 bytes (200 tokens).
const benchResults = 1_000_000

var (
	benchOnce  sync.Once
	benchStore *Store
	benchJob   job.RecordSet
	benchErr   error
)

// TestMain removes the benchmark job's database when the binary ends.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchStore != nil {
		_ = benchStore.Close()
	}
	os.Exit(code)
}

// resultsStore writes the benchmark job once per test binary (a minute or
// so) into a database of its own (":memory:" is a file removed on Close).
func resultsStore(b *testing.B) (*Store, job.RecordSet) {
	b.Helper()
	benchOnce.Do(func() {
		s, err := Open(":memory:")
		if err != nil {
			benchErr = err
			return
		}
		rs := job.RecordSet{JobID: "01bench", Shards: job.ShardsFor(benchResults), ByOrdinal: true, Packed: true}
		out := make([]byte, 800)
		for i := range out {
			out[i] = "abcdefghij klmnopqrstuvwxyz"[i%27]
		}
		exp := time.Now().Add(30 * 24 * time.Hour)
		recs := make([]job.Record, 0, 5000)
		for i := range benchResults {
			r := job.Record{ID: fmt.Sprintf("r%07d", i), Ordinal: i, Status: job.RecordSucceeded, Output: string(out),
				InputTokens: 500, OutputTokens: 200, StopReason: "end_turn", ExpiresAt: exp, Path: job.PathBatch}
			if i%50 == 7 {
				r.Status, r.Output, r.ErrorCode, r.ErrorMessage = job.RecordFailed, "", "ModelError", "the model refused"
			}
			recs = append(recs, r)
			if len(recs) == cap(recs) {
				if err := s.PutRecords(context.Background(), rs, recs); err != nil {
					benchErr = err
					return
				}
				recs = recs[:0]
			}
		}
		benchStore, benchJob = s, rs
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchStore, benchJob
}

// p50 reports the median of the timed calls beside the mean ns/op.
func p50(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99_ms")
}

// cursorAt is the cursor of a page that ends just before ordinal o.
func cursorAt(b *testing.B, rs job.RecordSet, o int) string {
	c, err := storeutil.EncodeCursor(recordCursor{JobID: rs.JobID, Ordinal: o - 1, ID: fmt.Sprintf("r%07d", o-1)})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkResultsPage500: a get_job_results page of 500 anywhere in a job
// of 1,000,000 stored results.
func BenchmarkResultsPage500(b *testing.B) {
	s, rs := resultsStore(b)
	rng := rand.New(rand.NewPCG(1, 1))
	var took []time.Duration
	for b.Loop() {
		q := store.RecordQuery{Limit: 500, Cursor: cursorAt(b, rs, 1+rng.IntN(benchResults-600))}
		t0 := time.Now()
		recs, _, err := s.ListRecords(b.Context(), rs, q)
		took = append(took, time.Since(t0))
		if err != nil || len(recs) != 500 {
			b.Fatalf("page: %d records, %v", len(recs), err)
		}
	}
	p50(b, took)
}

// BenchmarkFailedPage500: a failed-only page of 500 (2 % of the records
// failed, so the page spans 25,000 records).
func BenchmarkFailedPage500(b *testing.B) {
	s, rs := resultsStore(b)
	rng := rand.New(rand.NewPCG(2, 2))
	var took []time.Duration
	for b.Loop() {
		q := store.RecordQuery{Status: job.RecordFailed, Limit: 500, Cursor: cursorAt(b, rs, 1+rng.IntN(benchResults-30_000))}
		t0 := time.Now()
		recs, _, err := s.ListRecords(b.Context(), rs, q)
		took = append(took, time.Since(t0))
		if err != nil || len(recs) != 500 {
			b.Fatalf("failed page: %d records, %v", len(recs), err)
		}
	}
	p50(b, took)
}

// BenchmarkRecordByID: one record by key (GetRecords).
func BenchmarkRecordByID(b *testing.B) {
	s, rs := resultsStore(b)
	rng := rand.New(rand.NewPCG(3, 3))
	var took []time.Duration
	for b.Loop() {
		o := rng.IntN(benchResults)
		t0 := time.Now()
		recs, err := s.GetRecords(b.Context(), rs, []job.RecordKey{{ID: fmt.Sprintf("r%07d", o), Ordinal: o}})
		took = append(took, time.Since(t0))
		if err != nil || len(recs) != 1 {
			b.Fatalf("record %d: %d records, %v", o, len(recs), err)
		}
	}
	p50(b, took)
}
