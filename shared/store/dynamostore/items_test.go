package dynamostore

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// TestRecordItemRoundTrip: a record item holds the record whole (plain or
// gzip JSON, whichever is smaller) beside its keys and the attributes
// queries read, and reads back equal.
func TestRecordItemRoundTrip(t *testing.T) {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 60)
	exp := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)
	for _, r := range []job.Record{
		{ID: "a", Status: job.RecordSucceeded, Output: "short", InputTokens: 10, OutputTokens: 20, CacheReadTokens: 3, CacheWriteTokens: 4, StopReason: "end_turn", ExpiresAt: exp, Path: job.PathBatch},
		{ID: "b", Status: job.RecordSucceeded, Output: long, InputTokens: 1},
		{ID: "c", Status: job.RecordFailed, ErrorCode: "400", ErrorMessage: "bad", Note: "n"},
		{ID: "d", Status: job.RecordSucceeded, OutputRef: "s3://b/k", ContentType: "application/json"},
		{ID: "e", Status: job.RecordSucceeded, Output: strings.Repeat("x", compressMin+1)},
		{ID: "f", Ordinal: 1234, Status: job.RecordSucceeded, Output: "by ordinal"},
	} {
		for _, byOrdinal := range []bool{false, true} {
			rs := job.RecordSet{JobID: "job1", Shards: 20, ByOrdinal: byOrdinal}
			t.Run(fmt.Sprintf("%s/byOrdinal=%v", r.ID, byOrdinal), func(t *testing.T) {
				got, err := encodeRecord(rs, &r)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := got["status"]; !ok || (got[attrRecord] == nil) == (got[attrRecordGz] == nil) {
					t.Fatalf("item %#v: want status and exactly one of rec, recGz", got)
				}
				back, err := decodeRecord(got)
				if err != nil {
					t.Fatal(err)
				}
				want := r
				want.JobID = rs.JobID
				if !byOrdinal {
					back.Ordinal, want.Ordinal = 0, 0
				}
				if !reflect.DeepEqual(back, want) {
					t.Fatalf("decoded %+v\nwant    %+v", back, want)
				}
			})
		}
	}
}

// TestRecordSortKeys: ordinal keys sort as their ordinals do, whatever the
// ids, and every record key lies between its prefix and prefixEnd.
func TestRecordSortKeys(t *testing.T) {
	rs := job.RecordSet{JobID: "j", Shards: 3, ByOrdinal: true}
	keys := []job.RecordKey{{ID: "10", Ordinal: 0}, {ID: "9", Ordinal: 1}, {ID: "b", Ordinal: 2}, {ID: "a", Ordinal: 9}, {ID: "~~~", Ordinal: 10}, {ID: "", Ordinal: 99}, {ID: "0", Ordinal: 100}, {ID: "z", Ordinal: storeutil.MaxOrdinal}}
	for i, k := range keys {
		sk := recordSK(rs, k)
		if sk <= skOrdPrefix || sk >= prefixEnd(skOrdPrefix) {
			t.Errorf("key %q outside %q..%q", sk, skOrdPrefix, prefixEnd(skOrdPrefix))
		}
		if i > 0 && recordSK(rs, keys[i-1]) >= sk {
			t.Errorf("key of ordinal %d (%q) not after ordinal %d's", k.Ordinal, sk, keys[i-1].Ordinal)
		}
	}
	old := job.RecordSet{JobID: "j", Shards: 3}
	if sk := recordSK(old, job.RecordKey{ID: "a\xff", Ordinal: 5}); sk != "REC#a\xff" || sk >= prefixEnd(skRecPrefix) {
		t.Errorf("by-id key %q", sk)
	}
}

// BenchmarkEncodeRecord is one 2 KB output's item, as ingest makes 50,000 of them per file.
func BenchmarkEncodeRecord(b *testing.B) {
	r := job.Record{ID: "r0000001", Status: job.RecordSucceeded, Output: strings.Repeat("The quick brown fox jumps over the lazy dog; ", 45), InputTokens: 12, OutputTokens: 345}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeRecord(job.RecordSet{JobID: "job1", Shards: 20, ByOrdinal: true}, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestItemSize follows the documented rules: names and values by length,
// numbers by about half their significant digits plus one, maps and lists 3
// bytes plus 1 per element.
func TestItemSize(t *testing.T) {
	for _, c := range []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"string", map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "JOB#1"}}, 2 + 5},
		{"number", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "12345"}}, 1 + 4},
		{"binary", map[string]types.AttributeValue{"b": &types.AttributeValueMemberB{Value: make([]byte, 100)}}, 1 + 100},
		{"bool", map[string]types.AttributeValue{"ok": &types.AttributeValueMemberBOOL{Value: true}}, 2 + 1},
		{"list", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "ab"}}}}, 1 + 3 + 1 + 2},
		{"map", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "v"}}}}, 1 + 3 + 1 + 1 + 1},
	} {
		if got := ItemSize(c.item); got != c.want {
			t.Errorf("%s: ItemSize = %d, want %d", c.name, got, c.want)
		}
	}
	r := job.Record{ID: "r1", Status: job.RecordSucceeded, Output: "hello"}
	n, err := RecordItemSize(job.RecordSet{JobID: "j1", Shards: 20}, &r)
	if err != nil || n < len("hello")+len("output") || n > 200 {
		t.Errorf("RecordItemSize = %d, %v", n, err)
	}
}

// TestJobBudgetRoundTrip: budget_usd and the parts' estimates, spend and
// holds survive the job item.
func TestJobBudgetRoundTrip(t *testing.T) {
	spent := 0.75
	j := &job.Job{ID: "j1", Owner: "o", Provider: "bedrock", Status: job.StatusQueued, BudgetUSD: 12.5, CreatedAt: time.Now(), UpdatedAt: time.Now(),
		Parts: []job.Part{{Index: 0, Status: job.StatusIngesting, EstimateUSD: 0.5, SpentUSD: &spent}, {Index: 1, Status: job.StatusQueued, EstimateUSD: 0.5, Held: true}}}
	item, err := encodeJob(j)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeJob(item)
	if err != nil || back.BudgetUSD != 12.5 {
		t.Fatalf("decoded budget %v, %v; want 12.5", back.BudgetUSD, err)
	}
	if p := back.Parts; len(p) != 2 || p[0].EstimateUSD != 0.5 || p[0].SpentUSD == nil || *p[0].SpentUSD != 0.75 || p[0].Held || p[1].SpentUSD != nil || !p[1].Held {
		t.Fatalf("decoded parts %+v; want the estimates, the first part's spend and the second part held", p)
	}
}
