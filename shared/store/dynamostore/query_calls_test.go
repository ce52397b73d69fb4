package dynamostore

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// countQueries counts the Query calls the store makes.
type countQueries struct {
	Client
	n atomic.Int64
}

func (c *countQueries) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.n.Add(1)
	return c.Client.Query(ctx, in, optFns...)
}

// TestStatusListingQueryCalls: listing the failed records of a job where one
// record in ten failed takes a few Query calls per page, not one per record
// scanned. Limit counts items before the filter, so asking each time for
// only the items still wanted read a 1-in-10 filter a handful of items per
// call (get_job_results status=failed on a 2,600-record job took minutes on
// moto_server in the AWS wiring of the end-to-end suite).
func TestStatusListingQueryCalls(t *testing.T) {
	client, table := newTable(t)
	cq := &countQueries{Client: client}
	s := New(cq, table)
	rs := byOrdinal("status-filter", 2)
	recs := testRecords(400)
	for i := range recs {
		if (i+1)%10 == 0 {
			recs[i].Status = job.RecordFailed
		}
	}
	if err := s.PutRecords(t.Context(), rs, recs); err != nil {
		t.Fatal(err)
	}
	cq.n.Store(0)
	got, pages := 0, 0
	q := store.RecordQuery{Status: job.RecordFailed, Limit: 7}
	for {
		page, next, err := s.ListRecords(t.Context(), rs, q)
		if err != nil {
			t.Fatal(err)
		}
		got, pages = got+len(page), pages+1
		if next == "" {
			break
		}
		q.Cursor = next
	}
	if got != 40 {
		t.Fatalf("listed %d failed records, want 40", got)
	}
	// Per page and shard: a read that fills it plus the look past its end,
	// each a few calls while the ask grows.
	if calls, most := cq.n.Load(), int64(pages*2*8); calls > most {
		t.Errorf("%d Query calls for %d pages of failed records (1 in 10), want at most %d", calls, pages, most)
	}
}
