package dynamostore

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// Attribute and key names of the single-table design (see the package comment). The CDK
// stack declares the same names; change them together.
const (
	attrPK      = "PK"
	attrSK      = "SK"
	attrGSI1PK  = "GSI1PK"
	attrGSI1SK  = "GSI1SK"
	attrGSI2PK  = "GSI2PK"
	attrGSI2SK  = "GSI2SK"
	attrExpires = "expiresAt"
	attrStatus  = "status"
	attrVersion = "version"

	attrParts      = "parts"
	attrCheckpoint = "checkpoint"

	// IndexOwner lists an owner's jobs, newest first.
	IndexOwner = "GSI1"
	// IndexInFlight is sparse: only non-terminal jobs carry its keys.
	IndexInFlight = "GSI2"
	// TTLAttribute is the table's TTL attribute (epoch seconds).
	TTLAttribute = attrExpires

	skJob = "META"
	// skRecPrefix keys records by id (jobs stored before ordinals),
	// skOrdPrefix by input ordinal (job.RecordSet.ByOrdinal).
	skRecPrefix = "REC#"
	skOrdPrefix = "ORD#"
)

// sortTimeLayout is fixed width (always nine fraction digits, always UTC) so
// that sort keys order by time as strings; RFC3339Nano trims zeros and would not.
const sortTimeLayout = "2006-01-02T15:04:05.000000000Z"

func sortTime(t time.Time) string { return t.UTC().Format(sortTimeLayout) }

func jobPK(id string) string { return "JOB#" + id }

func recordPK(jobID string, shard int) string { return "JOB#" + jobID + "#" + strconv.Itoa(shard) }

// recordSK is a record's sort key: REC#<id>, or ORD#<ordinal>#<id> with the
// ordinal zero-padded to ten digits, so keys sort in input order (the id
// keeps two records apart even if a writer ever gave both one ordinal).
func recordSK(rs job.RecordSet, k job.RecordKey) string {
	if !rs.ByOrdinal {
		return skRecPrefix + k.ID
	}
	var d [20]byte
	digits := strconv.AppendInt(d[:0], int64(k.Ordinal), 10)
	var b strings.Builder // one allocation: ingest keys every record
	b.Grow(len(skOrdPrefix) + 11 + len(k.ID))
	b.WriteString(skOrdPrefix)
	for range 10 - len(digits) {
		b.WriteByte('0')
	}
	b.Write(digits)
	b.WriteByte('#')
	b.WriteString(k.ID)
	return b.String()
}

// recordPrefix is the sort key prefix of every record of rs.
func recordPrefix(rs job.RecordSet) string {
	if rs.ByOrdinal {
		return skOrdPrefix
	}
	return skRecPrefix
}

// prefixEnd is the least key past every key that starts with prefix (its
// last byte, '#', plus one).
func prefixEnd(prefix string) string { return prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1) }

func ownerPK(owner string) string { return "OWNER#" + owner }

func inFlightPK(provider string) string { return "INFLIGHT#" + provider }

// A job item is its keys, the attributes that key conditions, filters and
// TTL read (status, version, expiresAt), and the whole job.Job as one JSON
// document (storeutil.EncodeJob, the document localstore keeps): attributes
// listed by hand dropped every field nobody listed (Deadline, Redrive, Index…).
// The document is stored gzip-compressed (jobGz) when that is smaller, since
// write units are billed per KB and an item may not pass 400 KB. Items of the
// earlier layout, one attribute per field, still read (legacy.go).
const (
	attrJobDoc   = "job"
	attrJobDocGz = "jobGz"
)

func encodeJob(j *job.Job) (map[string]types.AttributeValue, error) {
	doc, err := storeutil.EncodeJob(j)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: %w", err)
	}
	m := map[string]types.AttributeValue{
		attrPK:      str(jobPK(j.ID)),
		attrSK:      str(skJob),
		attrGSI1PK:  str(ownerPK(j.Owner)),
		attrGSI1SK:  str(sortTime(j.CreatedAt) + "#" + j.ID),
		attrStatus:  str(string(j.Status)),
		attrVersion: &types.AttributeValueMemberN{Value: strconv.FormatInt(j.Version, 10)},
	}
	if exp := storeutil.ExpiresUnix(j.ExpiresAt); exp != 0 {
		m[attrExpires] = &types.AttributeValueMemberN{Value: strconv.FormatInt(exp, 10)}
	}
	// Sparse: a terminal job leaves GSI2.
	if !j.Status.Terminal() {
		m[attrGSI2PK] = str(inFlightPK(j.Provider))
		m[attrGSI2SK] = str(sortTime(j.UpdatedAt) + "#" + j.ID)
	}
	m[attrJobDoc] = str(string(doc))
	if len(doc) > compressMin {
		gz, err := gzipString(string(doc))
		if err != nil {
			return nil, fmt.Errorf("dynamostore: compress job %s: %w", j.ID, err)
		}
		if len(gz) < len(doc) {
			delete(m, attrJobDoc)
			m[attrJobDocGz] = &types.AttributeValueMemberB{Value: gz}
		}
	}
	return m, nil
}

func decodeJob(m map[string]types.AttributeValue) (*job.Job, error) {
	var doc string
	switch v := m[attrJobDocGz].(type) {
	case *types.AttributeValueMemberB:
		s, err := gunzipLimit(v.Value, maxJobDoc)
		if err != nil {
			return nil, fmt.Errorf("dynamostore: decompress job item %v: %w", m[attrPK], err)
		}
		doc = s
	default:
		s, ok := m[attrJobDoc].(*types.AttributeValueMemberS)
		if !ok {
			return decodeLegacyJob(m)
		}
		doc = s.Value
	}
	j, err := storeutil.DecodeJob([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("dynamostore: job item %v: %w", m[attrPK], err)
	}
	return j, nil
}

// maxJobDoc bounds a job document's inflation: a job is made from one
// request of at most 6 MB (a Function URL's payload), and its document is
// never many times that.
const maxJobDoc = 64 * 400 * 1024

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// recordItem is one result. A long output is stored gzip-compressed in
// OutputGz (Binary) when that is smaller: write units are billed per KB.
type recordItem struct {
	PK           string `dynamodbav:"PK"`
	SK           string `dynamodbav:"SK"`
	ExpiresAt    int64  `dynamodbav:"expiresAt,omitempty"`
	JobID        string `dynamodbav:"jobId"`
	ID           string `dynamodbav:"recordId"`
	Ordinal      *int   `dynamodbav:"ordinal,omitempty"`
	Status       string `dynamodbav:"status"`
	Output       string `dynamodbav:"output,omitempty"`
	OutputGz     []byte `dynamodbav:"outputGz,omitempty"`
	OutputRef    string `dynamodbav:"outputRef,omitempty"`
	StopReason   string `dynamodbav:"stopReason,omitempty"`
	ErrorCode    string `dynamodbav:"errorCode,omitempty"`
	ErrorMessage string `dynamodbav:"errorMessage,omitempty"`
	ContentType  string `dynamodbav:"contentType,omitempty"`
	Note         string `dynamodbav:"note,omitempty"`
	Path         string `dynamodbav:"path,omitempty"`
	InputTokens  int64  `dynamodbav:"inputTokens,omitempty"`
	OutputTokens int64  `dynamodbav:"outputTokens,omitempty"`
	CacheRead    int64  `dynamodbav:"cacheReadTokens,omitempty"`
	CacheWrite   int64  `dynamodbav:"cacheWriteTokens,omitempty"`
}

// compressMin is the output length from which compression is tried: below
// one write unit (1 KB) it cannot lower the cost.
const compressMin = 1024

// encodeRecord builds the item recordItem describes, by hand: ingest encodes
// every record of every output, and attributevalue's reflection was a large
// share of its CPU (the tests hold both encodings equal).
func encodeRecord(rs job.RecordSet, r *job.Record) (map[string]types.AttributeValue, error) {
	m := make(map[string]types.AttributeValue, 9)
	m["PK"] = str(recordPK(rs.JobID, rs.Shard(r.Key())))
	m["SK"] = str(recordSK(rs, r.Key()))
	if exp := storeutil.ExpiresUnix(r.ExpiresAt); exp != 0 {
		m["expiresAt"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(exp, 10)}
	}
	m["jobId"] = str(rs.JobID)
	m["recordId"] = str(r.ID)
	if rs.ByOrdinal {
		m["ordinal"] = &types.AttributeValueMemberN{Value: strconv.Itoa(r.Ordinal)}
	}
	m["status"] = str(string(r.Status))
	// The record itself is one document (storeutil.EncodeRecord, as the
	// packed pages and localstore hold it), never listed field by field: a
	// field added to job.Record is stored without a change here (the items
	// of the field-by-field layout before still read, decodeLegacyRecord).
	doc, err := storeutil.EncodeRecord(r)
	if err != nil {
		return nil, err
	}
	if len(doc) > compressMin {
		gz, err := gzipBytes(doc)
		if err != nil {
			return nil, fmt.Errorf("compress record %s: %w", r.ID, err)
		}
		if len(gz) < len(doc) {
			m[attrRecordGz] = &types.AttributeValueMemberB{Value: gz}
			return m, nil
		}
	}
	m[attrRecord] = &types.AttributeValueMemberS{Value: string(doc)}
	return m, nil
}

// attrRecord and attrRecordGz hold a record item's whole record, as JSON or
// gzip-compressed JSON (whichever is smaller).
const (
	attrRecord   = "rec"
	attrRecordGz = "recGz"
)

func decodeRecord(m map[string]types.AttributeValue) (job.Record, error) {
	var doc []byte
	switch v := m[attrRecordGz].(type) {
	case *types.AttributeValueMemberB:
		b, err := gunzipString(v.Value)
		if err != nil {
			return job.Record{}, fmt.Errorf("decompress record item: %w", err)
		}
		doc = []byte(b)
	}
	if v, ok := m[attrRecord].(*types.AttributeValueMemberS); ok {
		doc = []byte(v.Value)
	}
	if doc == nil {
		return decodeLegacyRecord(m)
	}
	var r job.Record
	if err := json.Unmarshal(doc, &r); err != nil {
		return job.Record{}, fmt.Errorf("decode record item: %w", err)
	}
	if v, ok := m["jobId"].(*types.AttributeValueMemberS); ok {
		r.JobID = v.Value // the set's, whatever the caller's record said
	}
	return r, nil
}

// decodeLegacyRecord reads a record item of the layout before records were
// stored whole: one attribute per field.
func decodeLegacyRecord(m map[string]types.AttributeValue) (job.Record, error) {
	var it recordItem
	if err := attributevalue.UnmarshalMap(m, &it); err != nil {
		return job.Record{}, fmt.Errorf("decode record item: %w", err)
	}
	out := it.Output
	if it.OutputGz != nil {
		s, err := gunzipString(it.OutputGz)
		if err != nil {
			return job.Record{}, fmt.Errorf("decompress record %s output: %w", it.ID, err)
		}
		out = s
	}
	var ordinal int
	if it.Ordinal != nil {
		ordinal = *it.Ordinal
	}
	return job.Record{
		JobID:        it.JobID,
		ID:           it.ID,
		Ordinal:      ordinal,
		Status:       job.RecordStatus(it.Status),
		Output:       out,
		OutputRef:    it.OutputRef,
		StopReason:   it.StopReason,
		ErrorCode:    it.ErrorCode,
		ErrorMessage: it.ErrorMessage,
		ContentType:  it.ContentType,
		Note:         it.Note,
		Path:         it.Path,
		InputTokens:  it.InputTokens,
		OutputTokens: it.OutputTokens,
		ExpiresAt:    storeutil.FromExpiresUnix(it.ExpiresAt),

		CacheReadTokens:  it.CacheRead,
		CacheWriteTokens: it.CacheWrite,
	}, nil
}

// gzipWriters are reused: a new gzip.Writer allocates about 800 KB of
// compressor state, once per record of every ingest before.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	return zw
}}

func gzipString(s string) ([]byte, error) {
	return gzipOf(len(s), func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
}

func gzipBytes(b []byte) ([]byte, error) {
	return gzipOf(len(b), func(w io.Writer) error { _, err := w.Write(b); return err })
}

// gzipOf compresses what write writes (n bytes) into a slice of its own
// size: items keep it, and a buffer grown for the worst case held several
// times the compressed bytes.
func gzipOf(n int, write func(io.Writer) error) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(n/8 + 64)
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if err := write(zw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// maxInflated bounds decompression: no stored output is longer than this.
const maxInflated = 4 * job.MaxInlineOutputBytes

func gunzipString(b []byte) (string, error) { return gunzipLimit(b, maxInflated) }

func gunzipLimit(b []byte, limit int) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return "", err
	}
	if len(out) > limit {
		return "", fmt.Errorf("inflated over %d bytes", limit)
	}
	return string(out), nil
}
