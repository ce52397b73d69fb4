package dynamostore

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/storetest"
)

// packedGolden holds page items of packed sets with every record inline (gzip
// in the page item), as that layout's writer made them on 2026-12-03 before
// large pages went to object storage, and what its reader read from them.
const (
	packedItemsFile   = "testdata/packed-page-items.json"
	packedRecordsFile = "testdata/packed-page-records.json"
)

var packedGoldenSet = job.RecordSet{JobID: "golden-packed", Shards: 3, ByOrdinal: true, Packed: true}

var packedGoldenNow = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// packedGoldenWrites are the golden's two writes: records of every kind in
// two ranges, then two of them again in another grouping (a retry's
// answer), so the items hold an older and a newer copy.
func packedGoldenWrites() [][]job.Record {
	base := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	rs := packedGoldenSet
	var full job.Record
	storetest.Fill(&full, base)
	full.JobID, full.Status, full.Ordinal = rs.JobID, job.RecordSucceeded, 7
	full.ExpiresAt = base.Add(48 * time.Hour)
	long := job.Record{JobID: rs.JobID, ID: "long-1", Ordinal: 2, Status: job.RecordSucceeded,
		Output: strings.Repeat("a long answer that compresses well. ", 100), InputTokens: 500, OutputTokens: 900, Path: job.PathBatch}
	first := []job.Record{full, long}
	for i := range 8 {
		o := 10 + i
		if i >= 4 {
			o = PageSpan + i // the second range
		}
		r := job.Record{JobID: rs.JobID, ID: fmt.Sprintf("r%02d", i), Ordinal: o, Status: job.RecordSucceeded,
			Output: fmt.Sprintf("answer %d", i), StopReason: "end_turn", InputTokens: int64(10 + i), OutputTokens: int64(20 + i),
			ExpiresAt: base.Add(72 * time.Hour), Path: job.PathBatch}
		if i%3 == 0 {
			r = job.Record{JobID: rs.JobID, ID: r.ID, Ordinal: r.Ordinal, Status: job.RecordFailed, ErrorCode: "429", ErrorMessage: "throttled"}
		}
		first = append(first, r)
	}
	retry := []job.Record{
		{JobID: rs.JobID, ID: "r00", Ordinal: 10, Status: job.RecordSucceeded, Output: "answered on retry", InputTokens: 10, OutputTokens: 3},
		{JobID: rs.JobID, ID: "r06", Ordinal: PageSpan + 6, Status: job.RecordSucceeded, Output: "answered on retry too", InputTokens: 11, OutputTokens: 4},
	}
	return [][]job.Record{first, retry}
}

// TestWritePackedGolden wrote the golden files with the page writer of the
// time (MCPBATCH_WRITE_GOLDEN=1); it never runs otherwise, since rewriting
// them from a later writer would prove nothing.
func TestWritePackedGolden(t *testing.T) {
	if os.Getenv("MCPBATCH_WRITE_GOLDEN") != "1" {
		t.Skip("writes the golden files only with MCPBATCH_WRITE_GOLDEN=1")
	}
	client, table := newTable(t)
	s := New(client, table, WithNow(func() time.Time { return packedGoldenNow }))
	var items []map[string]any
	for _, recs := range packedGoldenWrites() {
		reqs, err := PageWrites(s, packedGoldenSet, recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range reqs {
			items = append(items, itemJSON(w.PutRequest.Item))
		}
		if err := s.PutRecords(t.Context(), packedGoldenSet, recs); err != nil {
			t.Fatal(err)
		}
	}
	read := map[string][]job.Record{}
	for _, st := range []job.RecordStatus{"", job.RecordSucceeded, job.RecordFailed} {
		recs, next, err := s.ListRecords(t.Context(), packedGoldenSet, store.RecordQuery{Status: st, Limit: 500})
		if err != nil || next != "" {
			t.Fatalf("list %q: %v (next %q)", st, err, next)
		}
		read[string(st)] = recs
	}
	for path, v := range map[string]any{packedItemsFile: items, packedRecordsFile: read} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPackedGoldenRead: page items of the inline page layout, as its writer
// wrote them (testdata/packed-page-items.json), put as they are, read the
// same as that layout's reader read them (packed-page-records.json): by
// listing (each status, a page at a time) and by key.
func TestPackedGoldenRead(t *testing.T) {
	client, table := newTable(t)
	s := New(client, table, WithNow(func() time.Time { return packedGoldenNow }))
	var raw []map[string]any
	var want map[string][]job.Record
	for path, v := range map[string]any{packedItemsFile: &raw, packedRecordsFile: &want} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, it := range raw {
		item := map[string]types.AttributeValue{}
		for k, v := range it {
			item[k] = fromJSON(t, v)
		}
		if _, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	if len(want[""]) == 0 || len(want[string(job.RecordFailed)]) == 0 {
		t.Fatalf("golden records incomplete: %d listed, %d failed", len(want[""]), len(want[string(job.RecordFailed)]))
	}
	for st, exp := range want {
		var got []job.Record // through the cursors, 3 at a time
		for r, err := range store.Records(t.Context(), s, packedGoldenSet, store.RecordQuery{Status: job.RecordStatus(st), Limit: 3}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		if len(got) != len(exp) {
			t.Fatalf("status %q: %d records listed, want %d", st, len(got), len(exp))
		}
		for i := range exp {
			if d := storetest.Diff(exp[i], got[i]); len(d) > 0 {
				t.Fatalf("status %q: record %s reads differently: %v", st, exp[i].ID, d)
			}
		}
	}
	var keys []job.RecordKey
	for _, r := range want[""] {
		keys = append(keys, r.Key())
	}
	got, err := s.GetRecords(t.Context(), packedGoldenSet, keys)
	if err != nil || len(got) != len(keys) {
		t.Fatalf("GetRecords: %d of %d, %v", len(got), len(keys), err)
	}
	byID := map[string]job.Record{}
	for _, r := range got {
		byID[r.ID] = r
	}
	for _, r := range want[""] {
		if d := storetest.Diff(r, byID[r.ID]); len(d) > 0 {
			t.Fatalf("GetRecords %s reads differently: %v", r.ID, d)
		}
	}
}
