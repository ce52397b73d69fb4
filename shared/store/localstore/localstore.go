// Package localstore is the store.Store adapter over embedded SQLite
// (modernc.org/sqlite, pure Go) for `make dev` and tests: the same contract as
// dynamostore, no AWS account needed.
package localstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

var _ store.Store = (*Store)(nil)

// schemaVersion is kept in PRAGMA user_version so a later release can
// migrate. 2: records.ordinal; 3: records keyed in listing order (see migrate).
const schemaVersion = 3

// schemaRecords is the records table (kept apart: migrate rebuilds it).
const schemaRecords = `
CREATE TABLE IF NOT EXISTS records (
	job_id     TEXT NOT NULL,
	shard      INTEGER NOT NULL,
	record_id  TEXT NOT NULL,
	status     TEXT NOT NULL,
	expires_at INTEGER,
	doc        TEXT NOT NULL,
	-- input ordinal (job.RecordSet.ByOrdinal); -1 in jobs keyed by id
	ordinal    INTEGER NOT NULL DEFAULT -1,
	-- the record key (DynamoDB's ORD#<ordinal>#<id> and REC#<id> sort keys)
	-- in listing order, so a page is one range of the table
	PRIMARY KEY (job_id, ordinal, record_id)
) WITHOUT ROWID;`

// The job and record documents are JSON; the columns beside them exist only to
// key, filter and order, mirroring the DynamoDB keys and indexes.
const schema = `
CREATE TABLE IF NOT EXISTS jobs (
	id         TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	provider   TEXT NOT NULL,
	status     TEXT NOT NULL,
	terminal   INTEGER NOT NULL,
	created_at INTEGER NOT NULL, -- unix nanoseconds
	updated_at INTEGER NOT NULL, -- unix nanoseconds
	expires_at INTEGER,          -- unix seconds, NULL = never
	version    INTEGER NOT NULL,
	doc        TEXT NOT NULL
);
-- owner listing, newest first (GSI1)
CREATE INDEX IF NOT EXISTS jobs_owner ON jobs (owner, created_at DESC, id DESC);
-- in-flight listing, oldest first; partial, so terminal jobs leave it (sparse GSI2)
CREATE INDEX IF NOT EXISTS jobs_inflight ON jobs (provider, updated_at, id) WHERE terminal = 0;
` + schemaRecords + `
-- which job part holds a provider Ref (REF# items in DynamoDB)
CREATE TABLE IF NOT EXISTS refs (
	provider   TEXT NOT NULL,
	ref        TEXT NOT NULL,
	job_id     TEXT NOT NULL,
	part       INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (provider, ref)
) WITHOUT ROWID;
-- single-holder slots (SLOT# items in DynamoDB); holder '' is free
CREATE TABLE IF NOT EXISTS slots (
	key    TEXT PRIMARY KEY,
	holder TEXT NOT NULL
) WITHOUT ROWID;
-- documents replaced whole (FACTS# items in DynamoDB), see snapshot.go
CREATE TABLE IF NOT EXISTS snapshots (
	key        TEXT PRIMARY KEY,
	version    INTEGER NOT NULL,
	updated_at INTEGER NOT NULL, -- unix nanoseconds
	data       BLOB NOT NULL
) WITHOUT ROWID;
`

// Option configures a Store.
type Option func(*Store)

// WithNow sets the clock used for expiry filtering and UpdatedAt stamps (tests).
func WithNow(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithBusyTimeout sets how long a write waits for another process holding the
// database lock (default 10s).
func WithBusyTimeout(d time.Duration) Option { return func(s *Store) { s.busyTimeout = d } }

// Store is the SQLite adapter. It is safe for concurrent use.
type Store struct {
	db          *sql.DB
	now         func() time.Time
	busyTimeout time.Duration
	// writeMu serialises this process's write transactions, so goroutines
	// queue in Go instead of spinning in SQLite's busy handler; the busy
	// timeout still covers other processes sharing the file.
	writeMu sync.Mutex
	// tmpDir is removed on Close when the store was opened as ":memory:".
	tmpDir string
}

// Open opens (creating if needed) the database at path. The path ":memory:"
// (or "") gives a private database in a temporary file, removed on Close: a
// real file, so WAL and concurrent connections behave as in `make dev`.
func Open(path string, opts ...Option) (*Store, error) {
	s := &Store{now: time.Now, busyTimeout: 10 * time.Second}
	for _, o := range opts {
		o(s)
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file::memory:") {
		dir, err := os.MkdirTemp("", "mcpbatch-localstore-")
		if err != nil {
			return nil, fmt.Errorf("localstore: temp dir: %w", err)
		}
		s.tmpDir = dir
		path = filepath.Join(dir, "store.db")
	} else if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("localstore: create %s: %w", dir, err)
		}
	}
	// _txlock=immediate: a read-modify-write transaction takes the write lock
	// up front, so it never fails with SQLITE_BUSY when upgrading its snapshot.
	dsn := fmt.Sprintf("%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate",
		path, s.busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		s.cleanup()
		return nil, fmt.Errorf("localstore: open %s: %w", path, err)
	}
	s.db = db
	if err := s.migrate(context.Background()); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("localstore: read schema version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("localstore: database schema %d is newer than this build (%d)", v, schemaVersion)
	}
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("localstore: create schema: %w", err)
	}
	// Version 1 databases lack records.ordinal: their records read as
	// ordinal -1, listed by id as before.
	var has int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info('records') WHERE name = 'ordinal'").Scan(&has); err != nil {
		return fmt.Errorf("localstore: read records columns: %w", err)
	}
	if has == 0 {
		if _, err := s.db.ExecContext(ctx, "ALTER TABLE records ADD COLUMN ordinal INTEGER NOT NULL DEFAULT -1"); err != nil {
			return fmt.Errorf("localstore: add records.ordinal: %w", err)
		}
	}
	// Version 2 databases key records by (job, shard, id), listed through an
	// index: a page of 500 then looked up each of its rows in the table
	// (15 ms p50 at 1,000,000 results, BenchmarkResultsPage500). Rebuild
	// the table keyed in listing order.
	var shardKey int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info('records') WHERE name = 'shard' AND pk > 0").Scan(&shardKey); err != nil {
		return fmt.Errorf("localstore: read records key: %w", err)
	}
	if shardKey > 0 {
		if err := s.rekeyRecords(ctx); err != nil {
			return err
		}
	}
	// A status filter in listing order, so a page of failed records reads
	// those alone (without it a failed-only page read every record before
	// it: 616 ms p50 at 1,000,000 results, BenchmarkFailedPage500).
	if _, err := s.db.ExecContext(ctx, "CREATE INDEX IF NOT EXISTS records_status ON records (job_id, status, ordinal, record_id)"); err != nil {
		return fmt.Errorf("localstore: create records_status: %w", err)
	}
	// Failed records (a few in a hundred) whole in listing order: a page of
	// them is one range of this index, not a lookup in the table per record
	// (the failed-records companions of DynamoDB's pages).
	if _, err := s.db.ExecContext(ctx, "CREATE INDEX IF NOT EXISTS records_failed ON records (job_id, ordinal, record_id, expires_at, doc) WHERE "+failedClause); err != nil {
		return fmt.Errorf("localstore: create records_failed: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("localstore: set schema version: %w", err)
	}
	return nil
}

// rekeyRecords moves the records to a table keyed in listing order, in one
// transaction.
func (s *Store) rekeyRecords(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("localstore: rekey records: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, stmt := range []string{
		"DROP INDEX IF EXISTS records_order",
		"DROP INDEX IF EXISTS records_status",
		"ALTER TABLE records RENAME TO records_v2",
		schemaRecords,
		"INSERT OR REPLACE INTO records (job_id, shard, record_id, status, expires_at, doc, ordinal) SELECT job_id, shard, record_id, status, expires_at, doc, ordinal FROM records_v2",
		"DROP TABLE records_v2",
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("localstore: rekey records: %s: %w", strings.Fields(stmt)[0], err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("localstore: rekey records: commit: %w", err)
	}
	return nil
}

// Close closes the database (and removes it when it was a ":memory:" store).
func (s *Store) Close() error {
	var err error
	if s.db != nil {
		err = s.db.Close()
	}
	s.cleanup()
	return err
}

func (s *Store) cleanup() {
	if s.tmpDir != "" {
		_ = os.RemoveAll(s.tmpDir)
		s.tmpDir = ""
	}
}

// Purge deletes expired jobs and records, as DynamoDB's TTL sweeper does, so a
// long-lived local database does not grow without bound. Reads already hide
// expired items; this only reclaims space.
func (s *Store) Purge(ctx context.Context) (int64, error) {
	now := s.now().Unix()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var n int64
	for _, q := range []string{
		"DELETE FROM records WHERE expires_at IS NOT NULL AND expires_at <= ?",
		"DELETE FROM jobs WHERE expires_at IS NOT NULL AND expires_at <= ?",
		"DELETE FROM refs WHERE expires_at <= ?",
	} {
		res, err := s.db.ExecContext(ctx, q, now)
		if err != nil {
			return n, fmt.Errorf("localstore: purge: %w", err)
		}
		c, _ := res.RowsAffected()
		n += c
	}
	return n, nil
}

// failedClause selects failed records, as records_failed holds them.
const failedClause = "status = '" + string(job.RecordFailed) + "'"

// liveClause filters out expired rows; its one argument is now in epoch seconds.
const liveClause = "(expires_at IS NULL OR expires_at > ?)"

// CreateJob implements store.Store.
func (s *Store) CreateJob(ctx context.Context, j *job.Job) error {
	now := s.now()
	if j.CreatedAt.IsZero() {
		j.CreatedAt = now
	}
	if j.UpdatedAt.IsZero() {
		j.UpdatedAt = j.CreatedAt
	}
	j.Version = 1
	doc, cols, err := encodeJob(j)
	if err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// An expired job that TTL has not swept yet does not hold its id, as in DynamoDB.
	res, err := s.db.ExecContext(ctx, `
INSERT INTO jobs (id, owner, provider, status, terminal, created_at, updated_at, expires_at, version, doc)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	owner = excluded.owner, provider = excluded.provider, status = excluded.status,
	terminal = excluded.terminal, created_at = excluded.created_at, updated_at = excluded.updated_at,
	expires_at = excluded.expires_at, version = excluded.version, doc = excluded.doc
WHERE jobs.expires_at IS NOT NULL AND jobs.expires_at <= ?`,
		j.ID, cols.owner, cols.provider, cols.status, cols.terminal, cols.created, cols.updated, cols.expires, j.Version, doc,
		now.Unix())
	if err != nil {
		return fmt.Errorf("localstore: create job %s: %w", j.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("create job %s: %w", j.ID, store.ErrExists)
	}
	return putRefs(ctx, s.db, j, now)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// putRefs records the owner of every part Ref of j; an entry already there
// (the first holder) is kept.
func putRefs(ctx context.Context, db execer, j *job.Job, now time.Time) error {
	for _, p := range j.Parts {
		if p.Ref == "" {
			continue
		}
		_, err := db.ExecContext(ctx, `
INSERT INTO refs (provider, ref, job_id, part, expires_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (provider, ref) DO UPDATE SET job_id = excluded.job_id, part = excluded.part, expires_at = excluded.expires_at
WHERE refs.expires_at <= ?`,
			j.Provider, p.Ref, j.ID, p.Index, now.Add(store.RefTTL).Unix(), now.Unix())
		if err != nil {
			return fmt.Errorf("localstore: record ref %s of job %s: %w", p.Ref, j.ID, err)
		}
	}
	return nil
}

// RefOwner implements store.Store.
func (s *Store) RefOwner(ctx context.Context, provider, ref string) (string, int, error) {
	var id string
	var part int
	err := s.db.QueryRowContext(ctx, "SELECT job_id, part FROM refs WHERE provider = ? AND ref = ? AND expires_at > ?",
		provider, ref, s.now().Unix()).Scan(&id, &part)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, fmt.Errorf("ref %s of %s: %w", ref, provider, store.ErrNotFound)
	}
	if err != nil {
		return "", 0, fmt.Errorf("localstore: ref %s of %s: %w", ref, provider, err)
	}
	return id, part, nil
}

// GetJob implements store.Store.
func (s *Store) GetJob(ctx context.Context, id string) (*job.Job, error) {
	var doc string
	err := s.db.QueryRowContext(ctx, "SELECT doc FROM jobs WHERE id = ? AND "+liveClause, id, s.now().Unix()).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("localstore: get job %s: %w", id, err)
	}
	return decodeJob(doc)
}

// UpdateJob implements store.Store. The read, fn and write run in one
// immediate transaction, so concurrent updates serialise instead of racing.
func (s *Store) UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("localstore: update job %s: begin: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()

	now := s.now()
	var doc string
	err = tx.QueryRowContext(ctx, "SELECT doc FROM jobs WHERE id = ? AND "+liveClause, id, now.Unix()).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("localstore: update job %s: read: %w", id, err)
	}
	cur, work, err := storeutil.Mutate(id, now, func() (*job.Job, error) { return decodeJob(doc) }, fn)
	if err != nil {
		return cur, err
	}
	newDoc, cols, err := encodeJob(work)
	if err != nil {
		return nil, err
	}
	res, err := tx.ExecContext(ctx, `
UPDATE jobs SET owner = ?, provider = ?, status = ?, terminal = ?, created_at = ?, updated_at = ?,
	expires_at = ?, version = ?, doc = ?
WHERE id = ? AND version = ?`,
		cols.owner, cols.provider, cols.status, cols.terminal, cols.created, cols.updated, cols.expires, work.Version, newDoc,
		id, cur.Version)
	if err != nil {
		return nil, fmt.Errorf("localstore: update job %s: write: %w", id, err)
	}
	// Another process changed the row despite the lock (should not happen
	// with an immediate transaction): report it rather than lose its write.
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, fmt.Errorf("update job %s: %w", id, store.ErrConflict)
	}
	if err := putRefs(ctx, tx, work, now); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("localstore: update job %s: commit: %w", id, err)
	}
	// Return what was stored (normalised times), exactly as GetJob would.
	return decodeJob(newDoc)
}

// jobCursor is the keyset position after the last job of a page.
type jobCursor struct {
	Owner   string `json:"o"`
	Created int64  `json:"c"`
	ID      string `json:"id"`
}

// ListJobs implements store.Store.
func (s *Store) ListJobs(ctx context.Context, owner string, q store.JobQuery) ([]*job.Job, string, error) {
	limit := storeutil.PageLimit(q.Limit)
	where := []string{"owner = ?", liveClause}
	args := []any{owner, s.now().Unix()}
	if q.Status != "" {
		where = append(where, "status = ?")
		args = append(args, string(q.Status))
	}
	if q.Cursor != "" {
		var c jobCursor
		if err := storeutil.DecodeCursor(q.Cursor, &c); err != nil {
			return nil, "", err
		}
		if c.Owner != owner || c.ID == "" {
			return nil, "", fmt.Errorf("%w: not a cursor of this listing", store.ErrBadCursor)
		}
		where = append(where, "(created_at, id) < (?, ?)")
		args = append(args, c.Created, c.ID)
	}
	// One extra row tells whether another page exists, so the last page has no cursor.
	args = append(args, limit+1)
	rows, err := s.db.QueryContext(ctx, "SELECT doc, created_at FROM jobs WHERE "+strings.Join(where, " AND ")+
		" ORDER BY created_at DESC, id DESC LIMIT ?", args...)
	if err != nil {
		return nil, "", fmt.Errorf("localstore: list jobs of %s: %w", owner, err)
	}
	defer rows.Close()
	var (
		jobs    []*job.Job
		created []int64
	)
	for rows.Next() {
		var (
			doc string
			c   int64
		)
		if err := rows.Scan(&doc, &c); err != nil {
			return nil, "", fmt.Errorf("localstore: list jobs of %s: %w", owner, err)
		}
		j, err := decodeJob(doc)
		if err != nil {
			return nil, "", err
		}
		jobs = append(jobs, j)
		created = append(created, c)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("localstore: list jobs of %s: %w", owner, err)
	}
	if len(jobs) <= limit {
		return jobs, "", nil
	}
	jobs = jobs[:limit]
	next, err := storeutil.EncodeCursor(jobCursor{Owner: owner, Created: created[limit-1], ID: jobs[limit-1].ID})
	return jobs, next, err
}

// ListInFlight implements store.Store.
func (s *Store) ListInFlight(ctx context.Context, provider string, updatedBefore time.Time, limit int) ([]*job.Job, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT doc FROM jobs
WHERE provider = ? AND terminal = 0 AND updated_at < ? AND `+liveClause+`
ORDER BY updated_at, id LIMIT ?`,
		provider, updatedBefore.UnixNano(), s.now().Unix(), storeutil.PageLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("localstore: list in-flight %s jobs: %w", provider, err)
	}
	defer rows.Close()
	var jobs []*job.Job
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("localstore: list in-flight %s jobs: %w", provider, err)
		}
		j, err := decodeJob(doc)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("localstore: list in-flight %s jobs: %w", provider, err)
	}
	return jobs, nil
}

// PutRecords implements store.Store: one transaction, upserting by key.
func (s *Store) PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	jobID := rs.JobID
	if err := storeutil.CheckRecords(rs, recs); err != nil {
		return fmt.Errorf("put records of job %s: %w", jobID, err)
	}
	if len(recs) == 0 {
		return nil
	}
	rs.Shards = storeutil.Shards(rs.Shards)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("localstore: put records of job %s: begin: %w", jobID, err)
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, `
INSERT INTO records (job_id, shard, record_id, ordinal, status, expires_at, doc) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (job_id, ordinal, record_id) DO UPDATE SET
	ordinal = excluded.ordinal, status = excluded.status, expires_at = excluded.expires_at, doc = excluded.doc`)
	if err != nil {
		return fmt.Errorf("localstore: put records of job %s: prepare: %w", jobID, err)
	}
	defer stmt.Close()
	for _, r := range recs {
		r.JobID = jobID
		ordinal := r.Ordinal
		if !rs.ByOrdinal {
			r.Ordinal, ordinal = 0, -1
		}
		doc, err := storeutil.EncodeRecord(&r)
		if err != nil {
			return fmt.Errorf("localstore: %w", err)
		}
		if _, err := stmt.ExecContext(ctx, jobID, rs.Shard(r.Key()), r.ID, ordinal, string(r.Status),
			nullInt(storeutil.ExpiresUnix(r.ExpiresAt)), string(doc)); err != nil {
			return fmt.Errorf("localstore: put record %s of job %s: %w", r.ID, jobID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("localstore: put records of job %s: commit: %w", jobID, err)
	}
	return nil
}

// recordCursor is the keyset position after the last record of a page.
type recordCursor struct {
	JobID   string `json:"j"`
	Ordinal int    `json:"o"`
	ID      string `json:"id"`
}

// ListRecords implements store.Store: by ordinal, then record id (byte
// order, as DynamoDB sorts sort keys); records of a job keyed by id all have
// ordinal -1, so they list by id.
func (s *Store) ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	return s.listRecords(ctx, rs, q, storeutil.PageLimit(q.Limit), "doc", scanDoc)
}

// scanDoc reads a row of the doc column: the record whole.
func scanDoc(_ job.RecordSet, rows *sql.Rows) (job.Record, error) {
	var doc string
	var r job.Record
	if err := rows.Scan(&doc); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		return r, fmt.Errorf("decode record: %w", err)
	}
	return r, nil
}

// MaxOutcomesPage bounds a ListOutcomes page: outcomes are small (no output
// text), so a summary reads a job in pages ten times a results page.
const MaxOutcomesPage = 10 * job.MaxPageSize

// outcomeCols are what ListOutcomes and GetOutcomes read of a row: the key
// and status columns, and the two members of the document a summary needs,
// taken out in SQL so no document is decoded whole in Go.
const outcomeCols = "record_id, ordinal, status, doc ->> '$.errorCode', doc ->> '$.outputJson'"

// scanOutcome reads a row of outcomeCols.
func scanOutcome(rs job.RecordSet, rows *sql.Rows) (job.Record, error) {
	var code, out sql.NullString
	r := job.Record{JobID: rs.JobID}
	if err := rows.Scan(&r.ID, &r.Ordinal, &r.Status, &code, &out); err != nil {
		return r, err
	}
	// A set keyed by id stores ordinal -1 in the column and 0 in the record.
	r.Ordinal = max(r.Ordinal, 0)
	r.ErrorCode, r.OutputJSON = code.String, out.String
	return r, nil
}

// ListOutcomes implements summary.OutcomeReader: the records ListRecords lists
// (same order, filter and cursors), each with only its key, status, error
// code and output_json: in a CPU profile of a summary of 1,000,000 results
// read through ListRecords, decoding whole documents was 3.6 s of its 5.7 s
// (BenchmarkSummarize, shared/service/retry, 2026-12-03).
func (s *Store) ListOutcomes(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	limit := MaxOutcomesPage
	if q.Limit > 0 {
		limit = min(q.Limit, MaxOutcomesPage)
	}
	return s.listRecords(ctx, rs, q, limit, outcomeCols, scanOutcome)
}

// GetOutcomes implements summary.OutcomeReader: GetRecords' records, each with
// only what ListOutcomes gives of it.
func (s *Store) GetOutcomes(ctx context.Context, rs job.RecordSet, keys []job.RecordKey) ([]job.Record, error) {
	return s.getRecords(ctx, rs, keys, outcomeCols, scanOutcome)
}

// listRecords is one page of rs that q selects, limit rows, each row's cols
// read by scan.
func (s *Store) listRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery, limit int, cols string,
	scan func(job.RecordSet, *sql.Rows) (job.Record, error)) ([]job.Record, string, error) {
	jobID := rs.JobID
	where := []string{"job_id = ?", liveClause}
	args := []any{jobID, s.now().Unix()}
	from := "records"
	switch q.Status {
	case "":
	case job.RecordFailed:
		// Literal, so that the partial index applies.
		where = append(where, failedClause)
		from = "records INDEXED BY records_failed"
	default:
		where = append(where, "status = ?")
		args = append(args, string(q.Status))
		// The planner prefers the key's order and filters every row before
		// the page (54 ms p50 for a page of 2 % failures at 1,000,000).
		from = "records INDEXED BY records_status"
	}
	if q.Cursor != "" {
		var c recordCursor
		if err := storeutil.DecodeCursor(q.Cursor, &c); err != nil {
			return nil, "", err
		}
		if c.JobID != jobID || c.ID == "" || rs.ByOrdinal != (c.Ordinal >= 0) || c.Ordinal < -1 {
			return nil, "", fmt.Errorf("%w: not a cursor of this listing", store.ErrBadCursor)
		}
		where = append(where, "(ordinal, record_id) > (?, ?)")
		args = append(args, c.Ordinal, c.ID)
	}
	args = append(args, limit+1)
	rows, err := s.db.QueryContext(ctx, "SELECT "+cols+" FROM "+from+" WHERE "+strings.Join(where, " AND ")+
		" ORDER BY ordinal, record_id LIMIT ?", args...)
	if err != nil {
		return nil, "", fmt.Errorf("localstore: list records of job %s: %w", jobID, err)
	}
	defer rows.Close()
	var recs []job.Record
	for rows.Next() {
		r, err := scan(rs, rows)
		if err != nil {
			return nil, "", fmt.Errorf("localstore: list records of job %s: %w", jobID, err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("localstore: list records of job %s: %w", jobID, err)
	}
	if len(recs) <= limit {
		return recs, "", nil
	}
	recs = recs[:limit]
	last := recs[limit-1]
	ordinal := last.Ordinal // the column's value: PutRecords keeps the two equal
	if !rs.ByOrdinal {
		ordinal = -1
	}
	next, err := storeutil.EncodeCursor(recordCursor{JobID: jobID, Ordinal: ordinal, ID: last.ID})
	return recs, next, err
}

// GetRecords implements store.Store: a record id names one record of a job,
// so the ordinals of keys are not needed here.
func (s *Store) GetRecords(ctx context.Context, rs job.RecordSet, keys []job.RecordKey) ([]job.Record, error) {
	return s.getRecords(ctx, rs, keys, "doc", scanDoc)
}

// getRecords is the live records of rs with these keys, each row's cols
// read by scan.
func (s *Store) getRecords(ctx context.Context, rs job.RecordSet, keys []job.RecordKey, cols string,
	scan func(job.RecordSet, *sql.Rows) (job.Record, error)) ([]job.Record, error) {
	jobID := rs.JobID
	if len(keys) > store.MaxGetRecords {
		return nil, fmt.Errorf("localstore: get %d records of job %s: at most %d", len(keys), jobID, store.MaxGetRecords)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	// The record key rule of both stores (DynamoDB's sort keys ORD#<ordinal>#<id>
	// and REC#<id>): a ByOrdinal set names a record by (ordinal, id), a set
	// keyed by id by its id alone (stored with ordinal -1).
	// A join on the keys, so each is one lookup in records_order (a row
	// value IN (VALUES …) was a scan of the whole job).
	var args []any
	seen := map[job.RecordKey]bool{}
	for _, k := range keys {
		ordinal := -1
		if rs.ByOrdinal {
			ordinal = k.Ordinal
		}
		if k := (job.RecordKey{ID: k.ID, Ordinal: ordinal}); !seen[k] {
			seen[k] = true
			args = append(args, ordinal, k.ID)
		}
	}
	args = append(args, jobID, s.now().Unix())
	rows, err := s.db.QueryContext(ctx, "SELECT "+cols+" FROM (VALUES (?,?)"+strings.Repeat(",(?,?)", len(seen)-1)+
		") AS k JOIN records ON records.ordinal = k.column1 AND records.record_id = k.column2 WHERE job_id = ? AND "+liveClause, args...)
	if err != nil {
		return nil, fmt.Errorf("localstore: get records of job %s: %w", jobID, err)
	}
	defer rows.Close()
	var recs []job.Record
	for rows.Next() {
		r, err := scan(rs, rows)
		if err != nil {
			return nil, fmt.Errorf("localstore: get records of job %s: %w", jobID, err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("localstore: get records of job %s: %w", jobID, err)
	}
	return recs, nil
}

// jobCols are the indexed columns derived from a job.
type jobCols struct {
	owner, provider, status string
	terminal                bool
	created, updated        int64
	expires                 any
}

// encodeJob returns a job's document (storeutil.EncodeJob, shared with
// dynamostore) and its indexed columns.
func encodeJob(j *job.Job) (string, jobCols, error) {
	doc, err := storeutil.EncodeJob(j)
	if err != nil {
		return "", jobCols{}, fmt.Errorf("localstore: %w", err)
	}
	return string(doc), jobCols{
		owner:    j.Owner,
		provider: j.Provider,
		status:   string(j.Status),
		terminal: j.Status.Terminal(),
		created:  j.CreatedAt.UnixNano(),
		updated:  j.UpdatedAt.UnixNano(),
		expires:  nullInt(storeutil.ExpiresUnix(j.ExpiresAt)),
	}, nil
}

func decodeJob(doc string) (*job.Job, error) {
	j, err := storeutil.DecodeJob([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("localstore: %w", err)
	}
	return j, nil
}

// nullInt stores 0 ("never") as NULL.
func nullInt(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// Slot implements store.Store.
func (s *Store) Slot(ctx context.Context, key string) (string, error) {
	var h string
	err := s.db.QueryRowContext(ctx, "SELECT holder FROM slots WHERE key = ?", key).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("localstore: slot %s: %w", key, err)
	}
	return h, nil
}

// SwapSlot implements store.Store.
func (s *Store) SwapSlot(ctx context.Context, key, old, next string) (bool, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	res, err := s.db.ExecContext(ctx, `
INSERT INTO slots (key, holder) SELECT ?, ? WHERE ? = ''
ON CONFLICT (key) DO UPDATE SET holder = excluded.holder WHERE slots.holder = ?`, key, next, old, old)
	if err != nil {
		return false, fmt.Errorf("localstore: swap slot %s: %w", key, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	if old == "" {
		return false, nil
	}
	res, err = s.db.ExecContext(ctx, "UPDATE slots SET holder = ? WHERE key = ? AND holder = ?", next, key, old)
	if err != nil {
		return false, fmt.Errorf("localstore: swap slot %s: %w", key, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
