package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// pieceBlobs serves objects from a map; fail[uri] makes that many opens fail.
type pieceBlobs struct {
	objs map[string]string
	fail map[string]int
}

var errPieceRead = errors.New("connection reset")

func (b *pieceBlobs) Open(_ context.Context, uri string, _ int64) (io.ReadCloser, error) {
	if b.fail[uri] > 0 {
		b.fail[uri]--
		return nil, errPieceRead
	}
	s, ok := b.objs[uri]
	if !ok {
		return nil, blob.ErrNotFound
	}
	return io.NopCloser(strings.NewReader(s)), nil
}

// A job of several parts resolves every provider id, in part order, holding
// one part's ids at a time; a failed read of a piece is an error (the ingest
// retries) and the next call reads it again.
func TestPieceIDsHoldOnePart(t *testing.T) {
	sizes := []int{4, 1, 6}
	j := &job.Job{ID: "j1", InputURI: "s3://b/in/j1"}
	blobs := &pieceBlobs{objs: map[string]string{}, fail: map[string]int{}}
	var want []string
	for p, n := range sizes {
		j.Parts = append(j.Parts, job.Part{RecordCount: n})
		var sb strings.Builder
		for k := 0; k < n; k++ {
			id := fmt.Sprintf("caller %d/%d", p, k)
			want = append(want, id)
			fmt.Fprintf(&sb, "%q\n", id)
		}
		blobs.objs[service.PieceURI(service.IDsURI(j), p)] = sb.String()
	}
	blobs.fail[service.PieceURI(service.IDsURI(j), 2)] = 1
	if pieced, err := idsInPieces(context.Background(), blobs, j); err != nil || !pieced {
		t.Fatalf("idsInPieces = %v, %v; want true", pieced, err)
	}
	ids := newPieceIDs(context.Background(), blobs, j, func(pos int) (int, bool) { return pos, true })
	most := 0
	for i := 0; i < len(want); i++ {
		k, ok, err := ids.resolve(job.ProviderRecordID(i))
		if i == 5 { // first record of part 2, whose first read fails
			if !errors.Is(err, errPieceRead) {
				t.Fatalf("record %d: err = %v, want the piece's read error", i, err)
			}
			k, ok, err = ids.resolve(job.ProviderRecordID(i))
		}
		if err != nil || !ok || k.ID != want[i] || k.Ordinal != i {
			t.Fatalf("record %d: %+v, %v, %v; want %q", i, k, ok, err, want[i])
		}
		most = max(most, len(ids.ids))
	}
	if most != 6 || ids.loads != 3 {
		t.Fatalf("held at most %d ids over %d loads; want 6 (the largest part) over 3", most, ids.loads)
	}
	if _, ok, err := ids.resolve(job.ProviderRecordID(len(want))); ok || err != nil {
		t.Fatalf("an id past the job: ok %v, err %v; want unknown", ok, err)
	}
}

// BenchmarkIDsHeld reports the heap still held by a 1,000,000-record job's id
// resolver over 10 parts after resolving every id: one list (the whole job's
// ids) against pieces (one part's).
func BenchmarkIDsHeld(b *testing.B) {
	const parts, per = 10, 100_000
	j := &job.Job{ID: "j1", InputURI: "s3://b/in/j1", RecordCount: parts * per}
	blobs := &pieceBlobs{objs: map[string]string{}, fail: map[string]int{}}
	var all strings.Builder
	for p := 0; p < parts; p++ {
		j.Parts = append(j.Parts, job.Part{RecordCount: per})
		var sb strings.Builder
		for k := 0; k < per; k++ {
			fmt.Fprintf(&sb, "%q\n", fmt.Sprintf("caller-record-%d-%06d", p, k))
		}
		blobs.objs[service.PieceURI(service.IDsURI(j), p)] = sb.String()
		all.WriteString(sb.String())
	}
	whole := all.String()
	ord := func(pos int) (int, bool) { return pos, true }
	held := func(b *testing.B, load func() func(string) (job.RecordKey, bool, error)) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		resolve := load()
		for i := 0; i < parts*per; i++ {
			if _, ok, err := resolve(job.ProviderRecordID(i)); !ok || err != nil {
				b.Fatalf("record %d: %v %v", i, ok, err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(resolve)
		b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "held-B")
	}
	b.Run("list", func(b *testing.B) {
		for n := 0; n < b.N; n++ {
			held(b, func() func(string) (job.RecordKey, bool, error) {
				ids, err := readIDs(strings.NewReader(whole), nil)
				if err != nil {
					b.Fatal(err)
				}
				return func(pid string) (job.RecordKey, bool, error) {
					i, _ := job.ProviderRecordIndex(pid)
					return job.RecordKey{ID: ids[i], Ordinal: i}, true, nil
				}
			})
		}
	})
	b.Run("pieces", func(b *testing.B) {
		for n := 0; n < b.N; n++ {
			held(b, func() func(string) (job.RecordKey, bool, error) {
				return newPieceIDs(context.Background(), blobs, j, ord).resolve
			})
		}
	})
}
