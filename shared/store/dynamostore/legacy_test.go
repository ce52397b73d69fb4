package dynamostore

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/storetest"
)

// TestLegacyJobItemReads: a job item of the layout before the whole-job
// document (one attribute per field; testdata/legacy-job-item.json, written
// by that layout's encoder from a job with every field set) still reads, to
// what that layout's own decoder made of it (testdata/legacy-job.json).
func TestLegacyJobItemReads(t *testing.T) {
	item := readItemJSON(t, "testdata/legacy-job-item.json")
	if _, ok := item[attrJobDoc]; ok {
		t.Fatal("the legacy item carries a job document")
	}
	var want job.Job
	b, err := os.ReadFile("testdata/legacy-job.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	got, err := decodeJob(item)
	if err != nil {
		t.Fatal(err)
	}
	if d := storetest.Diff(want, *got); len(d) > 0 {
		t.Fatalf("legacy item read differs in %d fields: %v", len(d), d)
	}
}

// TestJobItemCompressed: a large job (a long system prompt) is stored as a
// gzip document, well under its JSON size, and reads back whole.
func TestJobItemCompressed(t *testing.T) {
	var j job.Job
	storetest.Fill(&j, time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
	j.ExpiresAt = j.ExpiresAt.Truncate(time.Second) // kept to the second, as TTL
	j.Params.System = strings.Repeat("Classify the ticket by its first complaint; answer in JSON. ", 5000)
	item, err := encodeJob(&j)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := item[attrJobDocGz]; !ok {
		t.Fatalf("a %d-byte system prompt was not compressed", len(j.Params.System))
	}
	if n := ItemSize(item); n > 50_000 {
		t.Fatalf("item of %d bytes, want it compressed far below the 300 KB prompt", n)
	}
	back, err := decodeJob(item)
	if err != nil {
		t.Fatal(err)
	}
	if d := storetest.Diff(j, *back); len(d) > 0 {
		t.Fatalf("compressed job differs: %v", d)
	}
}

// readItemJSON reads an item in DynamoDB's JSON form ({"S": …}, {"N": …}, …).
func readItemJSON(t *testing.T, path string) map[string]types.AttributeValue {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	m := map[string]types.AttributeValue{}
	for k, v := range raw {
		m[k] = fromJSON(t, v)
	}
	return m
}

func fromJSON(t *testing.T, v any) types.AttributeValue {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 1 {
		t.Fatalf("not an attribute value: %v", v)
	}
	for typ, x := range obj {
		switch typ {
		case "S":
			return &types.AttributeValueMemberS{Value: x.(string)}
		case "N":
			return &types.AttributeValueMemberN{Value: x.(string)}
		case "B":
			b, err := base64.StdEncoding.DecodeString(x.(string))
			if err != nil {
				t.Fatalf("binary attribute: %v", err)
			}
			return &types.AttributeValueMemberB{Value: b}
		case "BOOL":
			return &types.AttributeValueMemberBOOL{Value: x.(bool)}
		case "NULL":
			return &types.AttributeValueMemberNULL{Value: true}
		case "L":
			var l []types.AttributeValue
			for _, e := range x.([]any) {
				l = append(l, fromJSON(t, e))
			}
			return &types.AttributeValueMemberL{Value: l}
		case "M":
			m := map[string]types.AttributeValue{}
			for k, e := range x.(map[string]any) {
				m[k] = fromJSON(t, e)
			}
			return &types.AttributeValueMemberM{Value: m}
		}
		t.Fatalf("attribute type %s not read here", typ)
	}
	return nil
}
