package transfer

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// BenchmarkDupShard: one id shard of a 10,000,000-record job (1.4 GB of
// 140-byte lines, 22 units of 64 MiB) and of a 100,000,000-record one (209
// units), shardsFor's number of shards each, every id explicit and one
// duplicate: its time and the peak heap it adds, which is the shard's
// marks, not the job's ids.
func BenchmarkDupShard(b *testing.B) {
	for _, records := range []int{10_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) { benchDupShard(b, records) })
	}
}

func benchDupShard(b *testing.B, records int) {
	const lineBytes = 140
	shards := shardsFor(int64(records) * lineBytes)
	units := int((int64(records)*lineBytes + DefaultUnitBytes - 1) / DefaultUnitBytes)
	fs, err := fsblob.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s := &Service{Blobs: fs, Bucket: "s3://b"}
	j := &job.Job{ID: "j", InputURI: "s3://b/input/j"}
	ctx := context.Background()
	const salt = 7
	perShard := records / shards
	n := 0
	for k := range units {
		var raw []byte
		for line := 1; n < perShard*(k+1)/units; line++ {
			id := fmt.Sprintf("ticket-%09d", n)
			if n == perShard-1 {
				id = "ticket-000000000" // the duplicate, across units
			}
			// dupShard groups what it is given by fingerprint: which shard an
			// id would go to does not change its work.
			raw = binary.LittleEndian.AppendUint64(raw, fingerprintIn(salt, id))
			raw = binary.AppendUvarint(raw, uint64(line))
			raw = binary.AppendUvarint(raw, uint64(len(id)))
			raw = append(raw, id...)
			n++
		}
		if err := s.putBytes(ctx, fanoutURI(j, "ids", unitName(0), unitName(k)+".bin"), raw); err != nil {
			b.Fatal(err)
		}
	}
	u := Unit{JobID: "j", Kind: UnitDups, Index: 0, Units: units, Shards: shards, Salt: salt}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	b.ResetTimer()
	for range b.N {
		if err := s.dupShard(ctx, j, u, markerURI(j, UnitDups, 0)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(done)
	var res shardResult
	if err := s.getJSON(ctx, markerURI(j, UnitDups, 0), &res); err != nil || res.Count != 1 {
		b.Fatalf("shard result %+v, %v; want the one duplicate", res, err)
	}
	b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapInuse))/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(n), "ids")
}
