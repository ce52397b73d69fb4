package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors/document"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors/types"
	"github.com/aws/smithy-go"
)

// S3VectorsAPI is the part of the s3vectors client the adapter calls.
type S3VectorsAPI interface {
	CreateVectorBucket(context.Context, *s3vectors.CreateVectorBucketInput, ...func(*s3vectors.Options)) (*s3vectors.CreateVectorBucketOutput, error)
	CreateIndex(context.Context, *s3vectors.CreateIndexInput, ...func(*s3vectors.Options)) (*s3vectors.CreateIndexOutput, error)
	GetIndex(context.Context, *s3vectors.GetIndexInput, ...func(*s3vectors.Options)) (*s3vectors.GetIndexOutput, error)
	DeleteIndex(context.Context, *s3vectors.DeleteIndexInput, ...func(*s3vectors.Options)) (*s3vectors.DeleteIndexOutput, error)
	PutVectors(context.Context, *s3vectors.PutVectorsInput, ...func(*s3vectors.Options)) (*s3vectors.PutVectorsOutput, error)
	GetVectors(context.Context, *s3vectors.GetVectorsInput, ...func(*s3vectors.Options)) (*s3vectors.GetVectorsOutput, error)
	DeleteVectors(context.Context, *s3vectors.DeleteVectorsInput, ...func(*s3vectors.Options)) (*s3vectors.DeleteVectorsOutput, error)
	ListVectors(context.Context, *s3vectors.ListVectorsInput, ...func(*s3vectors.Options)) (*s3vectors.ListVectorsOutput, error)
	QueryVectors(context.Context, *s3vectors.QueryVectorsInput, ...func(*s3vectors.Options)) (*s3vectors.QueryVectorsOutput, error)
}

// CatalogIndex is the index, inside the vector bucket, where the S3Vectors
// adapter keeps one record per index (owner, name, model, counts) and its
// completed jobs (doneEntry): S3 Vectors has no place for such metadata on an index, and keeping it in
// the same bucket needs no other store or permission. Each record is a
// 1-dimension vector whose key is the physical index name, with the record as
// JSON in a non-filterable metadata key.
const CatalogIndex = "mcpbatch-catalog"

const recordKey = "record"

// S3Vectors is the Index adapter for Amazon S3 Vectors.
type S3Vectors struct {
	api    S3VectorsAPI
	bucket string
	// CreateBucket makes the vector bucket on first use when absent (make dev; in
	// AWS the stack creates it).
	CreateBucket bool

	mu    sync.Mutex
	ready bool
}

// NewS3Vectors returns the adapter over the vector bucket; the catalog index is
// created on first use.
func NewS3Vectors(api S3VectorsAPI, bucket string) *S3Vectors {
	return &S3Vectors{api: api, bucket: bucket}
}

var _ Index = (*S3Vectors)(nil)

func isCode(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}

// setup makes the bucket (when asked) and the catalog index, once.
func (s *S3Vectors) setup(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	if s.CreateBucket {
		_, err := s.api.CreateVectorBucket(ctx, &s3vectors.CreateVectorBucketInput{VectorBucketName: &s.bucket})
		if err != nil && !isCode(err, "ConflictException") {
			return fmt.Errorf("s3vectors: create vector bucket %s: %w", s.bucket, err)
		}
	}
	_, err := s.api.CreateIndex(ctx, &s3vectors.CreateIndexInput{
		VectorBucketName: &s.bucket, IndexName: aws.String(CatalogIndex), DataType: types.DataTypeFloat32,
		Dimension: aws.Int32(1), DistanceMetric: types.DistanceMetricEuclidean,
		MetadataConfiguration: &types.MetadataConfiguration{NonFilterableMetadataKeys: []string{recordKey}},
	})
	if err != nil && !isCode(err, "ConflictException") {
		return fmt.Errorf("s3vectors: create catalog index in %s: %w", s.bucket, err)
	}
	s.ready = true
	return nil
}

type s3Record struct {
	Name           string    `json:"name"`
	Owner          string    `json:"owner"`
	Model          string    `json:"model"`
	Dimension      int       `json:"dimension"`
	Metric         Metric    `json:"metric"`
	Normalize      *bool     `json:"normalize,omitempty"`
	NonFilterable  []string  `json:"non_filterable,omitempty"`
	FilterableKeys []string  `json:"filterable_keys,omitempty"`
	Vectors        int64     `json:"vectors"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Legacy is the completed-jobs list a record carried before the list got
	// its own catalog entry (doneEntry); it is read, kept, never grown.
	Legacy []string `json:"completed_jobs,omitempty"`
	// done is the list of the index's doneEntry (not part of the record).
	done []string
}

// doneEntry is an index's completed-jobs list, in a catalog entry of its own
// (doneKey): S3 Vectors has no conditional write, so a list inside the record
// was lost whenever a count update that read the record before a Commit
// wrote it back after (seen on moto: vectors counted, the job not listed).
// Now only Commit writes it, and checks its write stayed.
type doneEntry struct {
	Jobs []string `json:"jobs"`
}

func doneKey(phys string) string { return donePrefix + phys }

const donePrefix = "done-"

// completed is the index's completed jobs: the legacy list, then its entry's.
func (r s3Record) completed() []string {
	out := slices.Clone(r.Legacy)
	for _, j := range r.done {
		out = AddCompleted(out, j)
	}
	return out
}

func (r s3Record) info() Info {
	return Info{Name: r.Name, Owner: r.Owner, Model: r.Model, Dimension: r.Dimension, Metric: r.Metric, Normalize: r.Normalize,
		NonFilterable: r.NonFilterable, FilterableKeys: r.FilterableKeys, Vectors: r.Vectors,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, CompletedJobs: r.completed()}
}

func decodeDoc(d document.Interface) (map[string]any, error) {
	if d == nil {
		return nil, nil
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// load reads the record of ref; ErrNotFound when absent or another owner's.
func (s *S3Vectors) load(ctx context.Context, ref Ref) (s3Record, string, error) {
	if err := CheckRef(ref); err != nil {
		return s3Record{}, "", err
	}
	if err := s.setup(ctx); err != nil {
		return s3Record{}, "", err
	}
	phys := PhysicalName(ref)
	recs, err := s.records(ctx, []string{phys})
	if err != nil {
		return s3Record{}, "", fmt.Errorf("s3vectors: read catalog record of %q: %w", ref.Name, err)
	}
	r, found := recs[phys]
	if !found || r.Owner != ref.Owner || r.Name != ref.Name {
		return s3Record{}, phys, fmt.Errorf("%w: %q", ErrNotFound, ref.Name)
	}
	return r, phys, nil
}

// records reads the catalog records of the physical index names phys, each
// with its completed-jobs entry; a name without a record is not in the map.
func (s *S3Vectors) records(ctx context.Context, phys []string) (map[string]s3Record, error) {
	keys := make([]string, 0, 2*len(phys))
	for _, p := range phys {
		keys = append(keys, p, doneKey(p))
	}
	recs := make(map[string]s3Record, len(phys))
	done := map[string][]string{}
	for _, chunk := range Chunks(keys, MaxGetKeys) {
		page, err := s.api.GetVectors(ctx, &s3vectors.GetVectorsInput{
			VectorBucketName: &s.bucket, IndexName: aws.String(CatalogIndex), Keys: chunk, ReturnMetadata: true,
		})
		if err != nil {
			return nil, err
		}
		for _, v := range page.Vectors {
			key := aws.ToString(v.Key)
			if p, ok := strings.CutPrefix(key, donePrefix); ok {
				var d doneEntry
				if err := catalogJSON(v.Metadata, &d); err != nil {
					return nil, fmt.Errorf("completed jobs of %s: %w", p, err)
				}
				done[p] = d.Jobs
				continue
			}
			r, err := parseRecord(v.Metadata)
			if err != nil {
				return nil, err
			}
			recs[key] = r
		}
	}
	for p, r := range recs {
		r.done = done[p]
		recs[p] = r
	}
	return recs, nil
}

func parseRecord(d document.Interface) (s3Record, error) {
	var r s3Record
	if err := catalogJSON(d, &r); err != nil {
		return s3Record{}, fmt.Errorf("s3vectors: catalog record: %w", err)
	}
	return r, nil
}

// catalogJSON decodes the JSON record of a catalog entry's metadata into v.
func catalogJSON(d document.Interface, v any) error {
	m, err := decodeDoc(d)
	if err != nil {
		return err
	}
	raw, _ := m[recordKey].(string)
	return json.Unmarshal([]byte(raw), v)
}

// recordSize is the metadata size of r's catalog entry as S3 Vectors
// counts it: the JSON document holding the record as a string.
func recordSize(r s3Record) int {
	b, _ := json.Marshal(r)
	doc, _ := json.Marshal(map[string]string{recordKey: string(b)})
	return len(doc)
}

// jobIDRoom is what one more completed job adds to a record, at most.
const jobIDRoom = 64

// fitsCatalog reports whether r stays under the metadata limit of its
// catalog entry (its legacy list never grows).
func fitsCatalog(r s3Record) bool {
	return recordSize(r) <= MaxMetadataBytes
}

func (s *S3Vectors) save(ctx context.Context, phys string, r s3Record) error {
	for recordSize(r) > MaxMetadataBytes && len(r.Legacy) > 0 {
		r.Legacy = r.Legacy[1:] // the oldest go first
	}
	if err := s.putCatalog(ctx, phys, r); err != nil {
		return fmt.Errorf("s3vectors: write catalog record of %q: %w", r.Name, err)
	}
	return nil
}

// putCatalog writes v as the JSON record of the catalog entry key.
func (s *S3Vectors) putCatalog(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.api.PutVectors(ctx, &s3vectors.PutVectorsInput{
		VectorBucketName: &s.bucket, IndexName: aws.String(CatalogIndex),
		Vectors: []types.PutInputVector{{
			Key:      &key,
			Data:     &types.VectorDataMemberFloat32{Value: []float32{1}},
			Metadata: document.NewLazyDocument(map[string]any{recordKey: string(b)}),
		}},
	})
	return err
}

// update re-reads the record just before writing it back, so concurrent
// writers of one index lose as little as possible (S3 Vectors has no
// conditional write; counts can drift under concurrent writers).
func (s *S3Vectors) update(ctx context.Context, ref Ref, f func(*s3Record)) (s3Record, error) {
	r, phys, err := s.load(ctx, ref)
	if err != nil {
		return r, err
	}
	f(&r)
	r.UpdatedAt = time.Now().UTC()
	return r, s.save(ctx, phys, r)
}

// Open implements Index.
func (s *S3Vectors) Open(ctx context.Context, ref Ref, spec Spec) (Info, error) {
	if err := CheckSpec(spec); err != nil {
		return Info{}, err
	}
	r, phys, err := s.load(ctx, ref)
	if err == nil {
		if err := CheckMatch(r.info(), spec); err != nil {
			return r.info(), err
		}
		// A create that stopped between its record and its owner's list.
		return r.info(), s.listName(ctx, ref, true)
	}
	if !errors.Is(err, ErrNotFound) {
		return Info{}, err
	}
	names, err := s.ownerNames(ctx, ref.Owner)
	if err != nil {
		return Info{}, err
	}
	if len(names) >= MaxIndexesPerOwner {
		// S3 Vectors has no conditional write: two concurrent creates of one
		// owner can both pass; the bound still holds to within the concurrency.
		return Info{}, quotaError(ref, len(names))
	}
	in := &s3vectors.CreateIndexInput{
		VectorBucketName: &s.bucket, IndexName: &phys, DataType: types.DataTypeFloat32,
		Dimension: aws.Int32(int32(spec.Dimension)), DistanceMetric: types.DistanceMetric(spec.Metric),
	}
	if len(spec.NonFilterable) > 0 {
		in.MetadataConfiguration = &types.MetadataConfiguration{NonFilterableMetadataKeys: spec.NonFilterable}
	}
	if _, err := s.api.CreateIndex(ctx, in); err != nil {
		if !isCode(err, "ConflictException") {
			return Info{}, fmt.Errorf("s3vectors: create index %q: %w", ref.Name, err)
		}
		// A create that failed before its record was written: adopt the index
		// only if it has the requested shape.
		got, gerr := s.api.GetIndex(ctx, &s3vectors.GetIndexInput{VectorBucketName: &s.bucket, IndexName: &phys})
		if gerr != nil {
			return Info{}, fmt.Errorf("s3vectors: read index %q: %w", ref.Name, gerr)
		}
		have := Info{Name: ref.Name, Dimension: int(aws.ToInt32(got.Index.Dimension)), Metric: Metric(got.Index.DistanceMetric), Model: spec.Model}
		if err := CheckMatch(have, spec); err != nil {
			return Info{}, err
		}
	}
	now := time.Now().UTC()
	r = s3Record{Name: ref.Name, Owner: ref.Owner, Model: spec.Model, Dimension: spec.Dimension, Metric: spec.Metric, Normalize: spec.Normalize,
		NonFilterable: append([]string(nil), spec.NonFilterable...), CreatedAt: now, UpdatedAt: now}
	if err := s.save(ctx, phys, r); err != nil {
		return Info{}, err
	}
	return r.info(), s.listName(ctx, ref, true)
}

// Describe implements Index.
func (s *S3Vectors) Describe(ctx context.Context, ref Ref) (Info, error) {
	r, _, err := s.load(ctx, ref)
	return r.info(), err
}

// List implements Index: the owner's entry names its indexes, whose records
// are read by key; other owners' records are never read.
func (s *S3Vectors) List(ctx context.Context, owner string) ([]Info, error) {
	names, err := s.ownerNames(ctx, owner)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = PhysicalName(Ref{Owner: owner, Name: n})
	}
	recs, err := s.records(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("s3vectors: read catalog records of %s: %w", owner, err)
	}
	out := make([]Info, 0, len(names))
	for _, key := range keys {
		if r, ok := recs[key]; ok && r.Owner == owner && key == PhysicalName(Ref{Owner: owner, Name: r.Name}) {
			out = append(out, r.info())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// An owner's entry in the catalog lists the names of its indexes, so that
// list_indexes and the quota read one entry instead of every owner's
// records. Its key cannot be a physical index name ("mb-...").
type ownerEntry struct {
	Owner string   `json:"owner"`
	Names []string `json:"names"`
}

func ownerKey(owner string) string {
	sum := sha256.Sum256([]byte("owner\x00" + owner))
	return "owner-" + hex.EncodeToString(sum[:20])
}

// ownerNames reads the owner's index names. An owner whose indexes predate
// these entries gets one, built once from a scan of the catalog.
func (s *S3Vectors) ownerNames(ctx context.Context, owner string) ([]string, error) {
	if err := s.setup(ctx); err != nil {
		return nil, err
	}
	key := ownerKey(owner)
	out, err := s.api.GetVectors(ctx, &s3vectors.GetVectorsInput{
		VectorBucketName: &s.bucket, IndexName: aws.String(CatalogIndex), Keys: []string{key}, ReturnMetadata: true,
	})
	if err != nil {
		return nil, fmt.Errorf("s3vectors: read the index list of %s: %w", owner, err)
	}
	if len(out.Vectors) > 0 {
		var e ownerEntry
		if err := catalogJSON(out.Vectors[0].Metadata, &e); err != nil {
			return nil, fmt.Errorf("s3vectors: index list of %s: %w", owner, err)
		}
		if e.Owner == owner {
			return e.Names, nil
		}
	}
	names, err := s.scanOwner(ctx, owner)
	if err != nil {
		return nil, err
	}
	return names, s.saveOwner(ctx, owner, names)
}

// scanOwner lists the whole catalog for the owner's records: only for an
// owner without an entry yet.
func (s *S3Vectors) scanOwner(ctx context.Context, owner string) ([]string, error) {
	var names []string
	p := s3vectors.NewListVectorsPaginator(s.api, &s3vectors.ListVectorsInput{
		VectorBucketName: &s.bucket, IndexName: aws.String(CatalogIndex), ReturnMetadata: true,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3vectors: list catalog: %w", err)
		}
		for _, v := range page.Vectors {
			if !strings.HasPrefix(aws.ToString(v.Key), "mb-") {
				continue
			}
			r, err := parseRecord(v.Metadata)
			if err != nil {
				return nil, err
			}
			if r.Owner == owner && aws.ToString(v.Key) == PhysicalName(Ref{Owner: owner, Name: r.Name}) {
				names = append(names, r.Name)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s *S3Vectors) saveOwner(ctx context.Context, owner string, names []string) error {
	if names == nil {
		names = []string{}
	}
	if err := s.putCatalog(ctx, ownerKey(owner), ownerEntry{Owner: owner, Names: names}); err != nil {
		return fmt.Errorf("s3vectors: write the index list of %s: %w", owner, err)
	}
	return nil
}

// listName adds (in) or removes ref's name in its owner's entry.
func (s *S3Vectors) listName(ctx context.Context, ref Ref, in bool) error {
	names, err := s.ownerNames(ctx, ref.Owner)
	if err != nil {
		return err
	}
	i, found := slices.BinarySearch(names, ref.Name)
	switch {
	case in && !found:
		names = slices.Insert(names, i, ref.Name)
	case !in && found:
		names = slices.Delete(names, i, i+1)
	default:
		return nil
	}
	return s.saveOwner(ctx, ref.Owner, names)
}

// DeleteIndex implements Index.
func (s *S3Vectors) DeleteIndex(ctx context.Context, ref Ref) error {
	_, phys, err := s.load(ctx, ref)
	if err != nil {
		return err
	}
	if _, err := s.api.DeleteIndex(ctx, &s3vectors.DeleteIndexInput{VectorBucketName: &s.bucket, IndexName: &phys}); err != nil && !isCode(err, "NotFoundException") {
		return fmt.Errorf("s3vectors: delete index %q: %w", ref.Name, err)
	}
	if _, err := s.api.DeleteVectors(ctx, &s3vectors.DeleteVectorsInput{VectorBucketName: &s.bucket, IndexName: aws.String(CatalogIndex), Keys: []string{phys, doneKey(phys)}}); err != nil {
		return fmt.Errorf("s3vectors: delete catalog record of %q: %w", ref.Name, err)
	}
	return s.listName(ctx, ref, false)
}

// existing returns which keys are in the index (GetVectors, 100 at a time).
func (s *S3Vectors) existing(ctx context.Context, phys string, keys []string) (map[string]bool, error) {
	have := map[string]bool{}
	for _, chunk := range Chunks(keys, MaxGetKeys) {
		out, err := s.api.GetVectors(ctx, &s3vectors.GetVectorsInput{VectorBucketName: &s.bucket, IndexName: &phys, Keys: chunk})
		if err != nil {
			return nil, err
		}
		for _, v := range out.Vectors {
			have[aws.ToString(v.Key)] = true
		}
	}
	return have, nil
}

// Put implements Index: validated in full before the first write, then sent in
// batches of ≤ 500 vectors / ≤ 20 MiB; the record's count and filterable keys
// are updated with what was written, even when a later batch fails.
func (s *S3Vectors) Put(ctx context.Context, ref Ref, vecs []Vector) error {
	r, phys, err := s.load(ctx, ref)
	if err != nil {
		return err
	}
	if len(vecs) == 0 {
		return nil
	}
	filterable, err := CheckVectors(r.info(), vecs)
	if err != nil {
		return err
	}
	grown := r
	grown.FilterableKeys = MergeKeys(r.FilterableKeys, filterable)
	if len(grown.FilterableKeys) > len(r.FilterableKeys) && !fitsCatalog(grown) {
		// The index's record names every filterable key (filters are
		// checked against them) and lives in one catalog vector.
		return invalid("metadata: these vectors would bring index %q to %d distinct filterable metadata keys, more than its catalog entry can record (S3 Vectors allows %d bytes of metadata per vector); reuse the keys the index has (%d), or write such values under a key the index does not filter on",
			ref.Name, len(grown.FilterableKeys), MaxMetadataBytes, len(r.FilterableKeys))
	}
	var added int64
	var putErr error
	for _, batch := range Batches(vecs) {
		keys := make([]string, len(batch))
		in := make([]types.PutInputVector, len(batch))
		for i, v := range batch {
			keys[i] = v.Key
			in[i] = types.PutInputVector{Key: aws.String(v.Key), Data: &types.VectorDataMemberFloat32{Value: v.Data}}
			if len(v.Metadata) > 0 {
				in[i].Metadata = document.NewLazyDocument(v.Metadata)
			}
		}
		have, err := s.existing(ctx, phys, keys)
		if err != nil {
			putErr = fmt.Errorf("s3vectors: put into %q: %w", ref.Name, err)
			break
		}
		if _, err := s.api.PutVectors(ctx, &s3vectors.PutVectorsInput{VectorBucketName: &s.bucket, IndexName: &phys, Vectors: in}); err != nil {
			putErr = fmt.Errorf("s3vectors: put %d vectors into %q: %w", len(in), ref.Name, err)
			break
		}
		added += int64(len(batch) - len(have))
	}
	_, err = s.update(ctx, ref, func(r *s3Record) {
		r.Vectors += added
		r.FilterableKeys = MergeKeys(r.FilterableKeys, filterable)
	})
	return errors.Join(putErr, err)
}

// Get implements Index.
func (s *S3Vectors) Get(ctx context.Context, ref Ref, keys []string) ([]Vector, error) {
	_, phys, err := s.load(ctx, ref)
	if err != nil {
		return nil, err
	}
	var out []Vector
	for _, chunk := range Chunks(keys, MaxGetKeys) {
		res, err := s.api.GetVectors(ctx, &s3vectors.GetVectorsInput{VectorBucketName: &s.bucket, IndexName: &phys, Keys: chunk, ReturnData: true, ReturnMetadata: true})
		if err != nil {
			return nil, fmt.Errorf("s3vectors: get from %q: %w", ref.Name, err)
		}
		for _, v := range res.Vectors {
			m, err := decodeDoc(v.Metadata)
			if err != nil {
				return nil, err
			}
			var data []float32
			if f, ok := v.Data.(*types.VectorDataMemberFloat32); ok {
				data = f.Value
			}
			out = append(out, Vector{Key: aws.ToString(v.Key), Data: data, Metadata: m})
		}
	}
	return out, nil
}

// Delete implements Index; absent keys are ignored.
func (s *S3Vectors) Delete(ctx context.Context, ref Ref, keys []string) error {
	_, phys, err := s.load(ctx, ref)
	if err != nil {
		return err
	}
	var removed int64
	var delErr error
	for _, chunk := range Chunks(keys, MaxDeleteKeys) {
		have, err := s.existing(ctx, phys, chunk)
		if err != nil {
			delErr = fmt.Errorf("s3vectors: delete from %q: %w", ref.Name, err)
			break
		}
		if _, err := s.api.DeleteVectors(ctx, &s3vectors.DeleteVectorsInput{VectorBucketName: &s.bucket, IndexName: &phys, Keys: chunk}); err != nil {
			delErr = fmt.Errorf("s3vectors: delete %d keys from %q: %w", len(chunk), ref.Name, err)
			break
		}
		removed += int64(len(have))
	}
	_, err = s.update(ctx, ref, func(r *s3Record) { r.Vectors = max(r.Vectors-removed, 0) })
	return errors.Join(delErr, err)
}

// Query implements Index.
func (s *S3Vectors) Query(ctx context.Context, ref Ref, q Query) ([]Match, error) {
	r, phys, err := s.load(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := CheckTopK(q.K); err != nil {
		return nil, err
	}
	if len(q.Vector) != r.Dimension {
		return nil, invalid("vector: dimension %d, index %q has dimension %d", len(q.Vector), ref.Name, r.Dimension)
	}
	conds, err := ParseFilter(r.info(), q.Filter)
	if err != nil {
		return nil, err
	}
	in := &s3vectors.QueryVectorsInput{
		VectorBucketName: &s.bucket, IndexName: &phys, TopK: aws.Int32(int32(q.K)),
		QueryVector:    &types.VectorDataMemberFloat32{Value: q.Vector},
		ReturnDistance: true, ReturnMetadata: true,
	}
	if doc := S3Document(conds); doc != nil {
		in.Filter = document.NewLazyDocument(doc)
	}
	out, err := s.api.QueryVectors(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("s3vectors: query %q: %w", ref.Name, err)
	}
	res := make([]Match, len(out.Vectors))
	for i, v := range out.Vectors {
		m, err := decodeDoc(v.Metadata)
		if err != nil {
			return nil, err
		}
		d := float64(aws.ToFloat32(v.Distance))
		res[i] = Match{Key: aws.ToString(v.Key), Distance: d, Score: ScoreOf(r.Metric, d), Metadata: m}
	}
	return res, nil
}

// Commit implements Index.
func (s *S3Vectors) Commit(ctx context.Context, ref Ref, jobID string) error {
	if err := CheckJobID(jobID); err != nil {
		return err
	}
	// Two Commits of one index at once can still overwrite each other: each
	// reads its write back and writes again until its job is listed.
	for try := 0; ; try++ {
		r, phys, err := s.load(ctx, ref)
		if err != nil {
			return err
		}
		if slices.Contains(r.done, jobID) || slices.Contains(r.Legacy, jobID) {
			return nil
		}
		if try == commitTries {
			return fmt.Errorf("s3vectors: commit job %s to %q: other commits overwrote it %d times", jobID, ref.Name, commitTries)
		}
		jobs := AddCompleted(r.done, jobID)
		for len(jobs) > 1 && doneSize(jobs) > MaxMetadataBytes {
			jobs = jobs[1:] // the oldest go first
		}
		if err := s.putCatalog(ctx, doneKey(phys), doneEntry{Jobs: jobs}); err != nil {
			return fmt.Errorf("s3vectors: write the completed jobs of %q: %w", ref.Name, err)
		}
	}
}

// commitTries bounds a Commit's write-and-check rounds.
const commitTries = 5

func doneSize(jobs []string) int {
	b, _ := json.Marshal(doneEntry{Jobs: jobs})
	doc, _ := json.Marshal(map[string]string{recordKey: string(b)})
	return len(doc)
}
