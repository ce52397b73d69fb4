// Package index is the vector-index port of mcpbatch: named, owner-scoped indexes
// of embedding vectors with metadata, searched by nearest neighbour. Adapters:
// S3Vectors (Amazon S3 Vectors through the official service/s3vectors client;
// make dev points that client at the simulator in shared/sim) and PGVector
// (PostgreSQL with the pgvector extension, HNSW).
//
// The rules every adapter enforces before anything is sent come from the
// Amazon S3 Vectors limits (https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-vectors-limitations.html,
// checked 2026-11-30): dimension 1..4096, ≤ 500 vectors and ≤ 20 MiB per write,
// metadata ≤ 40 KB per vector of which ≤ 2 KB filterable, ≤ 50 metadata keys,
// top-k ≤ 100. The pgvector adapter applies the same limits so that an index can
// move between sinks without surprises.
//
// An index is fixed at creation to {dimension, metric, model}; opening it again
// with other values is refused with a MismatchError naming the field. The
// creating job's normalize setting is recorded too, so a search embeds its query
// as the records were embedded. Index names
// are scoped by owner: adapters map (owner, name) to a physical name through a
// hash, so another owner's index answers ErrNotFound. A job that finished writing
// calls Commit(jobID); Describe lists the completed jobs, so a failed job's
// vectors are not taken for a complete set.
package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Index is the product's vector-index port. Consumers may declare a narrower
// interface with only the methods they call.
type Index interface {
	// Open creates the index if absent, else checks spec against it.
	Open(ctx context.Context, ref Ref, spec Spec) (Info, error)
	Describe(ctx context.Context, ref Ref) (Info, error)
	// List returns the owner's indexes, by name.
	List(ctx context.Context, owner string) ([]Info, error)
	DeleteIndex(ctx context.Context, ref Ref) error
	// Put inserts or replaces vectors by key, in batches within the service limits.
	Put(ctx context.Context, ref Ref, vecs []Vector) error
	// Get returns the vectors with these keys that exist (data and metadata).
	Get(ctx context.Context, ref Ref, keys []string) ([]Vector, error)
	Delete(ctx context.Context, ref Ref, keys []string) error
	Query(ctx context.Context, ref Ref, q Query) ([]Match, error)
	// Commit records that jobID finished writing into the index.
	Commit(ctx context.Context, ref Ref, jobID string) error
}

// Ref names an index of an owner.
type Ref struct {
	Owner string
	Name  string
}

// Metric is the distance an index ranks by.
type Metric string

const (
	Cosine    Metric = "cosine"
	Euclidean Metric = "euclidean"
)

// Spec is what an index is created with.
type Spec struct {
	Dimension int
	Metric    Metric
	// Model is the embedding model id whose vectors the index holds.
	Model string
	// Normalize is how the creating job asked for its vectors (nil: the
	// model's default); a query is embedded the same way. Recorded at
	// creation; not compared on reopen.
	Normalize *bool
	// NonFilterable are metadata keys stored and returned but not usable in
	// filters (e.g. the source text); they do not count towards the 2 KB
	// filterable budget. At most 10. Fixed at creation; not compared on reopen.
	NonFilterable []string
}

// Vector is one entry: a key unique in the index, its data and metadata
// (JSON values: string, number, bool, or lists of those for filterable keys).
type Vector struct {
	Key      string
	Data     []float32
	Metadata map[string]any
}

// Query is a nearest-neighbour search.
type Query struct {
	Vector []float32
	// K is how many matches to return, 1..100.
	K int
	// Filter restricts matches by metadata; nil matches all. See ParseFilter.
	Filter Filter
}

// Match is one search result. Distance is the metric's distance (cosine:
// 1 − cosine similarity; euclidean: L2). Score is higher-is-better: cosine
// similarity for cosine, 1/(1+distance) for euclidean.
type Match struct {
	Key      string
	Score    float64
	Distance float64
	Metadata map[string]any
}

// Info describes an index.
type Info struct {
	Name          string
	Owner         string
	Model         string
	Dimension     int
	Metric        Metric
	Normalize     *bool // see Spec.Normalize; nil also for indexes made before it was recorded
	NonFilterable []string
	// FilterableKeys are the metadata keys ever written as filterable, sorted.
	FilterableKeys []string
	Vectors        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// CompletedJobs are the job ids that committed, oldest first (the most
	// recent MaxCompletedJobs are kept).
	CompletedJobs []string
}

// Committed reports whether jobID finished writing into the index.
func (i Info) Committed(jobID string) bool {
	for _, j := range i.CompletedJobs {
		if j == jobID {
			return true
		}
	}
	return false
}

// Limits, from the S3 Vectors documentation (see package comment).
const (
	MaxDimension         = 4096
	MaxVectorsPerPut     = 500
	MaxRequestBytes      = 20 << 20
	MaxMetadataBytes     = 40 << 10
	MaxFilterableBytes   = 2 << 10
	MaxMetadataKeys      = 50
	MaxNonFilterableKeys = 10
	MinTopK              = 1
	MaxTopK              = 100
	MaxKeyLen            = 1024
	MaxGetKeys           = 100
	MaxDeleteKeys        = 500
	MaxNameLen           = 63
	MaxCompletedJobs     = 200
)

// MaxIndexesPerOwner bounds one owner's indexes: every owner's indexes share
// one vector bucket, which holds at most 10,000 (S3 Vectors limits, see the
// package comment), so no owner can take them all.
const MaxIndexesPerOwner = 50

// quotaError refuses ref's creation when its owner already has n indexes.
func quotaError(ref Ref, n int) error {
	return invalid("index: cannot create %q: you have %d and an owner may hold at most %d vector indexes; delete_index one you no longer need, or write into an existing one",
		ref.Name, n, MaxIndexesPerOwner)
}

// ErrNotFound is returned for an index that does not exist for this owner.
var ErrNotFound = errors.New("index not found")

// ErrInvalid wraps every bad-input error (field and limit named in the text).
var ErrInvalid = errors.New("invalid input")

// MismatchError is returned by Open when the index exists with other settings.
type MismatchError struct {
	Index     string
	Field     string
	Have      string
	Requested string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("index %q has %s %s; the request asks for %s (an index's dimension, metric and model are fixed at creation)",
		e.Index, e.Field, e.Have, e.Requested)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// PhysicalName maps (owner, name) to a provider-safe index name: "mb-" and 40
// hex digits of SHA-256 — lowercase letters and digits, 43 characters, within
// the S3 Vectors rule (3–63 of a-z 0-9 - ., starting and ending alphanumeric)
// and a PostgreSQL identifier. The owner is part of the hash, so the same name
// of two owners never collides and one owner cannot address another's index.
func PhysicalName(ref Ref) string {
	sum := sha256.Sum256([]byte(ref.Owner + "\x00" + ref.Name))
	return "mb-" + hex.EncodeToString(sum[:20])
}

// CheckRef validates an index reference.
func CheckRef(ref Ref) error {
	if ref.Owner == "" {
		return invalid("owner: empty")
	}
	n := ref.Name
	if len(n) < 1 || len(n) > MaxNameLen {
		return invalid("index: name %q must be 1..%d characters", n, MaxNameLen)
	}
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return invalid("index: name %q may hold only letters, digits, '-', '_' and '.'", n)
		}
	}
	return nil
}

// CheckSpec validates a creation spec.
func CheckSpec(s Spec) error {
	if s.Dimension < 1 || s.Dimension > MaxDimension {
		return invalid("dimension: %d is outside 1..%d", s.Dimension, MaxDimension)
	}
	if s.Metric != Cosine && s.Metric != Euclidean {
		return invalid("metric: %q is not %q or %q", s.Metric, Cosine, Euclidean)
	}
	if s.Model == "" {
		return invalid("model: empty (an index records the model its vectors come from)")
	}
	if len(s.NonFilterable) > MaxNonFilterableKeys {
		return invalid("non_filterable: %d keys, limit %d", len(s.NonFilterable), MaxNonFilterableKeys)
	}
	for _, k := range s.NonFilterable {
		if k == "" || len(k) > 63 {
			return invalid("non_filterable: key %q must be 1..63 characters", k)
		}
	}
	return nil
}

// CheckMatch compares a reopening spec with the index's settings.
func CheckMatch(info Info, s Spec) error {
	switch {
	case info.Dimension != s.Dimension:
		return &MismatchError{Index: info.Name, Field: "dimension", Have: fmt.Sprint(info.Dimension), Requested: fmt.Sprint(s.Dimension)}
	case info.Metric != s.Metric:
		return &MismatchError{Index: info.Name, Field: "metric", Have: string(info.Metric), Requested: string(s.Metric)}
	case info.Model != s.Model:
		return &MismatchError{Index: info.Name, Field: "model", Have: info.Model, Requested: s.Model}
	}
	return nil
}

// CheckTopK validates k.
func CheckTopK(k int) error {
	if k < MinTopK || k > MaxTopK {
		return invalid("k: %d is outside %d..%d", k, MinTopK, MaxTopK)
	}
	return nil
}

// CheckJobID validates a commit marker.
func CheckJobID(id string) error {
	if id == "" || len(id) > 128 {
		return invalid("job_id: %q must be 1..128 characters", id)
	}
	return nil
}

// AddCompleted appends jobID (once) keeping the newest MaxCompletedJobs.
func AddCompleted(jobs []string, jobID string) []string {
	for _, j := range jobs {
		if j == jobID {
			return jobs
		}
	}
	jobs = append(jobs, jobID)
	if len(jobs) > MaxCompletedJobs {
		jobs = jobs[len(jobs)-MaxCompletedJobs:]
	}
	return jobs
}
