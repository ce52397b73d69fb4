package dynamostore

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
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

// legacyRecordsGolden holds record items of the per-record layout (one item
// per record, one attribute per field), as that layout's encoder wrote them
// on 2026-12-03 before pages, and what its decoder read from them.
const (
	legacyRecordItemsFile = "testdata/legacy-record-items.json"
	legacyRecordsFile     = "testdata/legacy-records.json"
)

// legacyRecordSets are the record sets of the golden items: a job keyed by
// ordinal over 3 shards and one stored before ordinals (keyed by id).
var legacyRecordSets = map[string]job.RecordSet{
	"ord":  {JobID: "golden-ord", Shards: 3, ByOrdinal: true},
	"byid": {JobID: "golden-byid", Shards: 2},
}

// goldenRecords is what the golden items were written from: every field
// set, a long output (stored compressed), failed records, in both sets.
func goldenRecords() map[string][]job.Record {
	base := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	out := map[string][]job.Record{}
	for name, rs := range legacyRecordSets {
		var full job.Record
		storetest.Fill(&full, base)
		full.JobID, full.Status, full.Ordinal = rs.JobID, job.RecordSucceeded, 7
		full.ExpiresAt = base.Add(48 * time.Hour)
		long := job.Record{JobID: rs.JobID, ID: "long-1", Ordinal: 2, Status: job.RecordSucceeded,
			Output: strings.Repeat("a long answer that compresses well. ", 100), InputTokens: 500, OutputTokens: 900, Path: job.PathBatch}
		recs := []job.Record{full, long}
		for i := range 6 {
			r := job.Record{JobID: rs.JobID, ID: fmt.Sprintf("r%02d", i), Ordinal: 10 + i, Status: job.RecordSucceeded,
				Output: fmt.Sprintf("answer %d", i), StopReason: "end_turn", InputTokens: int64(10 + i), OutputTokens: int64(20 + i),
				ExpiresAt: base.Add(72 * time.Hour)}
			if i%3 == 0 {
				r = job.Record{JobID: rs.JobID, ID: r.ID, Ordinal: r.Ordinal, Status: job.RecordFailed, ErrorCode: "429", ErrorMessage: "throttled"}
			}
			recs = append(recs, r)
		}
		if !rs.ByOrdinal {
			for i := range recs {
				recs[i].Ordinal = 0
			}
		}
		out[name] = recs
	}
	return out
}

// TestWriteLegacyRecordsGolden wrote the golden files with the per-record
// encoder of the time (MCPBATCH_WRITE_GOLDEN=1); it never runs otherwise,
// since rewriting them from a later encoder would prove nothing.
func TestWriteLegacyRecordsGolden(t *testing.T) {
	if os.Getenv("MCPBATCH_WRITE_GOLDEN") != "1" {
		t.Skip("writes the golden files only with MCPBATCH_WRITE_GOLDEN=1")
	}
	items := map[string][]map[string]any{}
	decoded := map[string][]job.Record{}
	for name, recs := range goldenRecords() {
		rs := legacyRecordSets[name]
		for i := range recs {
			item, err := encodeRecord(rs, &recs[i])
			if err != nil {
				t.Fatal(err)
			}
			items[name] = append(items[name], itemJSON(item))
			r, err := decodeRecord(item)
			if err != nil {
				t.Fatal(err)
			}
			decoded[name] = append(decoded[name], r)
		}
	}
	for path, v := range map[string]any{legacyRecordItemsFile: items, legacyRecordsFile: decoded} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// itemJSON is an item in DynamoDB's JSON form (readItemJSON's input).
func itemJSON(item map[string]types.AttributeValue) map[string]any {
	m := map[string]any{}
	for k, v := range item {
		m[k] = valueJSON(v)
	}
	return m
}

func valueJSON(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value} // base64 in JSON
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": itemJSON(v.Value)}
	case *types.AttributeValueMemberL:
		l := []any{}
		for _, e := range v.Value {
			l = append(l, valueJSON(e))
		}
		return map[string]any{"L": l}
	}
	panic(fmt.Sprintf("attribute type %T not written here", v))
}

// TestLegacyRecordItemsRead: record items of the per-record layout, as its
// encoder wrote them (testdata/legacy-record-items.json), put as they are,
// read the same as that layout's decoder read them (legacy-records.json),
// by listing (in input order, and each status) and by key.
func TestLegacyRecordItemsRead(t *testing.T) {
	client, table := newTable(t)
	s := New(client, table, WithNow(func() time.Time { return time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC) }))
	var raw map[string][]map[string]any
	var want map[string][]job.Record
	for path, v := range map[string]any{legacyRecordItemsFile: &raw, legacyRecordsFile: &want} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	for name, rs := range legacyRecordSets {
		t.Run(name, func(t *testing.T) {
			for _, it := range raw[name] {
				item := map[string]types.AttributeValue{}
				for k, v := range it {
					item[k] = fromJSON(t, v)
				}
				if _, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
					t.Fatal(err)
				}
			}
			exp := want[name]
			slices.SortFunc(exp, func(a, b job.Record) int {
				if rs.ByOrdinal && a.Ordinal != b.Ordinal {
					return a.Ordinal - b.Ordinal
				}
				return strings.Compare(a.ID, b.ID)
			})
			for _, st := range []job.RecordStatus{"", job.RecordSucceeded, job.RecordFailed} {
				var wantSt []job.Record
				for _, r := range exp {
					if st == "" || r.Status == st {
						wantSt = append(wantSt, r)
					}
				}
				var got []job.Record // through the cursors, 3 at a time
				for r, err := range store.Records(t.Context(), s, rs, store.RecordQuery{Status: st, Limit: 3}) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, r)
				}
				if len(got) != len(wantSt) {
					t.Fatalf("status %q: %d records listed, want %d", st, len(got), len(wantSt))
				}
				for i := range wantSt {
					if d := storetest.Diff(wantSt[i], got[i]); len(d) > 0 {
						t.Fatalf("status %q: record %s reads differently: %v", st, wantSt[i].ID, d)
					}
				}
			}
			var keys []job.RecordKey
			for _, r := range exp {
				keys = append(keys, r.Key())
			}
			got, err := s.GetRecords(t.Context(), rs, keys)
			if err != nil || len(got) != len(exp) {
				t.Fatalf("GetRecords: %d of %d, %v", len(got), len(exp), err)
			}
			byID := map[string]job.Record{}
			for _, r := range got {
				byID[r.ID] = r
			}
			for _, r := range exp {
				if d := storetest.Diff(r, byID[r.ID]); len(d) > 0 {
					t.Fatalf("GetRecords %s reads differently: %v", r.ID, d)
				}
			}
		})
	}
}
