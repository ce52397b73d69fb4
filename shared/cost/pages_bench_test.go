package cost

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

// embeddingOutput is a Titan Text Embeddings V2 answer of 1024 floats:
// sparse like the simulator's (about 80 words hashed to dimensions, the
// rest 0), or dense like a real model's (every dimension a float32, written
// with float32's shortest digits or, as float64 printers do, with float64's).
func embeddingOutput(rng *rand.Rand, kind string) string {
	v := make([]float64, 1024)
	switch kind {
	case "sparse":
		for range 80 {
			v[rng.IntN(len(v))] += float64(1 - 2*rng.IntN(2))
		}
	default:
		for i := range v {
			v[i] = rng.NormFloat64()
		}
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	var b strings.Builder
	b.WriteString(`{"embedding":[`)
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		x /= math.Sqrt(n)
		switch kind {
		case "dense32":
			b.WriteString(strconv.FormatFloat(float64(float32(x)), 'g', -1, 32))
		case "dense64":
			b.WriteString(strconv.FormatFloat(float64(float32(x)), 'g', -1, 64))
		default:
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	}
	b.WriteString(`],"inputTextTokenCount":505}`)
	return b.String()
}

// BenchmarkEmbeddingPages prices the record writes of 8,192 embedding
// results (one simulator shuffle window) as the packed layout stores them,
// inline or with object storage, in calls as the ingester makes them: up to
// 2 MB of outputs a call (ingest's maxPackedBatchBytes), the outputs in
// input order or shuffled as providers answer. It reports write units and
// PUTs a record and the dollars of a million records' writes.
func BenchmarkEmbeddingPages(b *testing.B) {
	const n = 8192
	for _, kind := range []string{"sparse", "dense32", "dense64"} {
		rng := rand.New(rand.NewPCG(1, 2))
		recs := make([]job.Record, n)
		exp := time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)
		for i := range recs {
			recs[i] = job.Record{JobID: "01m8y603e9gfay4d1m5nprq9s4", ID: fmt.Sprintf("e%07d", i), Ordinal: i, Status: job.RecordSucceeded,
				Output: embeddingOutput(rng, kind), InputTokens: 505, ExpiresAt: exp, Path: job.PathBatch}
		}
		for _, order := range []string{"ordered", "shuffled"} {
			in := append([]job.Record(nil), recs...)
			if order == "shuffled" {
				rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
			}
			var calls [][]job.Record
			for start, bytes := 0, 0; start < len(in); {
				end := start
				for bytes = 0; end < len(in) && bytes+len(in[end].Output) <= 2<<20; end++ {
					bytes += len(in[end].Output)
				}
				calls = append(calls, in[start:end])
				start = end
			}
			for _, objects := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/inline", kind, order)
				if objects {
					name = fmt.Sprintf("%s/%s/objects", kind, order)
				}
				b.Run(name, func(b *testing.B) {
					rs := job.RecordSet{JobID: recs[0].JobID, Shards: 20, ByOrdinal: true, Packed: true}
					var m Meter
					for b.Loop() {
						m = Meter{}
						for _, c := range calls {
							items, err := dynamostore.PageItems(rs, c, objects)
							if err != nil {
								b.Fatal(err)
							}
							var object int64
							for _, it := range items {
								m.Write("record", it.Size, 0)
								object += int64(it.Object)
							}
							if object > 0 {
								m.RecordPut(1, object)
							}
						}
					}
					u := m.Usage()
					b.ReportMetric(u.DynamoWRU/n, "WRU/record")
					b.ReportMetric(float64(u.S3Puts)/n, "PUT/record")
					b.ReportMetric(Total(u.Scale(1e6/n).Bill(USEast1)), "usd/Mrecords")
					b.ReportMetric(float64(len(calls)), "calls")
				})
			}
		}
	}
}
