package localstore

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/storetest"
)

func open(t *testing.T, path string, now func() time.Time) *Store {
	t.Helper()
	s, err := Open(path, WithNow(now))
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		return open(t, filepath.Join(t.TempDir(), "store.db"), now)
	})
}

func TestContractMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		return open(t, ":memory:", now)
	})
}

// TestReopen checks that data survives a restart of `make dev`.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "store.db")
	clock := storetest.NewClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := Open(path, WithNow(clock.Now))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	j := &job.Job{ID: job.NewID(clock.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusQueued,
		ExpiresAt: job.ExpiresAt(clock.Now(), 7)}
	if err := s.CreateJob(t.Context(), j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = open(t, path, clock.Now)
	if _, err := s.GetJob(t.Context(), j.ID); err != nil {
		t.Fatalf("GetJob after reopen: %v", err)
	}
}

func TestPurge(t *testing.T) {
	clock := storetest.NewClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	s := open(t, ":memory:", clock.Now)
	ctx := t.Context()
	mk := func(ttl time.Duration) *job.Job {
		j := &job.Job{ID: job.NewID(clock.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusCompleted,
			ExpiresAt: clock.Now().Add(ttl)}
		if err := s.CreateJob(ctx, j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		if err := s.PutRecords(ctx, j.RecordSet(), []job.Record{{ID: "a", Status: job.RecordSucceeded, ExpiresAt: j.ExpiresAt}}); err != nil {
			t.Fatalf("PutRecords: %v", err)
		}
		return j
	}
	mk(time.Hour)
	keep := mk(48 * time.Hour)
	clock.Advance(2 * time.Hour)
	n, err := s.Purge(ctx)
	if err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if n != 2 {
		t.Fatalf("Purge deleted %d rows, want 2 (one job, one record)", n)
	}
	if _, err := s.GetJob(ctx, keep.ID); err != nil {
		t.Fatalf("GetJob(kept): %v", err)
	}
}

// TestTwoHandles runs concurrent updates through two Stores on one file, as
// two processes would: the immediate transactions and the busy timeout, not
// the in-process mutex, keep every increment.
func TestTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	clock := storetest.NewClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	a, b := open(t, path, clock.Now), open(t, path, clock.Now)
	j := &job.Job{ID: job.NewID(clock.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusInProgress}
	if err := a.CreateJob(t.Context(), j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			_, err := s.UpdateJob(t.Context(), j.ID, func(x *job.Job) error { x.Succeeded++; return nil })
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("UpdateJob: %v", err)
		}
	}
	got, err := b.GetJob(t.Context(), j.ID)
	if err != nil || got.Succeeded != 20 || got.Version != 21 {
		t.Fatalf("GetJob: %v, succeeded %d version %d; want 20 and 21", err, got.Succeeded, got.Version)
	}
}

func TestSnapshotsContract(t *testing.T) {
	storetest.RunSnapshots(t, func(t *testing.T) store.Snapshots {
		s, err := Open(":memory:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestMigrateRecordsWithoutOrdinals: a version 1 database (records without
// an ordinal column, as `make dev` kept them before ordinals) opens; its
// records read back by id, and new jobs beside them list in input order.
func TestMigrateRecordsWithoutOrdinals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	clock := storetest.NewClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	old := &job.Job{ID: job.NewID(clock.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusCompleted, Shards: 2}
	doc, _ := json.Marshal(old)
	for _, stmt := range []string{
		`CREATE TABLE jobs (id TEXT PRIMARY KEY, owner TEXT NOT NULL, provider TEXT NOT NULL, status TEXT NOT NULL,
			terminal INTEGER NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, expires_at INTEGER,
			version INTEGER NOT NULL, doc TEXT NOT NULL)`,
		`CREATE TABLE records (job_id TEXT NOT NULL, shard INTEGER NOT NULL, record_id TEXT NOT NULL, status TEXT NOT NULL,
			expires_at INTEGER, doc TEXT NOT NULL, PRIMARY KEY (job_id, shard, record_id)) WITHOUT ROWID`,
		"PRAGMA user_version = 1",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := db.Exec("INSERT INTO jobs VALUES (?, 'alice', 'bedrock', 'completed', 1, 0, 0, NULL, 1, ?)", old.ID, string(doc)); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"b", "10", "a", "9"} {
		rec, _ := json.Marshal(job.Record{JobID: old.ID, ID: id, Status: job.RecordSucceeded})
		if _, err := db.Exec("INSERT INTO records VALUES (?, ?, ?, 'succeeded', NULL, ?)", old.ID, i%2, id, string(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := open(t, path, clock.Now)
	got, err := s.GetJob(t.Context(), old.ID)
	if err != nil || got.InputOrder {
		t.Fatalf("GetJob of a version 1 job: %v, InputOrder %v", err, got.InputOrder)
	}
	list := func(rs job.RecordSet) []string {
		var ids []string
		for q := (store.RecordQuery{Limit: 3}); ; {
			recs, next, err := s.ListRecords(t.Context(), rs, q)
			if err != nil {
				t.Fatalf("ListRecords: %v", err)
			}
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			if q.Cursor = next; next == "" {
				return ids
			}
		}
	}
	if ids := list(got.RecordSet()); !slices.Equal(ids, []string{"10", "9", "a", "b"}) {
		t.Fatalf("version 1 records %v, want them by id", ids)
	}
	fresh := &job.Job{ID: job.NewID(clock.Now().Add(time.Second)), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusCompleted, Shards: 2, InputOrder: true}
	if err := s.CreateJob(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	var recs []job.Record
	for i, id := range []string{"10", "9", "b", "a"} {
		recs = append(recs, job.Record{ID: id, Ordinal: i, Status: job.RecordSucceeded})
	}
	if err := s.PutRecords(t.Context(), fresh.RecordSet(), recs); err != nil {
		t.Fatal(err)
	}
	if ids := list(fresh.RecordSet()); !slices.Equal(ids, []string{"10", "9", "b", "a"}) {
		t.Fatalf("new records %v, want input order", ids)
	}
}

// TestMigrateRekeysRecords: a version 2 database (records keyed by job,
// shard and id) opens keyed in listing order, its records whole: listed in
// input order, by status, and by key; a rewrite still overwrites.
func TestMigrateRekeysRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	clock := storetest.NewClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	j := &job.Job{ID: job.NewID(clock.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusCompleted, Shards: 2, InputOrder: true}
	doc, _ := json.Marshal(j)
	for _, stmt := range []string{
		`CREATE TABLE jobs (id TEXT PRIMARY KEY, owner TEXT NOT NULL, provider TEXT NOT NULL, status TEXT NOT NULL,
			terminal INTEGER NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, expires_at INTEGER,
			version INTEGER NOT NULL, doc TEXT NOT NULL)`,
		`CREATE TABLE records (job_id TEXT NOT NULL, shard INTEGER NOT NULL, record_id TEXT NOT NULL, status TEXT NOT NULL,
			expires_at INTEGER, doc TEXT NOT NULL, ordinal INTEGER NOT NULL DEFAULT -1, PRIMARY KEY (job_id, shard, record_id)) WITHOUT ROWID`,
		"CREATE INDEX records_order ON records (job_id, ordinal, record_id)",
		"PRAGMA user_version = 2",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := db.Exec("INSERT INTO jobs VALUES (?, 'alice', 'bedrock', 'completed', 1, 0, 0, NULL, 1, ?)", j.ID, string(doc)); err != nil {
		t.Fatal(err)
	}
	var want []job.Record
	for i, id := range []string{"z", "y", "x", "w"} {
		r := job.Record{JobID: j.ID, ID: id, Ordinal: i, Status: job.RecordSucceeded, Output: "out " + id}
		if i == 2 {
			r.Status, r.Output = job.RecordFailed, ""
		}
		want = append(want, r)
		rec, _ := json.Marshal(r)
		if _, err := db.Exec("INSERT INTO records VALUES (?, ?, ?, ?, NULL, ?, ?)", j.ID, i%2, id, string(r.Status), string(rec), i); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := open(t, path, clock.Now)
	var pk string
	if err := s.db.QueryRow("SELECT group_concat(name) FROM (SELECT name FROM pragma_table_info('records') WHERE pk > 0 ORDER BY pk)").Scan(&pk); err != nil || pk != "job_id,ordinal,record_id" {
		t.Fatalf("records key %q (%v), want job_id,ordinal,record_id", pk, err)
	}
	rs := j.RecordSet()
	got, _, err := s.ListRecords(t.Context(), rs, store.RecordQuery{})
	if err != nil || len(got) != 4 {
		t.Fatalf("ListRecords: %d, %v", len(got), err)
	}
	for i := range want {
		if d := storetest.Diff(want[i], got[i]); len(d) > 0 {
			t.Fatalf("record %s after the migration: %v", want[i].ID, d)
		}
	}
	if failed, _, err := s.ListRecords(t.Context(), rs, store.RecordQuery{Status: job.RecordFailed}); err != nil || len(failed) != 1 || failed[0].ID != "x" {
		t.Fatalf("failed records %+v, %v", failed, err)
	}
	if byKey, err := s.GetRecords(t.Context(), rs, []job.RecordKey{{ID: "y", Ordinal: 1}}); err != nil || len(byKey) != 1 || byKey[0].Output != "out y" {
		t.Fatalf("GetRecords: %+v, %v", byKey, err)
	}
	if err := s.PutRecords(t.Context(), rs, []job.Record{{ID: "x", Ordinal: 2, Status: job.RecordSucceeded, Output: "again"}}); err != nil {
		t.Fatal(err)
	}
	if all, _, err := s.ListRecords(t.Context(), rs, store.RecordQuery{}); err != nil || len(all) != 4 || all[2].Output != "again" {
		t.Fatalf("after a rewrite: %+v, %v", all, err)
	}
}
