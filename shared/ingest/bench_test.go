package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/ingest/internal/ingesttest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

// benchSpec is a realistic big Bedrock output: 50,000 records (the per-file
// maximum) of 2 KB, ~100 MB.
var benchSpec = ingesttest.Spec{Records: 50_000, LineBytes: 2048, ErrorEvery: 50}

const writeLatency = 10 * time.Millisecond

var (
	benchOnce sync.Once
	benchData []byte
)

// output generates the benchmark output once per process, outside the timers.
func output(b *testing.B) []byte {
	benchOnce.Do(func() {
		var err error
		benchData, err = io.ReadAll(ingesttest.NewGenerator(benchSpec))
		if err != nil {
			b.Fatal(err)
		}
	})
	return benchData
}

// memBlobs serves one object from memory.
type memBlobs struct{ data []byte }

func (m memBlobs) Open(_ context.Context, _ string, offset int64) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(m.data[min(offset, int64(len(m.data))):])), nil
}

func (m memBlobs) Put(_ context.Context, _ string, r io.Reader, _ string) (int64, error) {
	return io.Copy(io.Discard, r)
}

// sleepWriter stands in for DynamoDB: every call takes a fixed time.
type sleepWriter struct{ latency time.Duration }

func (w sleepWriter) PutRecords(ctx context.Context, _ job.RecordSet, _ []job.Record) error {
	if w.latency == 0 {
		return nil
	}
	select {
	case <-time.After(w.latency):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// benchIngester writes and saves checkpoints with the given latency each.
func benchIngester(data []byte, latency time.Duration) *ingest.Ingester {
	return &ingest.Ingester{
		Records:       sleepWriter{latency},
		Blobs:         memBlobs{data},
		Checkpoints:   sleepSaver{latency},
		ResultsPrefix: "s3://results/out",
		Log:           quiet,
	}
}

type sleepSaver struct{ latency time.Duration }

func (s sleepSaver) SaveCheckpoint(context.Context, string, job.Checkpoint) error {
	time.Sleep(s.latency)
	return nil
}

var benchFiles = []ingest.File{{Part: 0, URI: "s3://out/bench/records.jsonl.out"}}

func ingestOnce(b *testing.B, in *ingest.Ingester) ingest.Result {
	j := newJob()
	res, err := in.Ingest(context.Background(), j, benchFiles, ingesttest.Parse, nil)
	if err != nil {
		b.Fatal(err)
	}
	if res.Succeeded+res.Failed != benchSpec.Records {
		b.Fatalf("ingested %d records, want %d", res.Succeeded+res.Failed, benchSpec.Records)
	}
	return res
}

// BenchmarkParseTransform (a): stream, parse and batch ~100 MB with a writer
// that costs nothing; run with -cpu 1 for the one-core figure.
func BenchmarkParseTransform(b *testing.B) {
	data := output(b)
	in := benchIngester(data, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ingestOnce(b, in)
	}
}

// BenchmarkParseTransformBedrock is (a) with the production Bedrock parser.
func BenchmarkParseTransformBedrock(b *testing.B) {
	data := output(b)
	in := benchIngester(data, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := in.Ingest(context.Background(), newJob(), benchFiles, bedrock.ParseOutputLine, nil)
		if err != nil || res.Succeeded+res.Failed != benchSpec.Records {
			b.Fatalf("%+v, %v", res.Checkpoint, err)
		}
	}
}

// BenchmarkParseTransformBedrockConverse is (a) over the lines of a
// Converse-type job with the production Converse parser.
func BenchmarkParseTransformBedrockConverse(b *testing.B) {
	spec := benchSpec
	spec.Converse = true
	data, err := io.ReadAll(ingesttest.NewGenerator(spec))
	if err != nil {
		b.Fatal(err)
	}
	in := benchIngester(data, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := in.Ingest(context.Background(), newJob(), benchFiles, bedrock.ParseConverseLine, nil)
		if err != nil || res.Succeeded+res.Failed != spec.Records || res.BadLines != 0 {
			b.Fatalf("%+v, %v", res.Checkpoint, err)
		}
	}
}

// BenchmarkParseOnly is the parser alone over the same lines, to show what
// the pipeline adds on top of it.
func BenchmarkParseOnly(b *testing.B) {
	data := output(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		for line := range bytes.Lines(data) {
			if _, err := ingesttest.Parse(line); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkConcurrentWrites (b): every 25-record write takes 10 ms; compare the
// wall time with the ideal ⌈records/25⌉ × 10 ms ÷ workers. With the JSON test
// parser the run is bound by parsing when one core parses slower than ~80 MB/s;
// the cheap parser shows the write pipeline alone.
func BenchmarkConcurrentWrites(b *testing.B) {
	data := output(b)
	batches := math.Ceil(float64(benchSpec.Records) / ingest.DefaultBatchSize)
	ideal := time.Duration(batches * float64(writeLatency) / ingest.DefaultWorkers)
	for _, p := range []struct {
		name  string
		parse ingest.Parser
	}{{"json", ingesttest.Parse}, {"bedrock", bedrock.ParseOutputLine}, {"cheap", cheapParse}} {
		b.Run("parser="+p.name, func(b *testing.B) {
			in := benchIngester(data, writeLatency)
			for b.Loop() {
				res, err := in.Ingest(context.Background(), newJob(), benchFiles, p.parse, nil)
				if err != nil || res.Succeeded+res.Failed != benchSpec.Records {
					b.Fatalf("%+v, %v", res.Checkpoint, err)
				}
			}
			wall := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(wall.Milliseconds()), "wall-ms")
			b.ReportMetric(float64(ideal.Milliseconds()), "ideal-ms")
			b.ReportMetric(float64(wall)/float64(ideal), "x-ideal")
			b.ReportMetric(float64(wall.Microseconds())/float64(benchSpec.Records), "µs/record")
		})
	}
}

// BenchmarkNaive (c): what the pipeline replaces: read the whole object into
// memory, then write one record at a time, each write taking 10 ms. 500
// records keep it short; compare µs/record with BenchmarkConcurrentWrites.
func BenchmarkNaive(b *testing.B) {
	const records = 500
	data := output(b)
	cut := 0
	for range records {
		cut += bytes.IndexByte(data[cut:], '\n') + 1
	}
	src := memBlobs{data[:cut]}
	w := sleepWriter{writeLatency}
	b.ResetTimer()
	for b.Loop() {
		rc, _ := src.Open(context.Background(), "", 0)
		all, err := io.ReadAll(rc)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for line := range bytes.Lines(all) {
			rec, err := ingesttest.Parse(line)
			if err != nil {
				continue
			}
			if err := w.PutRecords(context.Background(), job.RecordSet{JobID: "job", Shards: 1}, []job.Record{rec}); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != records {
			b.Fatalf("wrote %d records", n)
		}
	}
	per := b.Elapsed() / time.Duration(b.N*records)
	b.ReportMetric(float64(per.Microseconds()), "µs/record")
}

// cheapParse only finds the recordId, so BenchmarkPipeline measures what the
// pipeline itself costs (reading, batching, dedupe, checkpoints) apart from JSON.
func cheapParse(line []byte) (job.Record, error) {
	const key = `{"recordId":"`
	if !bytes.HasPrefix(line, []byte(key)) {
		return job.Record{}, errors.New("no recordId")
	}
	end := bytes.IndexByte(line[len(key):], '"')
	if end < 0 {
		return job.Record{}, errors.New("no recordId")
	}
	return job.Record{ID: string(line[len(key) : len(key)+end]), Status: job.RecordSucceeded, Output: string(line)}, nil
}

// BenchmarkPipeline is (a) with a parser that costs next to nothing.
func BenchmarkPipeline(b *testing.B) {
	data := output(b)
	in := benchIngester(data, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := in.Ingest(context.Background(), newJob(), benchFiles, cheapParse, nil)
		if err != nil || res.Succeeded != benchSpec.Records {
			b.Fatalf("%+v, %v", res.Checkpoint, err)
		}
	}
}
