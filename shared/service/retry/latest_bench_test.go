package retry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/retry"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// BenchmarkLatestResultsPage: one page (limit 1) of the merged view of a job
// of 400 records that all failed and were all retried with success, each
// answer 300 KB. B/op is what reading that one page costs.
// Run: go test -run '^$' -bench LatestResultsPage -benchmem ./shared/service/retry/
func BenchmarkLatestResultsPage(b *testing.B) {
	const n, outBytes = 400, 300 << 10
	ctx := context.Background()
	st, err := localstore.Open(filepath.Join(b.TempDir(), "db.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	parent := &job.Job{ID: job.NewID(now.Add(-time.Hour)), Owner: "o", Provider: job.ProviderBedrock, Model: haiku, Status: job.StatusPartiallyCompleted,
		RecordCount: n, Failed: n, Shards: 1, InputOrder: true, TTLDays: 7, CreatedAt: now.Add(-time.Hour), UpdatedAt: now, ExpiresAt: job.ExpiresAt(now, 7)}
	child := &job.Job{ID: job.NewID(now), Owner: "o", Provider: job.ProviderBedrock, Model: haiku, Status: job.StatusCompleted, RetryOf: parent.ID,
		RecordCount: n, Succeeded: n, Shards: 1, InputOrder: true, TTLDays: 7, CreatedAt: now, UpdatedAt: now, ExpiresAt: job.ExpiresAt(now, 7)}
	parent.RetriedBy = []string{child.ID}
	for _, j := range []*job.Job{parent, child} {
		if err := st.CreateJob(ctx, j); err != nil {
			b.Fatal(err)
		}
	}
	failed, succeeded := make([]job.Record, n), make([]job.Record, n)
	answer := strings.Repeat("An answer of some length. ", outBytes/26)
	for i := range n {
		id := fmt.Sprintf("doc/%03d", i)
		failed[i] = job.Record{JobID: parent.ID, ID: id, Ordinal: i, Status: job.RecordFailed, ErrorCode: "ThrottlingException", ErrorMessage: "slow down"}
		succeeded[i] = job.Record{JobID: child.ID, ID: id, Ordinal: i, Status: job.RecordSucceeded, Output: answer}
	}
	if err := st.PutRecords(ctx, parent.RecordSet(), failed); err != nil {
		b.Fatal(err)
	}
	if err := st.PutRecords(ctx, child.RecordSet(), succeeded); err != nil {
		b.Fatal(err)
	}
	svc := &retry.Service{Jobs: st}
	for b.Loop() {
		p, err := svc.LatestResults(ctx, "o", service.ResultsQuery{JobID: parent.ID, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Records) != 1 || p.Records[0].Status != job.RecordSucceeded {
			b.Fatalf("page %+v", p.Records)
		}
	}
}
