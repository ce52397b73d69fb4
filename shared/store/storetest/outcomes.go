package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/summary"
)

// testOutcomes: what a summary reads of the records (summary.Outcomes: the
// store's ListOutcomes and GetOutcomes, or ListRecords and GetRecords) is
// ListRecords' and GetRecords' records, the same ones (in the same order
// under every filter and page size), each with its key, status, error code
// and output_json as stored; expired records hidden.
func testOutcomes(e *env) {
	exp, soon := e.clock.Now().Add(7*24*time.Hour), e.clock.Now().Add(time.Hour)
	for _, byOrdinal := range []bool{true, false} {
		j := e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now())
		j.Shards, j.InputOrder, j.PackedRecords = 3, byOrdinal, e.packed
		e.create(j)
		recs := e.records(37)
		for i := range recs {
			recs[i].ExpiresAt = exp
			switch {
			case recs[i].Status == job.RecordFailed && i%2 == 0:
				recs[i].ErrorCode, recs[i].Output = job.RecordSchemaViolation, `{"category": 7}`
			case recs[i].Status == job.RecordSucceeded:
				recs[i].OutputJSON = fmt.Sprintf(`{"category":"c\"%d","score":%d.5,"note":"a\\nb"}`, i%3, i)
			}
			if i%11 == 3 {
				recs[i].ExpiresAt = soon
			}
		}
		if err := e.s.PutRecords(e.ctx, j.RecordSet(), recs); err != nil {
			e.t.Fatalf("PutRecords: %v", err)
		}
		e.clock.Advance(2 * time.Hour)
		list := summary.Outcomes(e.s)
		for _, status := range []job.RecordStatus{"", job.RecordFailed, job.RecordSucceeded} {
			for _, limit := range []int{1, 4, 0} {
				name := fmt.Sprintf("byOrdinal=%v/status=%q/limit=%d", byOrdinal, status, limit)
				e.t.Run(name, func(t *testing.T) {
					want := e.allRecords(t, j.RecordSet(), store.RecordQuery{Status: status, Limit: max(limit, 5)})
					var got []job.Record
					for page, err := range store.Pages(e.ctx, list, j.RecordSet(), store.RecordQuery{Status: status, Limit: limit}) {
						if err != nil {
							t.Fatal(err)
						}
						if limit > 0 && len(page) > limit {
							t.Fatalf("page of %d, limit %d", len(page), limit)
						}
						got = append(got, page...)
					}
					if len(got) != len(want) || len(want) == 0 {
						t.Fatalf("%d outcomes, want %d (ListRecords)", len(got), len(want))
					}
					for i, w := range want {
						sameOutcome(t, j.ID, got[i], w)
					}
				})
			}
		}
		e.t.Run(fmt.Sprintf("byOrdinal=%v/by key", byOrdinal), func(t *testing.T) {
			var keys []job.RecordKey
			for _, r := range recs[:20] { // some expired, some failed
				keys = append(keys, r.Key())
			}
			keys = append(keys, job.RecordKey{ID: "absent", Ordinal: 99})
			want, err := e.s.GetRecords(e.ctx, j.RecordSet(), keys)
			if err != nil {
				t.Fatal(err)
			}
			got, err := list.GetRecords(e.ctx, j.RecordSet(), keys)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(want) == 0 || len(want) == len(keys) {
				t.Fatalf("%d outcomes by key, want %d (GetRecords, %d keys asked)", len(got), len(want), len(keys))
			}
			byID := map[string]job.Record{}
			for _, g := range got {
				byID[g.ID] = g
			}
			for _, w := range want {
				sameOutcome(t, j.ID, byID[w.ID], w)
			}
		})
	}
}

// sameOutcome: got has the job, key, status, error code and output_json of want.
func sameOutcome(t *testing.T, jobID string, got, want job.Record) {
	t.Helper()
	if got.JobID != jobID || got.ID != want.ID || got.Ordinal != want.Ordinal || got.Status != want.Status || got.ErrorCode != want.ErrorCode || got.OutputJSON != want.OutputJSON {
		t.Fatalf("outcome %+v, want the key, status, error code and output_json of %+v", got, want)
	}
}
