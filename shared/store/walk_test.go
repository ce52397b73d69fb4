package store_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// pages serves n records in pages of q.Limit, failing at record fail (-1: never).
type pages struct {
	n, fail int
	calls   int
}

func (p *pages) ListRecords(_ context.Context, _ job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	p.calls++
	from, _ := strconv.Atoi(q.Cursor)
	if p.fail >= 0 && from >= p.fail {
		return nil, "", errors.New("throttled")
	}
	var recs []job.Record
	for i := from; i < min(from+q.Limit, p.n); i++ {
		recs = append(recs, job.Record{ID: strconv.Itoa(i)})
	}
	next := ""
	if from+q.Limit < p.n {
		next = strconv.Itoa(from + q.Limit)
	}
	return recs, next, nil
}

func TestRecordsWalk(t *testing.T) {
	for _, c := range []struct {
		name             string
		n, fail, limit   int
		stopAt           int // stop after this many records (-1: never)
		wantIDs, wantErr int
	}{
		{"every page", 7, -1, 3, -1, 7, 0},
		{"default page size", job.MaxPageSize + 1, -1, 0, -1, job.MaxPageSize + 1, 0},
		{"empty", 0, -1, 3, -1, 0, 0},
		{"error ends the walk", 7, 3, 3, -1, 3, 1},
		{"caller stops", 7, -1, 3, 4, 4, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &pages{n: c.n, fail: c.fail}
			ids, errs := 0, 0
			for r, err := range store.Records(t.Context(), p, job.RecordSet{}, store.RecordQuery{Limit: c.limit}) {
				if err != nil {
					errs++
					continue
				}
				if r.ID != strconv.Itoa(ids) {
					t.Fatalf("record %d is %q", ids, r.ID)
				}
				ids++
				if ids == c.stopAt {
					break
				}
			}
			if ids != c.wantIDs || errs != c.wantErr {
				t.Fatalf("walked %d records and %d errors, want %d and %d", ids, errs, c.wantIDs, c.wantErr)
			}
		})
	}
}
