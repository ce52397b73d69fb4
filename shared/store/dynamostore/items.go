package dynamostore

import (
	"bytes"
	"compress/gzip"
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

// jobItem is a job as DynamoDB attributes: real attributes, so the console,
// exports and filter expressions can see them. Parts and Checkpoint are nested
// maps added beside it (see encodeJob).
type jobItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	GSI1PK string `dynamodbav:"GSI1PK"`
	GSI1SK string `dynamodbav:"GSI1SK"`
	// Sparse index keys: absent once the job is terminal, so it leaves GSI2.
	GSI2PK    string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK    string `dynamodbav:"GSI2SK,omitempty"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`

	ID                   string `dynamodbav:"id"`
	Owner                string `dynamodbav:"owner"`
	Name                 string `dynamodbav:"name,omitempty"`
	Provider             string `dynamodbav:"provider"`
	Model                string `dynamodbav:"model,omitempty"`
	Status               string `dynamodbav:"status"`
	ProviderStatus       string `dynamodbav:"providerStatus,omitempty"`
	FinalStatus          string `dynamodbav:"finalStatus,omitempty"`
	InputURI             string `dynamodbav:"inputUri,omitempty"`
	OutputURI            string `dynamodbav:"outputUri,omitempty"`
	FailureURI           string `dynamodbav:"failureUri,omitempty"`
	RecordCount          int    `dynamodbav:"recordCount"`
	Succeeded            int    `dynamodbav:"succeeded"`
	Failed               int    `dynamodbav:"failed"`
	BadLines             int    `dynamodbav:"badLines"`
	InputTokens          int64  `dynamodbav:"inputTokens"`
	OutputTokens         int64  `dynamodbav:"outputTokens"`
	Shards               int    `dynamodbav:"shards"`
	Error                string `dynamodbav:"error,omitempty"`
	OutputReadyPublished bool   `dynamodbav:"outputReadyPublished,omitempty"`
	TTLDays              int    `dynamodbav:"ttlDays"`
	CreatedAt            string `dynamodbav:"createdAt"`
	UpdatedAt            string `dynamodbav:"updatedAt"`
	SubmittedAt          string `dynamodbav:"submittedAt,omitempty"`
	CompletedAt          string `dynamodbav:"completedAt,omitempty"`
	LastEventAt          string `dynamodbav:"lastEventAt,omitempty"`
	Version              int64  `dynamodbav:"version"`
}

// nestedOpts encode job.Part and job.Checkpoint by their json tags, so the
// nested maps use the same camelCase names as the API and stay in step when
// the domain types gain fields.
func nestedEncOpts(o *attributevalue.EncoderOptions) { o.TagKey = "json" }
func nestedDecOpts(o *attributevalue.DecoderOptions) { o.TagKey = "json" }

func encodeJob(j *job.Job) (map[string]types.AttributeValue, error) {
	it := jobItem{
		PK:                   jobPK(j.ID),
		SK:                   skJob,
		GSI1PK:               ownerPK(j.Owner),
		GSI1SK:               sortTime(j.CreatedAt) + "#" + j.ID,
		ExpiresAt:            storeutil.ExpiresUnix(j.ExpiresAt),
		ID:                   j.ID,
		Owner:                j.Owner,
		Name:                 j.Name,
		Provider:             j.Provider,
		Model:                j.Model,
		Status:               string(j.Status),
		ProviderStatus:       j.ProviderStatus,
		FinalStatus:          string(j.FinalStatus),
		InputURI:             j.InputURI,
		OutputURI:            j.OutputURI,
		FailureURI:           j.FailureURI,
		RecordCount:          j.RecordCount,
		Succeeded:            j.Succeeded,
		Failed:               j.Failed,
		BadLines:             j.BadLines,
		InputTokens:          j.InputTokens,
		OutputTokens:         j.OutputTokens,
		Shards:               j.Shards,
		Error:                j.Error,
		OutputReadyPublished: j.OutputReadyPublished,
		TTLDays:              j.TTLDays,
		CreatedAt:            formatTime(j.CreatedAt),
		UpdatedAt:            formatTime(j.UpdatedAt),
		SubmittedAt:          formatTime(j.SubmittedAt),
		CompletedAt:          formatTime(j.CompletedAt),
		LastEventAt:          formatTime(j.LastEventAt),
		Version:              j.Version,
	}
	if !j.Status.Terminal() {
		it.GSI2PK = inFlightPK(j.Provider)
		it.GSI2SK = sortTime(j.UpdatedAt) + "#" + j.ID
	}
	m, err := attributevalue.MarshalMap(&it)
	if err != nil {
		return nil, fmt.Errorf("encode job %s: %w", j.ID, err)
	}
	if len(j.Parts) > 0 {
		av, err := attributevalue.MarshalWithOptions(j.Parts, nestedEncOpts)
		if err != nil {
			return nil, fmt.Errorf("encode job %s parts: %w", j.ID, err)
		}
		m[attrParts] = av
	}
	if j.Checkpoint != nil {
		av, err := attributevalue.MarshalWithOptions(j.Checkpoint, nestedEncOpts)
		if err != nil {
			return nil, fmt.Errorf("encode job %s checkpoint: %w", j.ID, err)
		}
		m[attrCheckpoint] = av
	}
	if err := encodeJobExtra(j, m); err != nil {
		return nil, err
	}
	if err := encodeReliability(j, m); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeJob(m map[string]types.AttributeValue) (*job.Job, error) {
	var it jobItem
	if err := attributevalue.UnmarshalMap(m, &it); err != nil {
		return nil, fmt.Errorf("decode job item: %w", err)
	}
	j := &job.Job{
		ID:                   it.ID,
		Owner:                it.Owner,
		Name:                 it.Name,
		Provider:             it.Provider,
		Model:                it.Model,
		Status:               job.Status(it.Status),
		ProviderStatus:       it.ProviderStatus,
		FinalStatus:          job.Status(it.FinalStatus),
		InputURI:             it.InputURI,
		OutputURI:            it.OutputURI,
		FailureURI:           it.FailureURI,
		RecordCount:          it.RecordCount,
		Succeeded:            it.Succeeded,
		Failed:               it.Failed,
		BadLines:             it.BadLines,
		InputTokens:          it.InputTokens,
		OutputTokens:         it.OutputTokens,
		Shards:               it.Shards,
		Error:                it.Error,
		OutputReadyPublished: it.OutputReadyPublished,
		TTLDays:              it.TTLDays,
		ExpiresAt:            storeutil.FromExpiresUnix(it.ExpiresAt),
		Version:              it.Version,
	}
	var err error
	for _, f := range []struct {
		dst *time.Time
		src string
	}{
		{&j.CreatedAt, it.CreatedAt}, {&j.UpdatedAt, it.UpdatedAt}, {&j.SubmittedAt, it.SubmittedAt},
		{&j.CompletedAt, it.CompletedAt}, {&j.LastEventAt, it.LastEventAt},
	} {
		if *f.dst, err = parseTime(f.src); err != nil {
			return nil, fmt.Errorf("decode job %s: %w", it.ID, err)
		}
	}
	if av, ok := m[attrParts]; ok {
		if err := attributevalue.UnmarshalWithOptions(av, &j.Parts, nestedDecOpts); err != nil {
			return nil, fmt.Errorf("decode job %s parts: %w", it.ID, err)
		}
	}
	if av, ok := m[attrCheckpoint]; ok {
		if err := attributevalue.UnmarshalWithOptions(av, &j.Checkpoint, nestedDecOpts); err != nil {
			return nil, fmt.Errorf("decode job %s checkpoint: %w", it.ID, err)
		}
	}
	if err := decodeJobExtra(m, j); err != nil {
		return nil, err
	}
	if err := decodeReliability(m, j); err != nil {
		return nil, err
	}
	return j, nil
}

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
	output := r.Output
	if len(output) > compressMin {
		gz, err := gzipString(output)
		if err != nil {
			return nil, fmt.Errorf("compress record %s output: %w", r.ID, err)
		}
		if len(gz) < len(output) {
			output = ""
			m["outputGz"] = &types.AttributeValueMemberB{Value: gz}
		}
	}
	for _, f := range [...]struct{ name, v string }{
		{"output", output}, {"outputRef", r.OutputRef}, {"stopReason", r.StopReason}, {"errorCode", r.ErrorCode},
		{"errorMessage", r.ErrorMessage}, {"contentType", r.ContentType}, {"note", r.Note}, {"path", r.Path},
	} {
		if f.v != "" {
			m[f.name] = str(f.v)
		}
	}
	for _, f := range [...]struct {
		name string
		v    int64
	}{{"inputTokens", r.InputTokens}, {"outputTokens", r.OutputTokens}} {
		if f.v != 0 {
			m[f.name] = &types.AttributeValueMemberN{Value: strconv.FormatInt(f.v, 10)}
		}
	}
	return m, nil
}

func decodeRecord(m map[string]types.AttributeValue) (job.Record, error) {
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
	}, nil
}

// gzipWriters are reused: a new gzip.Writer allocates about 800 KB of
// compressor state, once per record of every ingest before.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	return zw
}}

func gzipString(s string) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(s) / 3)
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if _, err := io.WriteString(zw, s); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxInflated bounds decompression: no stored output is longer than this.
const maxInflated = 4 * job.MaxInlineOutputBytes

func gunzipString(b []byte) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, maxInflated+1))
	if err != nil {
		return "", err
	}
	if len(out) > maxInflated {
		return "", fmt.Errorf("inflated output over %d bytes", maxInflated)
	}
	return string(out), nil
}
