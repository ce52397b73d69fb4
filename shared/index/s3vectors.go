package index

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
