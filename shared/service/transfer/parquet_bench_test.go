package transfer_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/parquetout"
	"github.com/mcpbatch/mcpbatch/shared/service/query"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// BenchmarkParquetExport: export_results format=parquet of a job of n
// classification results with an output schema, on the local store.
// peak-heap-MB is the largest live heap seen while it ran (sampled every
// 5 ms): a row group per 1,000 records, so it stays flat as n grows.
// Target (issue 26): 1,000,000 records ≤ 64 MB.
// Run: go test -run '^$' -bench ParquetExport -benchtime 1x ./shared/service/transfer/
func BenchmarkParquetExport(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st, blobs := localdeps.New(b)
			ctx := context.Background()
			schema := `{"type":"object","properties":{"category":{"type":"string"},"confidence":{"type":"number"}},"required":["category","confidence"],"additionalProperties":false}`
			j := &job.Job{ID: job.NewID(time.Now()), Owner: "alice", Provider: "bedrock", Model: "anthropic.claude-haiku-4-5-20251001-v1:0",
				Status: job.StatusCompleted, Shards: job.ShardsFor(n), InputOrder: true, RecordCount: n, Params: &job.Params{OutputSchema: schema}}
			if err := st.CreateJob(ctx, j); err != nil {
				b.Fatal(err)
			}
			cats := []string{"billing", "bug", "feature", "other"}
			for start := 0; start < n; start += 5000 {
				var recs []job.Record
				for i := start; i < min(start+5000, n); i++ {
					js := fmt.Sprintf(`{"category":%q,"confidence":%.3f}`, cats[i%4], float64(i%1000)/1000)
					recs = append(recs, job.Record{JobID: j.ID, ID: fmt.Sprintf("t%07d", i), Ordinal: i, Status: job.RecordSucceeded,
						Output: js, OutputJSON: js, InputTokens: 40, OutputTokens: 20, StopReason: "end_turn"})
				}
				if err := st.PutRecords(ctx, j.RecordSet(), recs); err != nil {
					b.Fatal(err)
				}
			}
			svc := &transfer.Service{Jobs: st, Blobs: blobs, Bucket: "s3://test", JobPrefix: "mcpbatch", Results: &query.Service{Jobs: st, Records: st},
				Parquet: func(w io.Writer, schema string) (transfer.TableWriter, error) { return parquetout.New(w, schema) }}
			runtime.GC()
			peak := procstat.HeapPeak()
			b.ResetTimer()
			for b.Loop() {
				e, err := svc.Export(ctx, transfer.ExportRequest{Owner: "alice", JobID: j.ID, Format: transfer.ExportParquet})
				if err != nil {
					b.Fatal(err)
				}
				if e.Records != n {
					b.Fatalf("exported %d records, want %d", e.Records, n)
				}
				b.ReportMetric(float64(e.Bytes)/float64(n), "file-B/record")
			}
			b.StopTimer()
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
		})
	}
}
