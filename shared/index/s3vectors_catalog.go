package index

// The S3Vectors adapter's catalog: one record per index (CatalogIndex), each
// owner's list of names, and each index's completed jobs, all kept as
// 1-dimension vectors of one index in the same bucket.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors/document"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors/types"
)

// CatalogIndex is the index, inside the vector bucket, where the S3Vectors
// adapter keeps one record per index (owner, name, model, counts) and its
// completed jobs (doneEntry): S3 Vectors has no place for such metadata on an index, and keeping it in
// the same bucket needs no other store or permission. Each record is a
// 1-dimension vector whose key is the physical index name, with the record as
// JSON in a non-filterable metadata key.
const CatalogIndex = "mcpbatch-catalog"

const recordKey = "record"

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
