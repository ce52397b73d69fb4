package index_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/index"
)

// clustered makes n vectors of dim around 64 random centres (embeddings cluster
// by topic; uniform noise would be an unrealistically hard case for HNSW).
func clustered(seed uint64, n, dim int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	centres := make([][]float32, 64)
	for i := range centres {
		c := make([]float32, dim)
		for j := range c {
			c[j] = float32(r.NormFloat64())
		}
		centres[i] = c
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.6*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func putAll(b *testing.B, ix index.Index, ref index.Ref, data [][]float32) {
	ctx := context.Background()
	const chunk = 2000
	for lo := 0; lo < len(data); lo += chunk {
		hi := min(lo+chunk, len(data))
		vecs := make([]index.Vector, 0, hi-lo)
		for i := lo; i < hi; i++ {
			vecs = append(vecs, index.Vector{Key: fmt.Sprintf("doc-%06d", i), Data: data[i], Metadata: map[string]any{"n": float64(i % 10)}})
		}
		if err := ix.Put(ctx, ref, vecs); err != nil {
			b.Fatal(err)
		}
	}
}

var s3vBench *index.S3Vectors

func percentile(d []time.Duration, p float64) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return float64(s[max(i, 0)]) / float64(time.Millisecond)
}

// BenchmarkS3VectorsQuery100k is search_index in make dev: a top-10 query over
// 100,000 × 1,024-dimension vectors through the S3 Vectors adapter, the real
// SDK client and the simulator's exact search. Each iteration runs 20 queries;
// p50/p99 are per query.
func BenchmarkS3VectorsQuery100k(b *testing.B) {
	const n, dim = 100_000, 1024
	ctx := context.Background()
	ref := index.Ref{Owner: "bench", Name: "corpus"}
	// loaded once for the runs with growing b.N (the simulator outlives them)
	if s3vBench == nil {
		c, _, err := startSim() // kept for the process's life
		if err != nil {
			b.Fatal(err)
		}
		ix := index.NewS3Vectors(c, "bench")
		ix.CreateBucket = true
		if _, err := ix.Open(ctx, ref, index.Spec{Dimension: dim, Metric: index.Cosine, Model: "amazon.titan-embed-text-v2:0"}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		putAll(b, ix, ref, clustered(1, n, dim))
		b.Logf("loaded %d vectors in %v", n, time.Since(start).Round(time.Millisecond))
		s3vBench = ix
	}
	ix := s3vBench
	queries := clustered(2, 64, dim)
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := 0; j < 20; j++ {
			q := queries[(i*20+j)%len(queries)]
			t0 := time.Now()
			res, err := ix.Query(ctx, ref, index.Query{Vector: q, K: 10})
			lat = append(lat, time.Since(t0))
			if err != nil || len(res) != 10 {
				b.Fatalf("query: %v (%d results)", err, len(res))
			}
		}
	}
	b.ReportMetric(percentile(lat, 0.5), "p50-ms")
	b.ReportMetric(percentile(lat, 0.99), "p99-ms")
}

// latent makes n vectors of dim that lie near a 32-dimensional subspace, in 64
// clusters: text embeddings have a low intrinsic dimension, which is what
// HNSW relies on. (clustered, full-rank noise in every dimension, is the
// adversarial case and is reported too.)
func latent(seed uint64, n, dim int) [][]float32 {
	const ld = 32
	r := rand.New(rand.NewPCG(seed, 11))
	w := make([][]float32, dim) // fixed projection for every seed
	wr := rand.New(rand.NewPCG(99, 99))
	for i := range w {
		w[i] = make([]float32, ld)
		for j := range w[i] {
			w[i][j] = float32(wr.NormFloat64() / math.Sqrt(ld))
		}
	}
	cr := rand.New(rand.NewPCG(98, 98))
	centres := make([][]float64, 64)
	for i := range centres {
		centres[i] = make([]float64, ld)
		for j := range centres[i] {
			centres[i][j] = cr.NormFloat64()
		}
	}
	out := make([][]float32, n)
	z := make([]float64, ld)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		for j := range z {
			z[j] = c[j] + 0.5*r.NormFloat64()
		}
		v := make([]float32, dim)
		for d := range v {
			var x float64
			for j := range z {
				x += float64(w[d][j]) * z[j]
			}
			v[d] = float32(x + 0.05*r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

// BenchmarkPGVectorRecall measures HNSW recall@10 against exact search computed
// here in Go, on PGlite + pgvector, with the query time, for several
// hnsw.ef_search values. PGlite is WebAssembly PostgreSQL on one thread, so the
// set is smaller than 100k × 1,024: 10,000 × 1,024.
func BenchmarkPGVectorRecall(b *testing.B) {
	const n, dim, k = 10_000, 1024, 10
	ctx := context.Background()
	ix := index.NewPGVector(startPGlite(b))
	sets := []struct {
		name string
		gen  func(uint64, int, int) [][]float32
	}{{"latent32", latent}, {"fullrank", clustered}}
	for _, set := range sets {
		ref := index.Ref{Owner: "bench", Name: set.name}
		if _, err := ix.Open(ctx, ref, index.Spec{Dimension: dim, Metric: index.Cosine, Model: "amazon.titan-embed-text-v2:0"}); err != nil {
			b.Fatal(err)
		}
		data := set.gen(3, n, dim)
		start := time.Now()
		putAll(b, ix, ref, data)
		b.Logf("%s: loaded %d vectors (HNSW built as inserted) in %v", set.name, n, time.Since(start).Round(time.Millisecond))
		queries := set.gen(4, 50, dim)
		truth := exactTopK(data, queries, k)
		for _, ef := range []int{40, 100, 200, 400} {
			b.Run(fmt.Sprintf("%s/ef=%d", set.name, ef), func(b *testing.B) {
				ix.EfSearch = ef
				var lat []time.Duration
				found, total := 0, 0
				for i := 0; i < b.N; i++ {
					for qi, q := range queries {
						t0 := time.Now()
						res, err := ix.Query(ctx, ref, index.Query{Vector: q, K: k})
						lat = append(lat, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
						for _, r := range res {
							if truth[qi][r.Key] {
								found++
							}
						}
						total += k
					}
				}
				b.ReportMetric(float64(found)/float64(total), "recall@10")
				b.ReportMetric(percentile(lat, 0.5), "p50-ms")
				b.ReportMetric(percentile(lat, 0.99), "p99-ms")
			})
		}
	}
}

func exactTopK(data, queries [][]float32, k int) []map[string]bool {
	truth := make([]map[string]bool, len(queries))
	type hit struct {
		d float64
		i int
	}
	hits := make([]hit, len(data))
	for qi, q := range queries {
		for i, v := range data {
			hits[i] = hit{cosDist(v, q), i}
		}
		sort.Slice(hits, func(a, c int) bool { return hits[a].d < hits[c].d })
		truth[qi] = map[string]bool{}
		for _, h := range hits[:k] {
			truth[qi][fmt.Sprintf("doc-%06d", h.i)] = true
		}
	}
	return truth
}

func cosDist(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return 1 - dot/math.Sqrt(na*nb)
}
