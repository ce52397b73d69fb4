package s3vectors

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// S3VectorsSim is a test double of the Amazon S3 Vectors REST-JSON API, reached by
// the real service/s3vectors SDK client through BaseEndpoint. It keeps vector
// buckets and indexes in memory and answers QueryVectors by exact search (the
// real service is approximate). It applies the documented limits of
// s3vRules; every error message and the X-Simulator header say it is a simulator.
//
// Operations: CreateVectorBucket, GetVectorBucket, CreateIndex, GetIndex,
// ListIndexes, DeleteIndex, PutVectors, GetVectors, DeleteVectors, ListVectors,
// QueryVectors.
type S3VectorsSim struct {
	Log *slog.Logger
	// Region and Account build the ARNs it answers with.
	Region, Account string

	mu      sync.RWMutex
	buckets map[string]*s3vBucket
	http    sim.Listener
}

// s3vRules are the limits the simulator enforces, from
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-vectors-limitations.html,
// .../s3-vectors-indexes.html (naming), .../s3-vectors-buckets-naming.html and
// .../s3-vectors-metadata-filtering.html (operators), read 2026-11-30.
var s3vRules = struct {
	MinDimension, MaxDimension      int
	MaxPutVectors, MaxDeleteVectors int
	MaxGetVectors, MaxTopK          int
	MaxListVectors, MaxListIndexes  int
	MaxSegments                     int
	MaxRequestBytes                 int64
	MaxMetadataBytes                int
	MaxFilterableBytes              int
	MaxMetadataKeys                 int
	MaxNonFilterableKeys            int
	MinNameLen, MaxNameLen          int
	MaxKeyLen                       int
}{
	MinDimension: 1, MaxDimension: 4096,
	MaxPutVectors: 500, MaxDeleteVectors: 500,
	MaxGetVectors: 100, MaxTopK: 100,
	MaxListVectors: 1000, MaxListIndexes: 500,
	MaxSegments:        16,
	MaxRequestBytes:    20 << 20,
	MaxMetadataBytes:   40 << 10,
	MaxFilterableBytes: 2 << 10,
	MaxMetadataKeys:    50, MaxNonFilterableKeys: 10,
	MinNameLen: 3, MaxNameLen: 63,
	MaxKeyLen: 1024,
}

type s3vBucket struct {
	name    string
	created time.Time
	indexes map[string]*s3vIndex
}

// s3vIndex stores vectors in one flat []float32 (slot*dim) so a query is a
// plain loop over contiguous memory; deleted slots are reused.
type s3vIndex struct {
	name, bucket string
	dim          int
	cosine       bool
	nonFilt      map[string]bool
	nonFiltList  []string
	created      time.Time

	keys  map[string]int
	slot  []string // key per slot, "" when free
	data  []float32
	norms []float32
	meta  []map[string]any
	free  []int
}

// Listen serves on addr (e.g. 127.0.0.1:0) and returns the base URL.
func (s *S3VectorsSim) Listen(addr string) (string, error) {
	return s.http.Listen(addr, "s3vectors sim", s, s.Log,
		"S3 Vectors SIMULATOR (test double of the S3 Vectors API, exact search) listening")
}

// Close stops the server.
func (s *S3VectorsSim) Close() error { return s.http.Close() }

// Settle: S3 Vectors answers every call before returning (Simulator).
func (s *S3VectorsSim) Settle(ctx context.Context) error { return sim.Settled(ctx) }

var _ sim.Simulator = (*S3VectorsSim)(nil)

type s3vHandler func(s *S3VectorsSim, body []byte) (any, *s3vError)

var s3vOps = map[string]s3vHandler{
	"/CreateVectorBucket": (*S3VectorsSim).createBucket,
	"/GetVectorBucket":    (*S3VectorsSim).getBucket,
	"/CreateIndex":        (*S3VectorsSim).createIndex,
	"/GetIndex":           (*S3VectorsSim).getIndex,
	"/ListIndexes":        (*S3VectorsSim).listIndexes,
	"/DeleteIndex":        (*S3VectorsSim).deleteIndex,
	"/PutVectors":         (*S3VectorsSim).putVectors,
	"/GetVectors":         (*S3VectorsSim).getVectors,
	"/DeleteVectors":      (*S3VectorsSim).deleteVectors,
	"/ListVectors":        (*S3VectorsSim).listVectors,
	"/QueryVectors":       (*S3VectorsSim).queryVectors,
}

type s3vError struct {
	status int
	code   string
	msg    string
}

func s3vValidation(format string, args ...any) *s3vError {
	return &s3vError{400, "ValidationException", fmt.Sprintf(format, args...)}
}

func s3vNotFound(format string, args ...any) *s3vError {
	return &s3vError{404, "NotFoundException", fmt.Sprintf(format, args...)}
}

// ServeHTTP routes POST /<Operation> as the SDK's REST-JSON serializers send it.
func (s *S3VectorsSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, done := sim.BodyFirst(w, r)
	defer done()
	w.Header().Set("X-Simulator", "mcpbatch s3vectors simulator")
	op, ok := s3vOps[r.URL.Path]
	if r.Method != http.MethodPost || !ok {
		s3vWriteError(w, &s3vError{404, "NotFoundException", fmt.Sprintf("no simulated operation %s %s", r.Method, r.URL.Path)})
		return
	}
	if r.ContentLength > s3vRules.MaxRequestBytes {
		s3vWriteError(w, &s3vError{413, "ValidationException", fmt.Sprintf("request payload is %d bytes, limit %d (20 MiB)", r.ContentLength, s3vRules.MaxRequestBytes)})
		return
	}
	body := make([]byte, 0, max(r.ContentLength, 0))
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Body.Read(buf)
		body = append(body, buf[:n]...)
		if int64(len(body)) > s3vRules.MaxRequestBytes {
			s3vWriteError(w, &s3vError{413, "ValidationException", fmt.Sprintf("request payload exceeds %d bytes (20 MiB)", s3vRules.MaxRequestBytes)})
			return
		}
		if err != nil {
			break
		}
	}
	out, e := op(s, body)
	if e != nil {
		s3vWriteError(w, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if out == nil {
		out = struct{}{}
	}
	_ = json.NewEncoder(w).Encode(out)
}

func s3vWriteError(w http.ResponseWriter, e *s3vError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", e.code)
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": "[simulated S3 Vectors] " + e.msg})
}

func (s *S3VectorsSim) arn(bucket, index string) string {
	region, account := s.Region, s.Account
	if region == "" {
		region = "us-east-1"
	}
	if account == "" {
		account = "000000000000"
	}
	a := fmt.Sprintf("arn:aws:s3vectors:%s:%s:bucket/%s", region, account, bucket)
	if index != "" {
		a += "/index/" + index
	}
	return a
}

// checkName applies the bucket and index naming rules (3–63 characters; bucket:
// a-z 0-9 -; index: also '.'; both begin and end with a letter or digit).
func checkName(field, n string, dots bool) *s3vError {
	if len(n) < s3vRules.MinNameLen || len(n) > s3vRules.MaxNameLen {
		return s3vValidation("%s %q must be %d to %d characters long", field, n, s3vRules.MinNameLen, s3vRules.MaxNameLen)
	}
	for i, c := range n {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if (i == 0 || i == len(n)-1) && !alnum {
			return s3vValidation("%s %q must begin and end with a lowercase letter or number", field, n)
		}
		if !alnum && c != '-' && !(dots && c == '.') {
			return s3vValidation("%s %q may contain only lowercase letters, numbers, hyphens%s", field, n, map[bool]string{true: " and dots", false: ""}[dots])
		}
	}
	return nil
}

type s3vTarget struct {
	VectorBucketName string `json:"vectorBucketName"`
	VectorBucketArn  string `json:"vectorBucketArn"`
	IndexName        string `json:"indexName"`
	IndexArn         string `json:"indexArn"`
}

// resolve finds the bucket and index named by name or ARN. Callers hold s.mu.
func (s *S3VectorsSim) resolve(t s3vTarget, wantIndex bool) (*s3vBucket, *s3vIndex, *s3vError) {
	bucket, index := t.VectorBucketName, t.IndexName
	if t.IndexArn != "" {
		_, rest, ok := strings.Cut(t.IndexArn, ":bucket/")
		b, i, ok2 := strings.Cut(rest, "/index/")
		if !ok || !ok2 {
			return nil, nil, s3vValidation("indexArn %q is not an index ARN", t.IndexArn)
		}
		bucket, index = b, i
	} else if t.VectorBucketArn != "" {
		_, b, ok := strings.Cut(t.VectorBucketArn, ":bucket/")
		if !ok {
			return nil, nil, s3vValidation("vectorBucketArn %q is not a vector bucket ARN", t.VectorBucketArn)
		}
		bucket = b
	}
	if bucket == "" {
		return nil, nil, s3vValidation("vectorBucketName or vectorBucketArn is required")
	}
	b := s.buckets[bucket]
	if b == nil {
		return nil, nil, s3vNotFound("vector bucket %q does not exist", bucket)
	}
	if !wantIndex {
		return b, nil, nil
	}
	if index == "" {
		return nil, nil, s3vValidation("indexName or indexArn is required")
	}
	ix := b.indexes[index]
	if ix == nil {
		return nil, nil, s3vNotFound("index %q does not exist in vector bucket %q", index, bucket)
	}
	return b, ix, nil
}

func decode(body []byte, v any) *s3vError {
	if len(body) == 0 {
		body = []byte("{}")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return s3vValidation("malformed request body: %v", err)
	}
	return nil
}

func (s *S3VectorsSim) createBucket(body []byte) (any, *s3vError) {
	var in struct {
		VectorBucketName string `json:"vectorBucketName"`
	}
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	if e := checkName("vectorBucketName", in.VectorBucketName, false); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets == nil {
		s.buckets = map[string]*s3vBucket{}
	}
	if s.buckets[in.VectorBucketName] != nil {
		return nil, &s3vError{409, "ConflictException", fmt.Sprintf("vector bucket %q already exists", in.VectorBucketName)}
	}
	s.buckets[in.VectorBucketName] = &s3vBucket{name: in.VectorBucketName, created: time.Now(), indexes: map[string]*s3vIndex{}}
	return map[string]any{"vectorBucketArn": s.arn(in.VectorBucketName, "")}, nil
}

func (s *S3VectorsSim) getBucket(body []byte) (any, *s3vError) {
	var in s3vTarget
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, _, e := s.resolve(in, false)
	if e != nil {
		return nil, e
	}
	return map[string]any{"vectorBucket": map[string]any{
		"vectorBucketName": b.name, "vectorBucketArn": s.arn(b.name, ""),
		"creationTime": sim.Epoch(b.created),
	}}, nil
}

func (s *S3VectorsSim) createIndex(body []byte) (any, *s3vError) {
	var in struct {
		s3vTarget
		DataType              string `json:"dataType"`
		Dimension             *int   `json:"dimension"`
		DistanceMetric        string `json:"distanceMetric"`
		MetadataConfiguration *struct {
			NonFilterableMetadataKeys []string `json:"nonFilterableMetadataKeys"`
		} `json:"metadataConfiguration"`
	}
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	if e := checkName("indexName", in.IndexName, true); e != nil {
		return nil, e
	}
	if in.DataType != "float32" {
		return nil, s3vValidation("dataType %q is not supported (float32)", in.DataType)
	}
	if in.Dimension == nil || *in.Dimension < s3vRules.MinDimension || *in.Dimension > s3vRules.MaxDimension {
		return nil, s3vValidation("dimension must be between %d and %d", s3vRules.MinDimension, s3vRules.MaxDimension)
	}
	if in.DistanceMetric != "cosine" && in.DistanceMetric != "euclidean" {
		return nil, s3vValidation("distanceMetric %q must be cosine or euclidean", in.DistanceMetric)
	}
	nonFilt := map[string]bool{}
	var nonFiltList []string
	if in.MetadataConfiguration != nil {
		keys := in.MetadataConfiguration.NonFilterableMetadataKeys
		if len(keys) < 1 || len(keys) > s3vRules.MaxNonFilterableKeys {
			return nil, s3vValidation("nonFilterableMetadataKeys must hold 1 to %d keys, got %d", s3vRules.MaxNonFilterableKeys, len(keys))
		}
		for _, k := range keys {
			if len(k) < 1 || len(k) > 63 {
				return nil, s3vValidation("nonFilterableMetadataKeys: key %q must be 1 to 63 characters", k)
			}
			nonFilt[k] = true
		}
		nonFiltList = append(nonFiltList, keys...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _, e := s.resolve(s3vTarget{VectorBucketName: in.VectorBucketName, VectorBucketArn: in.VectorBucketArn}, false)
	if e != nil {
		return nil, e
	}
	if b.indexes[in.IndexName] != nil {
		return nil, &s3vError{409, "ConflictException", fmt.Sprintf("index %q already exists in vector bucket %q", in.IndexName, b.name)}
	}
	b.indexes[in.IndexName] = &s3vIndex{
		name: in.IndexName, bucket: b.name, dim: *in.Dimension, cosine: in.DistanceMetric == "cosine",
		nonFilt: nonFilt, nonFiltList: nonFiltList, created: time.Now(), keys: map[string]int{},
	}
	return map[string]any{"indexArn": s.arn(b.name, in.IndexName)}, nil
}

func (ix *s3vIndex) metric() string {
	if ix.cosine {
		return "cosine"
	}
	return "euclidean"
}

func (s *S3VectorsSim) getIndex(body []byte) (any, *s3vError) {
	var in s3vTarget
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ix, e := s.resolve(in, true)
	if e != nil {
		return nil, e
	}
	out := map[string]any{
		"vectorBucketName": ix.bucket, "indexName": ix.name, "indexArn": s.arn(ix.bucket, ix.name),
		"creationTime": sim.Epoch(ix.created), "dataType": "float32", "dimension": ix.dim, "distanceMetric": ix.metric(),
	}
	if len(ix.nonFiltList) > 0 {
		out["metadataConfiguration"] = map[string]any{"nonFilterableMetadataKeys": ix.nonFiltList}
	}
	return map[string]any{"index": out}, nil
}

func (s *S3VectorsSim) listIndexes(body []byte) (any, *s3vError) {
	var in struct {
		s3vTarget
		MaxResults *int   `json:"maxResults"`
		NextToken  string `json:"nextToken"`
		Prefix     string `json:"prefix"`
	}
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	limit, e := pageSize(in.MaxResults, s3vRules.MaxListIndexes)
	if e != nil {
		return nil, e
	}
	after, e := fromToken(in.NextToken)
	if e != nil {
		return nil, e
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, _, e := s.resolve(in.s3vTarget, false)
	if e != nil {
		return nil, e
	}
	names := make([]string, 0, len(b.indexes))
	for n := range b.indexes {
		if strings.HasPrefix(n, in.Prefix) && n > after {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := map[string]any{}
	if len(names) > limit {
		names = names[:limit]
		out["nextToken"] = toToken(names[limit-1])
	}
	list := make([]any, len(names))
	for i, n := range names {
		ix := b.indexes[n]
		list[i] = map[string]any{"vectorBucketName": b.name, "indexName": n, "indexArn": s.arn(b.name, n), "creationTime": sim.Epoch(ix.created)}
	}
	out["indexes"] = list
	return out, nil
}

func pageSize(p *int, limit int) (int, *s3vError) {
	if p == nil {
		return limit, nil
	}
	if *p < 1 || *p > limit {
		return 0, s3vValidation("maxResults must be between 1 and %d", limit)
	}
	return *p, nil
}

func toToken(last string) string { return base64.RawURLEncoding.EncodeToString([]byte(last)) }

func fromToken(t string) (string, *s3vError) {
	if t == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil {
		return "", s3vValidation("nextToken is invalid")
	}
	return string(b), nil
}

func (s *S3VectorsSim) deleteIndex(body []byte) (any, *s3vError) {
	var in s3vTarget
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ix, e := s.resolve(in, true)
	if e != nil {
		return nil, e
	}
	delete(b.indexes, ix.name)
	return nil, nil
}

type s3vPutVector struct {
	Key  *string `json:"key"`
	Data *struct {
		Float32 []float32 `json:"float32"`
	} `json:"data"`
	Metadata json.RawMessage `json:"metadata"`
}

func (s *S3VectorsSim) putVectors(body []byte) (any, *s3vError) {
	var in struct {
		s3vTarget
		Vectors []s3vPutVector `json:"vectors"`
	}
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	if len(in.Vectors) < 1 || len(in.Vectors) > s3vRules.MaxPutVectors {
		return nil, s3vValidation("vectors must hold 1 to %d vectors, got %d", s3vRules.MaxPutVectors, len(in.Vectors))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ix, e := s.resolve(in.s3vTarget, true)
	if e != nil {
		return nil, e
	}
	metas := make([]map[string]any, len(in.Vectors))
	seen := make(map[string]bool, len(in.Vectors))
	for i, v := range in.Vectors {
		if v.Key == nil || len(*v.Key) < 1 || len(*v.Key) > s3vRules.MaxKeyLen {
			return nil, s3vValidation("vectors[%d].key must be 1 to %d characters", i, s3vRules.MaxKeyLen)
		}
		if seen[*v.Key] {
			return nil, s3vValidation("vectors[%d].key %q is duplicated in the request", i, *v.Key)
		}
		seen[*v.Key] = true
		if v.Data == nil || len(v.Data.Float32) != ix.dim {
			n := 0
			if v.Data != nil {
				n = len(v.Data.Float32)
			}
			return nil, s3vValidation("vectors[%d] (key %q): data has dimension %d, index %q has dimension %d", i, *v.Key, n, ix.name, ix.dim)
		}
		var sq float64
		for _, x := range v.Data.Float32 {
			sq += float64(x) * float64(x)
		}
		if ix.cosine && sq == 0 {
			return nil, s3vValidation("vectors[%d] (key %q): a zero vector is not valid for the cosine metric", i, *v.Key)
		}
		m, e := ix.checkMetadata(i, *v.Key, v.Metadata)
		if e != nil {
			return nil, e
		}
		metas[i] = m
	}
	for i, v := range in.Vectors {
		ix.put(*v.Key, v.Data.Float32, metas[i])
	}
	return nil, nil
}

// checkMetadata applies the per-vector metadata limits: ≤ 50 keys, ≤ 40 KB in
// all, ≤ 2 KB filterable, filterable values string/number/bool or lists of them.
func (ix *s3vIndex) checkMetadata(i int, key string, raw json.RawMessage) (map[string]any, *s3vError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, s3vValidation("vectors[%d] (key %q): metadata must be a JSON object", i, key)
	}
	if len(m) > s3vRules.MaxMetadataKeys {
		return nil, s3vValidation("vectors[%d] (key %q): metadata has %d keys, limit %d", i, key, len(m), s3vRules.MaxMetadataKeys)
	}
	total, filt := 0, 0
	for k, v := range m {
		b, _ := json.Marshal(v)
		n := len(k) + len(b)
		total += n
		if ix.nonFilt[k] {
			continue
		}
		filt += n
		if !filterableValue(v) {
			return nil, s3vValidation("vectors[%d] (key %q): filterable metadata %q must be a string, number, boolean or list of those", i, key, k)
		}
	}
	if total > s3vRules.MaxMetadataBytes {
		return nil, s3vValidation("vectors[%d] (key %q): metadata is %d bytes, limit %d", i, key, total, s3vRules.MaxMetadataBytes)
	}
	if filt > s3vRules.MaxFilterableBytes {
		return nil, s3vValidation("vectors[%d] (key %q): filterable metadata is %d bytes, limit %d", i, key, filt, s3vRules.MaxFilterableBytes)
	}
	return m, nil
}

func filterableValue(v any) bool {
	switch x := v.(type) {
	case string, bool, float64:
		return true
	case []any:
		for _, e := range x {
			switch e.(type) {
			case string, bool, float64:
			default:
				return false
			}
		}
		return true
	}
	return false
}

func (ix *s3vIndex) put(key string, data []float32, meta map[string]any) {
	slot, ok := ix.keys[key]
	if !ok {
		if n := len(ix.free); n > 0 {
			slot = ix.free[n-1]
			ix.free = ix.free[:n-1]
		} else {
			slot = len(ix.slot)
			ix.slot = append(ix.slot, "")
			ix.data = append(ix.data, make([]float32, ix.dim)...)
			ix.norms = append(ix.norms, 0)
			ix.meta = append(ix.meta, nil)
		}
		ix.keys[key] = slot
		ix.slot[slot] = key
	}
	copy(ix.data[slot*ix.dim:(slot+1)*ix.dim], data)
	var sq float64
	for _, x := range data {
		sq += float64(x) * float64(x)
	}
	ix.norms[slot] = float32(math.Sqrt(sq))
	ix.meta[slot] = meta
}

func (ix *s3vIndex) remove(key string) {
	slot, ok := ix.keys[key]
	if !ok {
		return
	}
	delete(ix.keys, key)
	ix.slot[slot] = ""
	ix.meta[slot] = nil
	ix.free = append(ix.free, slot)
}

func (ix *s3vIndex) render(slot int, data, meta bool) map[string]any {
	v := map[string]any{"key": ix.slot[slot]}
	if data {
		v["data"] = map[string]any{"float32": ix.data[slot*ix.dim : (slot+1)*ix.dim]}
	}
	if meta && ix.meta[slot] != nil {
		v["metadata"] = ix.meta[slot]
	}
	return v
}

func (s *S3VectorsSim) getVectors(body []byte) (any, *s3vError) {
	var in struct {
		s3vTarget
		Keys           []string `json:"keys"`
		ReturnData     bool     `json:"returnData"`
		ReturnMetadata bool     `json:"returnMetadata"`
	}
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	if len(in.Keys) < 1 || len(in.Keys) > s3vRules.MaxGetVectors {
		return nil, s3vValidation("keys must hold 1 to %d keys, got %d", s3vRules.MaxGetVectors, len(in.Keys))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ix, e := s.resolve(in.s3vTarget, true)
	if e != nil {
		return nil, e
	}
	out := []any{}
	for _, k := range in.Keys {
		if slot, ok := ix.keys[k]; ok {
			out = append(out, ix.render(slot, in.ReturnData, in.ReturnMetadata))
		}
	}
	return map[string]any{"vectors": out}, nil
}

func (s *S3VectorsSim) deleteVectors(body []byte) (any, *s3vError) {
	var in struct {
		s3vTarget
		Keys []string `json:"keys"`
	}
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	if len(in.Keys) < 1 || len(in.Keys) > s3vRules.MaxDeleteVectors {
		return nil, s3vValidation("keys must hold 1 to %d keys, got %d", s3vRules.MaxDeleteVectors, len(in.Keys))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ix, e := s.resolve(in.s3vTarget, true)
	if e != nil {
		return nil, e
	}
	for _, k := range in.Keys {
		ix.remove(k)
	}
	return nil, nil
}

func (s *S3VectorsSim) listVectors(body []byte) (any, *s3vError) {
	var in struct {
		s3vTarget
		MaxResults     *int   `json:"maxResults"`
		NextToken      string `json:"nextToken"`
		ReturnData     bool   `json:"returnData"`
		ReturnMetadata bool   `json:"returnMetadata"`
		SegmentCount   *int   `json:"segmentCount"`
		SegmentIndex   *int   `json:"segmentIndex"`
	}
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	limit, e := pageSize(in.MaxResults, s3vRules.MaxListVectors)
	if e != nil {
		return nil, e
	}
	segs, seg := 1, 0
	// The SDK omits segmentIndex when it is 0, so it defaults to 0 here.
	if in.SegmentIndex != nil && in.SegmentCount == nil {
		return nil, s3vValidation("segmentIndex needs segmentCount")
	}
	if in.SegmentCount != nil {
		segs = *in.SegmentCount
		if in.SegmentIndex != nil {
			seg = *in.SegmentIndex
		}
		if segs < 1 || segs > s3vRules.MaxSegments || seg < 0 || seg >= segs {
			return nil, s3vValidation("segmentCount must be 1 to %d and segmentIndex 0 to segmentCount-1", s3vRules.MaxSegments)
		}
	}
	after, e := fromToken(in.NextToken)
	if e != nil {
		return nil, e
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ix, e := s.resolve(in.s3vTarget, true)
	if e != nil {
		return nil, e
	}
	keys := make([]string, 0, len(ix.keys))
	for k := range ix.keys {
		if k > after && (segs == 1 || int(fnv32(k)%uint32(segs)) == seg) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := map[string]any{}
	if len(keys) > limit {
		keys = keys[:limit]
		out["nextToken"] = toToken(keys[limit-1])
	}
	list := make([]any, len(keys))
	for i, k := range keys {
		list[i] = ix.render(ix.keys[k], in.ReturnData, in.ReturnMetadata)
	}
	out["vectors"] = list
	return out, nil
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
