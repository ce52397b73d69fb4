// Package storeutil holds the rules both store adapters share (page limits,
// expiry, cursor encoding, record checks), so localstore and dynamostore
// cannot drift apart on what the store contract means.
package storeutil

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// PageLimit clamps a requested page size to 1..job.MaxPageSize, with
// job.DefaultPageSize for an unset (zero or negative) limit.
func PageLimit(n int) int {
	if n <= 0 {
		return job.DefaultPageSize
	}
	return min(n, job.MaxPageSize)
}

// ExpiresUnix is the TTL value stored for t: epoch seconds, 0 for "never".
func ExpiresUnix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// FromExpiresUnix is the inverse of ExpiresUnix.
func FromExpiresUnix(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

// Live reports whether an item with TTL exp (epoch seconds, 0 = never) is
// still visible at now. It matches DynamoDB's rule: expired once exp <= now.
func Live(exp int64, now time.Time) bool {
	return exp == 0 || exp > now.Unix()
}

// Shards clamps a shard count to at least 1.
func Shards(n int) int { return max(1, n) }

// MaxOrdinal is the largest record ordinal a store keys by (ten digits in
// DynamoDB sort keys; inputs are far smaller).
const MaxOrdinal = 9_999_999_999

// CheckRecords rejects records no adapter may store, before anything is
// written, so a batch never half-lands because of one bad record.
func CheckRecords(rs job.RecordSet, recs []job.Record) error {
	for i := range recs {
		r := &recs[i]
		if r.ID == "" {
			return fmt.Errorf("record %d: empty record id", i)
		}
		if rs.ByOrdinal && (r.Ordinal < 0 || r.Ordinal > MaxOrdinal) {
			return fmt.Errorf("record %s: ordinal %d outside 0..%d", r.ID, r.Ordinal, MaxOrdinal)
		}
		if len(r.Output) > job.MaxInlineOutputBytes {
			return fmt.Errorf("record %s: output of %d bytes (limit %d): %w",
				r.ID, len(r.Output), job.MaxInlineOutputBytes, store.ErrTooLarge)
		}
	}
	return nil
}

// Dedupe keeps the last record of each id, in first-seen order: a batch
// carrying one id twice is an idempotent overwrite, and DynamoDB rejects a
// BatchWriteItem with duplicate keys.
func Dedupe(recs []job.Record) []job.Record {
	idx := make(map[string]int, len(recs))
	out := make([]job.Record, 0, len(recs))
	for _, r := range recs {
		if i, ok := idx[r.ID]; ok {
			out[i] = r
			continue
		}
		idx[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}

// EncodeCursor makes an opaque page cursor: base64url of the JSON of v.
func EncodeCursor(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode cursor: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// DecodeCursor parses a cursor made by EncodeCursor into v; anything else is
// an error wrapping store.ErrBadCursor.
func DecodeCursor(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return fmt.Errorf("%w: not base64url", store.ErrBadCursor)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", store.ErrBadCursor, err)
	}
	return nil
}

// Mutate applies an UpdateJob mutator the way both adapters must: fn works on its
// own decoded copy, so a mutator that gives up half way cannot leak its edits into
// the job returned with store.ErrNoChange; on success the copy gets the id, the
// next version and the update time. decode is called twice, once per copy.
func Mutate(id string, now time.Time, decode func() (*job.Job, error), fn func(*job.Job) error) (cur, next *job.Job, err error) {
	if cur, err = decode(); err != nil {
		return nil, nil, err
	}
	if next, err = decode(); err != nil {
		return nil, nil, err
	}
	if err := fn(next); err != nil {
		if errors.Is(err, store.ErrNoChange) {
			return cur, nil, err
		}
		return nil, nil, err
	}
	next.ID = id
	next.Version = cur.Version + 1
	next.UpdatedAt = now.UTC()
	return cur, next, nil
}

// EncodeJob is a job as both adapters store it: one JSON document of the
// whole job.Job, so a field added to the type is stored without a change
// here (listing attributes by hand dropped four). Times are kept in UTC and
// ExpiresAt to the second, as the TTL attribute holds it.
func EncodeJob(j *job.Job) ([]byte, error) {
	c := *j
	c.ExpiresAt = FromExpiresUnix(ExpiresUnix(c.ExpiresAt))
	for _, t := range []*time.Time{&c.CreatedAt, &c.UpdatedAt, &c.SubmittedAt, &c.CompletedAt, &c.LastEventAt, &c.RecordsExpireAt} {
		if !t.IsZero() {
			*t = t.Round(0).UTC()
		}
	}
	doc, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode job %s: %w", j.ID, err)
	}
	return doc, nil
}

// DecodeJob reads what EncodeJob wrote.
func DecodeJob(doc []byte) (*job.Job, error) {
	var j job.Job
	if err := json.Unmarshal(doc, &j); err != nil {
		return nil, fmt.Errorf("decode job: %w", err)
	}
	return &j, nil
}

// EncodeRecord is a record as both adapters store it: one JSON document of
// the whole job.Record (a field added to the type is stored without a change
// here), ExpiresAt kept to the second in UTC, as the TTL attribute holds it.
func EncodeRecord(r *job.Record) ([]byte, error) {
	c := *r
	c.ExpiresAt = FromExpiresUnix(ExpiresUnix(c.ExpiresAt))
	doc, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode record %s: %w", r.ID, err)
	}
	return doc, nil
}

// AppendRecord writes r's EncodeRecord document to buf (with a trailing
// newline, which JSON ignores), without a copy of its own.
func AppendRecord(buf *bytes.Buffer, r *job.Record) error {
	c := *r
	c.ExpiresAt = FromExpiresUnix(ExpiresUnix(c.ExpiresAt))
	if err := json.NewEncoder(buf).Encode(&c); err != nil {
		return fmt.Errorf("encode record %s: %w", r.ID, err)
	}
	return nil
}

// DecodeRecords reads a JSON array of documents EncodeRecord wrote.
func DecodeRecords(doc []byte) ([]job.Record, error) {
	var recs []job.Record
	if err := json.Unmarshal(doc, &recs); err != nil {
		return nil, fmt.Errorf("decode records: %w", err)
	}
	return recs, nil
}
