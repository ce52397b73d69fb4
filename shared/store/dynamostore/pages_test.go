package dynamostore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// sortKeys records the sort keys each Query starts from.
type sortKeys struct {
	Client
	mu  sync.Mutex
	los []string
}

func (c *sortKeys) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if lo, ok := in.ExpressionAttributeValues[":lo"].(*types.AttributeValueMemberS); ok {
		c.mu.Lock()
		c.los = append(c.los, lo.Value)
		c.mu.Unlock()
	}
	return c.Client.Query(ctx, in, optFns...)
}

func (c *sortKeys) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.los
	c.los = nil
	return out
}

// packedRecords are n records of about 800-byte answers, one in fifty failed.
func packedRecords(n int) []job.Record {
	recs := make([]job.Record, n)
	for i := range recs {
		recs[i] = job.Record{ID: fmt.Sprintf("r%06d", i), Ordinal: i, Status: job.RecordSucceeded, InputTokens: 500, OutputTokens: 200,
			Output: fmt.Sprintf("answer %d: %s", i, strings.Repeat(fmt.Sprintf("the ticket is about billing %d. ", i%97), 25))}
		if i%50 == 7 {
			recs[i].Status, recs[i].Output, recs[i].ErrorCode = job.RecordFailed, "", "ModelError"
		}
	}
	return recs
}

// TestPackedWritesFewItems: 2,000 records of about 800-byte answers are a
// few dozen items, billed far under one write unit a record (one each, at
// least, before pages).
func TestPackedWritesFewItems(t *testing.T) {
	client, table := newTable(t)
	s := New(client, table)
	rs := job.RecordSet{JobID: "packed-items", Shards: 4, ByOrdinal: true, Packed: true}
	recs := packedRecords(2000)
	if err := s.PutRecords(t.Context(), rs, recs); err != nil {
		t.Fatal(err)
	}
	out, err := client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	units, pages, companions := 0, 0, 0
	for _, it := range out.Items {
		units += (ItemSize(it) + 1023) / 1024
		switch sk := it[attrSK].(*types.AttributeValueMemberS).Value; {
		case strings.HasPrefix(sk, skPagePrefix):
			pages++
		case strings.HasPrefix(sk, skFailPrefix):
			companions++
		default:
			t.Fatalf("item %s in a packed set", sk)
		}
	}
	if pages != companions || pages < 2000/pageMaxRecords || pages > 2*2000/pageMaxRecords {
		t.Fatalf("%d pages and %d companions for 2,000 records, want about %d of each", pages, companions, 2000/pageMaxRecords)
	}
	if per := float64(units) / 2000; per > 0.2 {
		t.Fatalf("%.3f write units a record, want under 0.2", per)
	}
}

// TestPackedReadsByRange: a failed-only listing reads companions, never
// pages; a listing reads the ranges of its records (and no others); a
// request carrying a store.ReadCache reads a range once however many
// chunks it lists it in.
func TestPackedReadsByRange(t *testing.T) {
	client, table := newTable(t)
	sk := &sortKeys{Client: client}
	s := New(sk, table)
	rs := job.RecordSet{JobID: "packed-reads", Shards: 3, ByOrdinal: true, Packed: true}
	if err := s.PutRecords(t.Context(), rs, packedRecords(1000)); err != nil {
		t.Fatal(err)
	}
	sk.take()
	failed, _, err := s.ListRecords(t.Context(), rs, store.RecordQuery{Status: job.RecordFailed, Limit: 500})
	if err != nil || len(failed) != 20 {
		t.Fatalf("failed records: %d, %v", len(failed), err)
	}
	for _, lo := range sk.take() {
		if !strings.HasPrefix(lo, skFailPrefix) {
			t.Fatalf("a failed-only listing read from %s", lo)
		}
	}
	// Records 0..99 are in range 0: one Query, whatever the chunks.
	ctx := store.WithReadCache(t.Context())
	first, next, err := s.ListRecords(ctx, rs, store.RecordQuery{Limit: 1})
	if err != nil || len(first) != 1 {
		t.Fatalf("first record: %d, %v", len(first), err)
	}
	rest, _, err := s.ListRecords(ctx, rs, store.RecordQuery{Limit: 99, Cursor: next})
	if err != nil || len(rest) != 99 || rest[98].Ordinal != 99 {
		t.Fatalf("rest: %d records, %v", len(rest), err)
	}
	if los := sk.take(); len(los) != 1 || los[0] != skPagePrefix+ord10(0) {
		t.Fatalf("two chunks of range 0 read %v, want it once", los)
	}
	// Without the cache each listing reads for itself.
	if _, _, err := s.ListRecords(t.Context(), rs, store.RecordQuery{Limit: 99, Cursor: next}); err != nil {
		t.Fatal(err)
	}
	if los := sk.take(); len(los) != 1 {
		t.Fatalf("a listing without a cache read %v", los)
	}
}

// TestPackedRangeOfManyPages: a range rewritten in hundreds of groupings
// (pages over any bound a read might have kept to) still reads whole, each
// record once and as last written.
func TestPackedRangeOfManyPages(t *testing.T) {
	client, table := newTable(t)
	s := New(client, table)
	rs := job.RecordSet{JobID: "packed-many", Shards: 1, ByOrdinal: true, Packed: true}
	recs := packedRecords(pageSpan)
	var calls [][]job.Record
	for i := range recs {
		calls = append(calls, []job.Record{recs[i]})
	}
	for i := range 420 {
		a := i % pageSpan
		b := (a + 1 + i/pageSpan) % pageSpan // 420 distinct pairs
		if a != b {
			calls = append(calls, []job.Record{recs[a], recs[b]})
		}
	}
	// The last write of record 5 names it "last".
	recs[5].Output = "last"
	calls = append(calls, []job.Record{recs[5], recs[6]})
	for _, c := range calls {
		if err := s.PutRecords(t.Context(), rs, c); err != nil {
			t.Fatal(err)
		}
	}
	got, next, err := s.ListRecords(t.Context(), rs, store.RecordQuery{Limit: 500})
	if err != nil || next != "" || len(got) != pageSpan {
		t.Fatalf("%d records (next %q), want %d: %v", len(got), next, pageSpan, err)
	}
	for i, r := range got {
		if r.Ordinal != i || r.Output != recs[i].Output {
			t.Fatalf("record %d: ordinal %d, output %.20q; want %.20q", i, r.Ordinal, r.Output, recs[i].Output)
		}
	}
}
