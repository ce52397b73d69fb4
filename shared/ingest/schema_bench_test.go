package ingest_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/ingest/internal/ingesttest"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// BenchmarkSchemaValidation is the A/B of output validation on ingest: the
// 50,000-record file (benchSpec) parsed as a classification job's answers,
// with and without an output schema checking each. Target (issue 26): the
// schema adds at most 15 %.
// Run: go test -run '^$' -bench SchemaValidation -count 3 ./shared/ingest/
func BenchmarkSchemaValidation(b *testing.B) {
	data := output(b)
	cats := []string{"billing", "bug", "feature", "other"}
	// Each succeeded record's answer is a ticket classification (JSON), the
	// rest of the line as its summary.
	parse := func(line []byte) (job.Record, error) {
		r, err := ingesttest.Parse(line)
		if err == nil && r.Status == job.RecordSucceeded {
			h := fnv.New32a()
			h.Write([]byte(r.ID))
			r.Output = fmt.Sprintf(`{"category":%q,"confidence":0.%d,"summary":%q}`, cats[h.Sum32()%4], h.Sum32()%10, r.Output[:min(len(r.Output), 200)])
		}
		return r, err
	}
	schema := `{"type":"object","properties":{"category":{"type":"string","enum":["billing","bug","feature","other"]},"confidence":{"type":"number"},"summary":{"type":"string"}},"required":["category","confidence","summary"],"additionalProperties":false}`
	for _, tc := range []struct {
		name   string
		schema string
	}{{"without", ""}, {"with_schema", schema}} {
		b.Run(tc.name, func(b *testing.B) {
			in := benchIngester(data, 0)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				j := newJob()
				j.Params = &job.Params{OutputSchema: tc.schema}
				res, err := in.Ingest(context.Background(), j, benchFiles, parse, nil)
				if err != nil || res.Succeeded+res.Failed != benchSpec.Records || (tc.schema != "" && res.Failed != benchSpec.Records/benchSpec.ErrorEvery) {
					b.Fatalf("%+v, %v", res.Checkpoint, err)
				}
			}
		})
	}
}
