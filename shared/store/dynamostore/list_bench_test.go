package dynamostore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// queryCounter counts Query calls and the items they read (ScannedCount:
// what DynamoDB bills, filtered or not).
type queryCounter struct {
	Client
	mu             sync.Mutex
	queries, items int
}

func (c *queryCounter) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.Client.Query(ctx, in, optFns...)
	if err == nil {
		c.mu.Lock()
		c.queries++
		c.items += int(out.ScannedCount)
		c.mu.Unlock()
	}
	return out, err
}

// BenchmarkListRecordsPage pages through 1,000 records 100 at a time (as
// get_job_results does) over 1, 4 and 20 shards against moto: queries/page
// and items-read/page are what a page costs in DynamoDB requests and read
// units (moto's time per page says little about DynamoDB's).
// Run: MCPBATCH_TOOLS=... go test -run '^$' -bench ListRecordsPage ./shared/store/dynamostore/
func BenchmarkListRecordsPage(b *testing.B) {
	const n, limit = 1000, 100
	for _, shards := range []int{1, 4, 20} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			client, table := newTable(b)
			c := &queryCounter{Client: client}
			s := New(c, table)
			rs := job.RecordSet{JobID: job.NewID(time.Now()), Shards: shards, ByOrdinal: true}
			recs := make([]job.Record, n)
			for i := range recs {
				recs[i] = job.Record{ID: fmt.Sprintf("rec-%04d", (i*7919)%n), Ordinal: i, Status: job.RecordSucceeded, Output: "an answer of a few words"}
			}
			if err := s.PutRecords(b.Context(), rs, recs); err != nil {
				b.Fatal(err)
			}
			c.queries, c.items = 0, 0
			pages := 0
			for b.Loop() {
				q := store.RecordQuery{Limit: limit}
				got := 0
				for {
					page, next, err := s.ListRecords(b.Context(), rs, q)
					if err != nil {
						b.Fatal(err)
					}
					got += len(page)
					pages++
					if q.Cursor = next; next == "" {
						break
					}
				}
				if got != n {
					b.Fatalf("listed %d records, want %d", got, n)
				}
			}
			b.ReportMetric(float64(c.queries)/float64(pages), "queries/page")
			b.ReportMetric(float64(c.items)/float64(pages), "items-read/page")
		})
	}
}
