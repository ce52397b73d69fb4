// Package store is the persistence port for jobs and record results, with two
// adapters: localstore (embedded SQLite) and dynamostore (DynamoDB single table).
// Both pass the contract suite in storetest.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

var (
	// ErrNotFound: no such job, or it has expired (reads filter expired items).
	ErrNotFound = errors.New("not found")
	// ErrExists: CreateJob with an id already taken.
	ErrExists = errors.New("already exists")
	// ErrConflict: an optimistic-lock race that UpdateJob could not resolve in its retries.
	ErrConflict = errors.New("concurrent update conflict")
	// ErrNoChange may be returned by an UpdateJob mutator to skip the write.
	ErrNoChange = errors.New("no change")
	// ErrBadCursor: a page cursor that this store did not issue for this query
	// (malformed, or from another owner or job).
	ErrBadCursor = errors.New("bad cursor")
	// ErrUnprocessed: PutRecords gave up on records the database kept refusing
	// (DynamoDB UnprocessedItems past the retry cap). Nothing is lost: the write
	// is idempotent, so the caller leaves the job re-ingestable and tries later.
	ErrUnprocessed = errors.New("records left unprocessed")
	// ErrTooLarge: a record output longer than job.MaxInlineOutputBytes; the
	// caller stores it in object storage and sets OutputRef instead.
	ErrTooLarge = errors.New("record output too large for an item")
)

// JobQuery pages through an owner's jobs, newest first.
type JobQuery struct {
	Status job.Status // optional filter
	Cursor string     // opaque, from a previous page
	Limit  int        // 1..job.MaxPageSize; 0 means job.DefaultPageSize
}

// RecordQuery pages through a job's results.
type RecordQuery struct {
	Status job.RecordStatus // optional filter
	Cursor string
	Limit  int // as in JobQuery
}

// Store persists jobs and results. Every read hides items whose ExpiresAt has passed.
// MaxGetRecords bounds the ids of one GetRecords call (DynamoDB's
// BatchGetItem takes 100 keys).
const MaxGetRecords = 100

type Store interface {
	// CreateJob stores a new job; ErrExists when the id is taken by a live job.
	// It sets j.Version to 1 and fills a zero CreatedAt with now and a zero
	// UpdatedAt with CreatedAt. A zero ExpiresAt means the job never expires;
	// otherwise it is kept to the second (DynamoDB TTL is epoch seconds).
	CreateJob(ctx context.Context, j *job.Job) error
	// GetJob returns a job; ErrNotFound when absent or expired.
	GetJob(ctx context.Context, id string) (*job.Job, error)
	// UpdateJob reads the job, applies fn and writes it back if the version is
	// unchanged, retrying on races. fn returning ErrNoChange skips the write and
	// UpdateJob returns the current job and ErrNoChange. Version and UpdatedAt are set by the store.
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	// ListJobs lists an owner's jobs, newest first (GSI1 in DynamoDB).
	ListJobs(ctx context.Context, owner string, q JobQuery) (jobs []*job.Job, next string, err error)
	// ListInFlight lists non-terminal jobs of a provider whose UpdatedAt is before
	// the given time, oldest first (the sparse GSI2 in DynamoDB); limit as in JobQuery.
	ListInFlight(ctx context.Context, provider string, updatedBefore time.Time, limit int) ([]*job.Job, error)
	// PutRecords writes results of the record set rs (idempotent: the same
	// record key overwrites). In a ByOrdinal set every record carries its
	// ordinal. It retries partial writes with capped backoff and returns an
	// error only when records could not be written (ErrUnprocessed past the
	// retry cap, ErrTooLarge for an oversized output). A record's zero
	// ExpiresAt means it never expires.
	PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error
	// ListRecords pages through a record set: a ByOrdinal set in input order
	// (by ordinal, then id), an older set by record id (byte order). The
	// cursor is opaque and bounded by a record key's size.
	ListRecords(ctx context.Context, rs job.RecordSet, q RecordQuery) (recs []job.Record, next string, err error)
	// GetRecords returns the set's live results with these keys (at most
	// MaxGetRecords), in no particular order; absent keys are left out. A
	// ByOrdinal set names a record by (Ordinal, ID), so an id asked at
	// another ordinal is absent; a set keyed by id ignores Ordinal.
	GetRecords(ctx context.Context, rs job.RecordSet, keys []job.RecordKey) ([]job.Record, error)
	// RefOwner names the job and part a provider Ref was attached to. CreateJob
	// and UpdateJob record every part Ref they store (the first holder wins and
	// the entry outlives the job by RefTTL), so a service looking for the
	// provider job of a lost create can tell its own from other jobs'.
	// ErrNotFound when no job ever held it.
	RefOwner(ctx context.Context, provider, ref string) (jobID string, part int, err error)
	// Slot returns the holder of a named slot ("" when free).
	Slot(ctx context.Context, key string) (holder string, err error)
	// SwapSlot sets a slot's holder to next if it is old now ("" is free),
	// atomically; it reports whether it did.
	SwapSlot(ctx context.Context, key, old, next string) (bool, error)
}

// Slots are named single-holder locks (SwapSlot's compare-and-swap): the
// service holds one per provider and part size while a create whose outcome
// may be unknown is pending, so two such creates never overlap.

// RefTTL is how long a Ref's owner entry is kept: far longer than any window
// in which a lost create is looked for (creates are looked for within a
// submit lease or two of the first try).
const RefTTL = 30 * 24 * time.Hour
