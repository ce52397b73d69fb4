package dynamostore

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/storetest"
)

// listAll pages through a listing of rs.
func listAll(t *testing.T, s store.Store, rs job.RecordSet, st job.RecordStatus) []job.Record {
	t.Helper()
	var out []job.Record
	q := store.RecordQuery{Status: st, Limit: 70}
	for {
		recs, next, err := s.ListRecords(t.Context(), rs, q)
		if err != nil {
			t.Fatalf("list %q: %v", st, err)
		}
		out = append(out, recs...)
		if next == "" {
			return out
		}
		q.Cursor = next
	}
}

// TestPackedLargePagesInObjects: with object storage, the pages of a call
// that would cost more write units than a PUT are one object and items
// pointing into it (one write unit each), and read the same as inline pages do: every listing, each
// status, by key, after a rewrite in another grouping; small pages and
// companions stay inline; a store without object storage says it cannot
// read such a page instead of answering without its records.
func TestPackedLargePagesInObjects(t *testing.T) {
	client, table := newTable(t)
	objs, base := newBucket(t)
	s := New(client, table, WithOverflow(objs, base))
	inline := New(client, table+"-inline")
	if err := CreateTable(t.Context(), client, table+"-inline"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(t.Context(), &dynamodb.DeleteTableInput{TableName: aws.String(table + "-inline")})
	})
	rs := job.RecordSet{JobID: "packed-objects", Shards: 3, ByOrdinal: true, Packed: true}
	// 600 records of 1 KB that compress about 2x: pages of 128 are ~64 KB.
	recs := make([]job.Record, 600)
	for i := range recs {
		recs[i] = job.Record{ID: fmt.Sprintf("r%04d", i), Ordinal: i, Status: job.RecordSucceeded, Output: incompressibleText(1000), InputTokens: 5}
		if i%40 == 3 {
			recs[i] = job.Record{ID: recs[i].ID, Ordinal: i, Status: job.RecordFailed, ErrorCode: "ModelError", ErrorMessage: "bad"}
		}
	}
	// Range 5 holds 128 records of 4 KB: over 300 KB compressed, a page an
	// item could not hold, kept whole in the object (inline it is halved).
	for i := range PageSpan {
		recs = append(recs, job.Record{ID: fmt.Sprintf("big%03d", i), Ordinal: 5*PageSpan + i, Status: job.RecordSucceeded, Output: incompressibleText(4000)})
	}
	// The last range holds one small record: its page stays inline.
	recs = append(recs, job.Record{ID: "tail", Ordinal: 10 * PageSpan, Status: job.RecordSucceeded, Output: "short"})
	retry := []job.Record{{ID: recs[3].ID, Ordinal: 3, Status: job.RecordSucceeded, Output: "answered on retry"}}
	for _, st := range []store.Store{s, inline} {
		for _, w := range [][]job.Record{recs, recs, retry} { // the second write a replay
			if err := st.PutRecords(t.Context(), rs, w); err != nil {
				t.Fatal(err)
			}
		}
	}

	out, err := client.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	refs, inlinePages, bigPages := 0, 0, 0
	for _, it := range out.Items {
		sk := it[attrSK].(*types.AttributeValueMemberS).Value
		_, hasRef := it[attrRef]
		_, hasRecs := it[attrRecs]
		switch {
		case strings.HasPrefix(sk, skFailPrefix) && hasRef:
			t.Fatalf("companion %s in object storage", sk)
		case hasRef && hasRecs:
			t.Fatalf("page %s both inline and in an object", sk)
		case hasRef:
			refs++
			if o, _ := strconv.Atoi(sk[len(skPagePrefix) : len(skPagePrefix)+10]); rangeOf(o) == 5 {
				bigPages++
			}
			if n := ItemSize(it); n > 1024 {
				t.Fatalf("page item %s is %d bytes, want one write unit", sk, n)
			}
		case strings.HasPrefix(sk, skPagePrefix):
			inlinePages++
		}
	}
	if refs < 600/pageMaxRecords || inlinePages < 2 {
		t.Fatalf("%d pages in objects and %d inline, want at least %d and 2 (the tail's, the retry's)", refs, inlinePages, 600/pageMaxRecords)
	}
	if bigPages != 1 {
		t.Fatalf("range 5 in %d pages, want 1", bigPages)
	}
	listed, err := objs.List(t.Context(), base)
	if err != nil || len(listed) != 2 {
		// The replay wrote a new object; the first write's is left to the
		// lifecycle rule. The retry's one small page stays inline.
		t.Fatalf("%d objects under %s (%v), want 2: one of each large write", len(listed), base, err)
	}

	for _, st := range []job.RecordStatus{"", job.RecordSucceeded, job.RecordFailed} {
		want, got := listAll(t, inline, rs, st), listAll(t, s, rs, st)
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("status %q: %d records listed, inline pages list %d", st, len(got), len(want))
		}
		for i := range want {
			if d := storetest.Diff(want[i], got[i]); len(d) > 0 {
				t.Fatalf("status %q: record %s reads differently: %v", st, want[i].ID, d)
			}
		}
	}
	if got := listAll(t, s, rs, job.RecordFailed); got[0].ID == recs[3].ID {
		t.Fatalf("record %s listed failed after its retry succeeded", recs[3].ID)
	}
	got, err := s.GetRecords(t.Context(), rs, []job.RecordKey{{ID: "r0003", Ordinal: 3}, {ID: "r0300", Ordinal: 300}, {ID: "tail", Ordinal: 10 * PageSpan}, {ID: "big077", Ordinal: 5*PageSpan + 77}})
	if err != nil || len(got) != 4 {
		t.Fatalf("GetRecords: %d of 4, %v", len(got), err)
	}
	for _, r := range got {
		if r.ID == "r0300" && r.Output != recs[300].Output || r.ID == "r0003" && r.Output != "answered on retry" {
			t.Fatalf("GetRecords %s: output %.40q", r.ID, r.Output)
		}
	}
	if _, _, err := New(client, table).ListRecords(t.Context(), rs, store.RecordQuery{Limit: 10}); err == nil || !strings.Contains(err.Error(), "no object storage") {
		t.Fatalf("a store without object storage listed pages it cannot read: %v", err)
	}
}
