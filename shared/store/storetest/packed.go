package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// packedCases break a store that keeps many records to an item: records
// rewritten in another grouping, records over many items and gaps, writers
// of one item's records at once. They hold for any layout.
var packedCases = []suiteCase{
	{"PackedRegrouped", testPackedRegrouped},
	{"PackedManyPages", testPackedManyPages},
	{"PackedConcurrentWriters", testPackedConcurrentWriters},
}

// spread makes n records with ordinals first, first+step, …; every seventh failed.
func (e *env) spread(n, first, step int) []job.Record {
	exp := e.clock.Now().Add(7 * 24 * time.Hour)
	recs := make([]job.Record, n)
	for i := range recs {
		recs[i] = job.Record{ID: fmt.Sprintf("p%06d", i), Ordinal: first + i*step, Status: job.RecordSucceeded,
			Output: fmt.Sprintf("answer %d", i), InputTokens: int64(i), OutputTokens: 2, ExpiresAt: exp}
		if i%7 == 3 {
			recs[i].Status, recs[i].Output, recs[i].ErrorCode = job.RecordFailed, "", "ModelError"
		}
	}
	return recs
}

// expectRecords checks every view of rs against want (by key): the whole
// listing in input order, each status filter, and every record by key.
func (e *env) expectRecords(step string, rs job.RecordSet, want []job.Record, limit int) {
	e.t.Helper()
	want = slices.Clone(want)
	slices.SortFunc(want, func(a, b job.Record) int {
		if a.Ordinal != b.Ordinal {
			return a.Ordinal - b.Ordinal
		}
		return compareStrings(a.ID, b.ID)
	})
	for i := range want {
		want[i].JobID = rs.JobID
	}
	for _, st := range []job.RecordStatus{"", job.RecordSucceeded, job.RecordFailed} {
		var exp []job.Record
		for _, r := range want {
			if st == "" || r.Status == st {
				exp = append(exp, r)
			}
		}
		got := e.allRecords(e.t, rs, store.RecordQuery{Status: st, Limit: limit})
		if len(got) != len(exp) {
			e.t.Fatalf("%s: listing %q gave %d records, want %d", step, st, len(got), len(exp))
		}
		for i := range exp {
			if d := Diff(normRecord(exp[i]), normRecord(got[i])); len(d) > 0 {
				e.t.Fatalf("%s: listing %q record %d (%s) differs: %v", step, st, i, exp[i].ID, d)
			}
		}
	}
	for chunk := range slices.Chunk(want, store.MaxGetRecords) {
		keys := make([]job.RecordKey, len(chunk))
		for i, r := range chunk {
			keys[i] = r.Key()
		}
		got, err := e.s.GetRecords(e.ctx, rs, keys)
		if err != nil {
			e.t.Fatalf("%s: GetRecords: %v", step, err)
		}
		byKey := map[job.RecordKey]job.Record{}
		for _, r := range got {
			byKey[r.Key()] = r
		}
		for _, r := range chunk {
			g, ok := byKey[r.Key()]
			if !ok {
				e.t.Fatalf("%s: GetRecords lacks %s at %d", step, r.ID, r.Ordinal)
			}
			if d := Diff(normRecord(r), normRecord(g)); len(d) > 0 {
				e.t.Fatalf("%s: GetRecords %s differs: %v", step, r.ID, d)
			}
		}
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// testPackedRegrouped: records written in one call, then some of them
// again in other calls (another grouping, as a resumed run with other batch
// bounds makes) with changed outcomes: every view shows each record once,
// as last written; a failure rewritten as a success is listed nowhere as
// failed, and the reverse is.
func testPackedRegrouped(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusIngesting, e.clock.Now()))
	j.Shards = 3
	rs := j.RecordSet()
	recs := e.spread(300, 0, 1)
	if err := e.s.PutRecords(e.ctx, rs, recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	e.expectRecords("first write", rs, recs, 70)
	var again []job.Record
	for i := 0; i < 120; i += 2 {
		r := recs[i]
		if r.Status == job.RecordFailed {
			r.Status, r.ErrorCode, r.Output = job.RecordSucceeded, "", "second try"
		} else {
			r.Status, r.ErrorCode, r.Output = job.RecordFailed, "Throttled", ""
		}
		recs[i] = r
		again = append(again, r)
	}
	for _, part := range [][]job.Record{again[:17], again[17:]} {
		if err := e.s.PutRecords(e.ctx, rs, part); err != nil {
			e.t.Fatalf("PutRecords again: %v", err)
		}
	}
	e.expectRecords("regrouped rewrite", rs, recs, 70)
	// The same calls replayed (a duplicate event) change nothing.
	for _, part := range [][]job.Record{again[:17], again[17:]} {
		if err := e.s.PutRecords(e.ctx, rs, part); err != nil {
			e.t.Fatalf("PutRecords replay: %v", err)
		}
	}
	e.expectRecords("replay", rs, recs, 500)
}

// testPackedManyPages: a few thousand records with gaps in their ordinals
// (a retry keeps its parent's), one far away, written 25 at a time in a
// shuffled order as an ingest's batches land, then all again (a re-ingest):
// every view is whole, in input order, each record once.
func testPackedManyPages(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusIngesting, e.clock.Now()))
	j.Shards = 4
	rs := j.RecordSet()
	recs := append(e.spread(2500, 5, 3), job.Record{ID: "far", Ordinal: 7_000_000, Status: job.RecordFailed, ErrorCode: "x"})
	order := slices.Clone(recs)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	for range 2 {
		for batch := range slices.Chunk(order, 25) {
			if err := e.s.PutRecords(e.ctx, rs, batch); err != nil {
				e.t.Fatalf("PutRecords: %v", err)
			}
		}
	}
	e.expectRecords("shuffled batches", rs, recs, 500)
	// A cursor in the middle resumes right after its record.
	first, next, err := e.s.ListRecords(e.ctx, rs, store.RecordQuery{Limit: 377})
	if err != nil || len(first) != 377 || next == "" {
		e.t.Fatalf("ListRecords: %d records, next %q, %v", len(first), next, err)
	}
	rest, _, err := e.s.ListRecords(e.ctx, rs, store.RecordQuery{Limit: 1, Cursor: next})
	if err != nil || len(rest) != 1 || rest[0].Ordinal != first[376].Ordinal+3 {
		e.t.Fatalf("after ordinal %d: %+v, %v", first[376].Ordinal, rest, err)
	}
	// Another job's records stay apart.
	other := e.create(e.newJob("bob", job.ProviderBedrock, job.StatusIngesting, e.clock.Now()))
	if got := e.allRecords(e.t, other.RecordSet(), store.RecordQuery{}); len(got) != 0 {
		e.t.Fatalf("another job lists %d records", len(got))
	}
}

// testPackedConcurrentWriters: writers of interleaved ordinals (the same
// items' ranges) at once lose nothing.
func testPackedConcurrentWriters(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusIngesting, e.clock.Now()))
	j.Shards = 2
	rs := j.RecordSet()
	recs := e.spread(400, 0, 1)
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			var mine []job.Record
			for i := w; i < len(recs); i += writers {
				mine = append(mine, recs[i])
			}
			for batch := range slices.Chunk(mine, 10) {
				if err := e.s.PutRecords(e.ctx, rs, batch); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			e.t.Fatalf("PutRecords: %v", err)
		}
	}
	e.expectRecords("concurrent writers", rs, recs, 500)
}
