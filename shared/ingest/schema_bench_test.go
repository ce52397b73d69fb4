package ingest_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/ingest/internal/ingesttest"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// BenchmarkSchemaValidation is the A/B of output validation on ingest: the
// 50,000-record file (benchSpec) parsed as a classification job's answers,
// with and without an output schema checking each. Target (issue 26): the
// schema adds at most 15 %.
// Run: go test -run '^$' -bench 'SchemaValidation/ab' -benchtime 5x -count 3 ./shared/ingest/
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
	once := func(b *testing.B, in *ingest.Ingester, schema string) {
		j := newJob()
		j.Params = &job.Params{OutputSchema: schema}
		res, err := in.Ingest(context.Background(), j, benchFiles, parse, nil)
		if err != nil || res.Succeeded+res.Failed != benchSpec.Records || (schema != "" && res.Failed != benchSpec.Records/benchSpec.ErrorEvery) {
			b.Fatalf("%+v, %v", res.Checkpoint, err)
		}
	}
	for _, tc := range []struct {
		name   string
		schema string
	}{{"without", ""}, {"with_schema", schema}} {
		b.Run(tc.name, func(b *testing.B) {
			in := benchIngester(data, 0)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				once(b, in, tc.schema)
			}
		})
	}
	// ab alternates the two in each iteration, so both see the same load on
	// a shared machine: overhead_% is the schema's share of wall time over
	// all of them, cpu_overhead_% of the process's CPU time (steadier when
	// other processes take the cores).
	b.Run("ab", func(b *testing.B) {
		in := benchIngester(data, 0)
		var without, with, cpuWithout, cpuWith time.Duration
		for b.Loop() {
			t0, c0 := time.Now(), cpuTime(b)
			once(b, in, "")
			t1, c1 := time.Now(), cpuTime(b)
			once(b, in, schema)
			without, with = without+t1.Sub(t0), with+time.Since(t1)
			cpuWithout, cpuWith = cpuWithout+c1-c0, cpuWith+cpuTime(b)-c1
		}
		b.ReportMetric(100*(float64(with)/float64(without)-1), "overhead_%")
		b.ReportMetric(100*(float64(cpuWith)/float64(cpuWithout)-1), "cpu_overhead_%")
	})
}

// cpuTime is the user and system time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
