package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/claude"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// A Message Batch carries no name, metadata or idempotency key, and the list
// and get answers show only its id, status, counts and times (API reference,
// "Message Batches", read 2026-12-03). The one thing of ours a batch holds
// that can be read back is its requests' custom_ids, in its results once it
// has ended. So a create marks each custom_id with the part's mark (a hash of
// the part name, which names the deployment, the job and the part), and a
// batch is proved a part's only by a results line carrying that mark.

// markLen is the hex length of a part's mark.
const markLen = 16

// markSep joins a record's provider id and its part's mark in a custom_id.
const markSep = "_"

// PartMark is the mark a create of the part named name puts on its custom_ids.
func PartMark(name string) string {
	h := sha256.Sum256([]byte(name))
	return hex.EncodeToString(h[:markLen/2])
}

// MarkCustomID is the custom_id that carries id (a request's own) and mark.
func MarkCustomID(id, mark string) (string, error) {
	out := id + markSep + mark
	if !job.ValidRecordID(out) {
		return "", fmt.Errorf("custom_id %q with the part's mark is %q, which does not match %s", id, out, job.RecordIDPattern)
	}
	return out, nil
}

// SplitCustomID splits a marked custom_id into the request's own id and the
// mark; one without a mark comes back whole with mark "". Only a provider
// record id (job.ProviderRecordID) is ever marked, so a caller's own id that
// happens to end like a mark is left alone.
func SplitCustomID(id string) (own, mark string) {
	own, mark, ok := strings.Cut(id, markSep)
	if !ok || len(mark) != markLen || strings.Trim(mark, "0123456789abcdef") != "" {
		return id, ""
	}
	if _, isOurs := job.ProviderRecordIndex(own); !isOurs {
		return id, ""
	}
	return own, mark
}

// MarkRequestLine rewrites one request line's custom_id to carry mark.
func MarkRequestLine(line []byte, mark string) ([]byte, error) {
	var l map[string]json.RawMessage
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, fmt.Errorf("not a Message Batch request line: %w", err)
	}
	var id string
	if err := json.Unmarshal(l["custom_id"], &id); err != nil {
		return nil, fmt.Errorf("request line custom_id: %w", err)
	}
	marked, err := MarkCustomID(id, mark)
	if err != nil {
		return nil, err
	}
	l["custom_id"] = claude.String(marked)
	return claude.Marshal(l)
}

// ResultMark is the mark on a results line's custom_id ("" when none).
func ResultMark(line []byte) (string, error) {
	var l struct {
		CustomID string `json:"custom_id"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return "", fmt.Errorf("not a Message Batch result: %w", err)
	}
	_, mark := SplitCustomID(l.CustomID)
	return mark, nil
}
