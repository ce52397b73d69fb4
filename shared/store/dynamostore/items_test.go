package dynamostore

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// TestEncodeRecordAsReflection holds the hand-built record item equal to what
// attributevalue.MarshalMap makes of recordItem, and decodable back.
func TestEncodeRecordAsReflection(t *testing.T) {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 60)
	exp := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)
	for _, r := range []job.Record{
		{ID: "a", Status: job.RecordSucceeded, Output: "short", InputTokens: 10, OutputTokens: 20, StopReason: "end_turn", ExpiresAt: exp, Path: job.PathBatch},
		{ID: "b", Status: job.RecordSucceeded, Output: long, InputTokens: 1},
		{ID: "c", Status: job.RecordFailed, ErrorCode: "400", ErrorMessage: "bad", Note: "n"},
		{ID: "d", Status: job.RecordSucceeded, OutputRef: "s3://b/k", ContentType: "application/json"},
		{ID: "e", Status: job.RecordSucceeded, Output: strings.Repeat("x", compressMin+1)},
	} {
		t.Run(r.ID, func(t *testing.T) {
			got, err := encodeRecord("job1", 20, &r)
			if err != nil {
				t.Fatal(err)
			}
			want := reflectItem(t, "job1", 20, &r)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("hand-built item\n%#v\nwant (attributevalue)\n%#v", got, want)
			}
			back, err := decodeRecord(got)
			if err != nil || back.Output != r.Output || back.Status != r.Status || back.InputTokens != r.InputTokens || back.Path != r.Path {
				t.Fatalf("decoded %+v, %v", back, err)
			}
		})
	}
}

// reflectItem is the encoding before hand-building: recordItem through attributevalue.
func reflectItem(t *testing.T, jobID string, shards int, r *job.Record) any {
	t.Helper()
	it := recordItem{
		PK: recordPK(jobID, job.RecordShard(r.ID, shards)), SK: recordSK(r.ID), ExpiresAt: storeutil.ExpiresUnix(r.ExpiresAt),
		JobID: jobID, ID: r.ID, Status: string(r.Status), Output: r.Output, OutputRef: r.OutputRef, StopReason: r.StopReason,
		ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, ContentType: r.ContentType, Note: r.Note, Path: r.Path,
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
	}
	if len(r.Output) > compressMin {
		gz, err := gzipString(r.Output)
		if err != nil {
			t.Fatal(err)
		}
		if len(gz) < len(r.Output) {
			it.Output, it.OutputGz = "", gz
		}
	}
	m, err := attributevalue.MarshalMap(&it)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// BenchmarkEncodeRecord is one 2 KB output's item, as ingest makes 50,000 of them per file.
func BenchmarkEncodeRecord(b *testing.B) {
	r := job.Record{ID: "r0000001", Status: job.RecordSucceeded, Output: strings.Repeat("The quick brown fox jumps over the lazy dog; ", 45), InputTokens: 12, OutputTokens: 345}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeRecord("job1", 20, &r); err != nil {
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
	n, err := RecordItemSize("j1", 20, &r)
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
