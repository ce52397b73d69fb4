package retry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/retry"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
	"github.com/mcpbatch/mcpbatch/shared/summary"
)

// BenchmarkSummarize: summarize_results over a job of n classification
// results on the local store (SQLite), by category with confidence
// statistics, a tenth of the records failed and retried. peak-heap-MB is the
// largest live heap seen while it ran (sampled every 5 ms).
// Targets (issue 26): 10,000 ≤ 100 ms; 1,000,000 ≤ 10 s and ≤ 64 MB.
// Run: go test -run '^$' -bench Summarize -benchtime 1x ./shared/service/retry/
func BenchmarkSummarize(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			st, err := localstore.Open(filepath.Join(b.TempDir(), "db.sqlite"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			now := time.Now().UTC()
			parent := &job.Job{ID: job.NewID(now.Add(-time.Hour)), Owner: "o", Provider: job.ProviderBedrock, Model: haiku, Status: job.StatusPartiallyCompleted,
				RecordCount: n, Shards: job.ShardsFor(n), InputOrder: true, TTLDays: 7, CreatedAt: now.Add(-time.Hour), UpdatedAt: now, ExpiresAt: job.ExpiresAt(now, 7)}
			child := &job.Job{ID: job.NewID(now), Owner: "o", Provider: job.ProviderBedrock, Model: haiku, Status: job.StatusCompleted, RetryOf: parent.ID,
				RecordCount: n / 10, Shards: 1, InputOrder: true, KeptOrdinals: true, TTLDays: 7, CreatedAt: now, UpdatedAt: now, ExpiresAt: job.ExpiresAt(now, 7)}
			parent.RetriedBy = []string{child.ID}
			for _, j := range []*job.Job{parent, child} {
				if err := st.CreateJob(ctx, j); err != nil {
					b.Fatal(err)
				}
			}
			cats := []string{"billing", "bug", "feature", "other"}
			const chunk = 5000
			for start := 0; start < n; start += chunk {
				var recs, retried []job.Record
				for i := start; i < min(start+chunk, n); i++ {
					id := fmt.Sprintf("t%07d", i)
					js := fmt.Sprintf(`{"category":%q,"confidence":%.3f,"summary":"ticket %d"}`, cats[i%4], float64(i%1000)/1000, i)
					r := job.Record{JobID: parent.ID, ID: id, Ordinal: i, Status: job.RecordSucceeded, Output: js, OutputJSON: js, InputTokens: 40, OutputTokens: 20}
					if i%10 == 0 {
						retried = append(retried, r)
						retried[len(retried)-1].JobID = child.ID
						r = job.Record{JobID: parent.ID, ID: id, Ordinal: i, Status: job.RecordFailed, ErrorCode: job.RecordSchemaViolation, Output: "oops", ErrorMessage: "bad"}
					}
					recs = append(recs, r)
				}
				if err := st.PutRecords(ctx, parent.RecordSet(), recs); err != nil {
					b.Fatal(err)
				}
				if err := st.PutRecords(ctx, child.RecordSet(), retried); err != nil {
					b.Fatal(err)
				}
			}
			svc := &retry.Service{Jobs: st}
			runtime.GC()
			peak := procstat.HeapPeak()
			cpu0 := procstat.CPUTime()
			b.ResetTimer()
			for b.Loop() {
				_, sum, err := svc.Summarize(ctx, "o", parent.ID, summary.Query{Field: "category", StatsField: "confidence"})
				if err != nil {
					b.Fatal(err)
				}
				if sum.Records != n || sum.Succeeded != n || len(sum.Values) != 4 {
					b.Fatalf("summary %+v", sum)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
			// CPU time per op: on a shared machine the wall time also counts other processes.
			b.ReportMetric(float64((procstat.CPUTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
