package index_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors/document"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors/types"

	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/index/indextest"
	simvectors "github.com/mcpbatch/mcpbatch/shared/sim/s3vectors"
)

// newSimClient starts the S3 Vectors simulator and returns the real SDK client
// pointed at it; the simulator stops with the test.
func newSimClient(tb testing.TB) *s3vectors.Client {
	tb.Helper()
	c, stop, err := startSim()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return c
}

func startSim() (*s3vectors.Client, func(), error) {
	s := &simvectors.S3VectorsSim{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	c := s3vectors.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", ""),
	}, func(o *s3vectors.Options) { o.BaseEndpoint = aws.String(url) })
	return c, func() { s.Close() }, nil
}

func TestS3VectorsContract(t *testing.T) {
	ix := index.NewS3Vectors(newSimClient(t), "mcpbatch-test-vectors")
	ix.CreateBucket = true
	indextest.Run(t, ix)
}

func TestS3VectorsMissingBucket(t *testing.T) {
	ix := index.NewS3Vectors(newSimClient(t), "no-such-bucket")
	_, err := ix.Open(context.Background(), index.Ref{Owner: "o", Name: "n"}, index.Spec{Dimension: 2, Metric: index.Cosine, Model: "m"})
	if err == nil {
		t.Fatal("opened an index in a bucket that does not exist")
	}
}

// catalogCalls counts the calls that read the catalog index as a whole.
type catalogCalls struct {
	index.S3VectorsAPI
	lists atomic.Int64
}

func (c *catalogCalls) ListVectors(ctx context.Context, in *s3vectors.ListVectorsInput, opts ...func(*s3vectors.Options)) (*s3vectors.ListVectorsOutput, error) {
	if aws.ToString(in.IndexName) == index.CatalogIndex {
		c.lists.Add(1)
	}
	return c.S3VectorsAPI.ListVectors(ctx, in, opts...)
}

// TestS3VectorsListReadsOnlyTheOwner: list_indexes reads the caller's own
// entries, not every owner's catalog records.
func TestS3VectorsListReadsOnlyTheOwner(t *testing.T) {
	api := &catalogCalls{S3VectorsAPI: newSimClient(t)}
	ix := index.NewS3Vectors(api, "mcpbatch-test-vectors")
	ix.CreateBucket = true
	ctx := context.Background()
	sp := index.Spec{Dimension: 2, Metric: index.Cosine, Model: "m"}
	for i := range 5 {
		if _, err := ix.Open(ctx, index.Ref{Owner: fmt.Sprint("other-", i), Name: "x"}, sp); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"b", "a"} {
		if _, err := ix.Open(ctx, index.Ref{Owner: "me", Name: n}, sp); err != nil {
			t.Fatal(err)
		}
	}
	api.lists.Store(0)
	l, err := ix.List(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 2 || l[0].Name != "a" || l[1].Name != "b" || l[0].Owner != "me" {
		t.Fatalf("list %+v", l)
	}
	if n := api.lists.Load(); n != 0 {
		t.Fatalf("list_indexes listed the whole catalog (%d ListVectors calls)", n)
	}
	if err := ix.DeleteIndex(ctx, index.Ref{Owner: "me", Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if l, err := ix.List(ctx, "me"); err != nil || len(l) != 1 || l[0].Name != "b" {
		t.Fatalf("after delete: %+v, %v", l, err)
	}
}

// TestS3VectorsCatalogEntryBounded: an index whose vectors bring ever new
// filterable keys would grow its catalog record past S3 Vectors' 40 KB
// metadata limit, after which no write could record itself. The write that
// would cross the bound is refused as invalid (nothing written), and the
// index stays readable.
func TestS3VectorsCatalogEntryBounded(t *testing.T) {
	ix := index.NewS3Vectors(newSimClient(t), "mcpbatch-test-vectors")
	ix.CreateBucket = true
	ctx := context.Background()
	ref := index.Ref{Owner: "o", Name: "wide"}
	if _, err := ix.Open(ctx, ref, index.Spec{Dimension: 2, Metric: index.Cosine, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	var err error
	var i int
	for i = 0; i < 200 && err == nil; i++ {
		md := map[string]any{}
		for k := range 10 {
			md[fmt.Sprintf("%s-%04d-%02d", strings.Repeat("k", 60), i, k)] = 1.0
		}
		err = ix.Put(ctx, ref, []index.Vector{{Key: fmt.Sprint("v", i), Data: []float32{1, 0}, Metadata: md}})
	}
	if !errors.Is(err, index.ErrInvalid) || !strings.Contains(err.Error(), "filterable") {
		t.Fatalf("after %d writes: %v; want an invalid-input error about the filterable keys", i, err)
	}
	info, derr := ix.Describe(ctx, ref)
	if derr != nil {
		t.Fatalf("index unreadable after the refusal: %v", derr)
	}
	if info.Vectors != int64(i-1) {
		t.Fatalf("index counts %d vectors, %d were written", info.Vectors, i-1)
	}
}

// commitBetween runs a Commit once, just before the first catalog write of
// an index record (a count update that read the record before it).
type commitBetween struct {
	*s3vectors.Client
	commit func()
	armed  atomic.Bool
}

func (c *commitBetween) PutVectors(ctx context.Context, in *s3vectors.PutVectorsInput, opts ...func(*s3vectors.Options)) (*s3vectors.PutVectorsOutput, error) {
	if aws.ToString(in.IndexName) == index.CatalogIndex && strings.HasPrefix(aws.ToString(in.Vectors[0].Key), "mb-") && c.armed.CompareAndSwap(true, false) {
		c.commit()
	}
	return c.Client.PutVectors(ctx, in, opts...)
}

// S3 Vectors has no conditional write: a Put's count update that read the
// record before a Commit and wrote it after dropped the committed job (the
// EmbedIndexSearch flow on moto: 150 vectors, no completed job). The
// completed jobs live apart from the record the counts rewrite.
func TestS3VectorsCommitSurvivesAConcurrentCountUpdate(t *testing.T) {
	api := &commitBetween{Client: newSimClient(t)}
	ix := index.NewS3Vectors(api, "mcpbatch-test-vectors")
	ix.CreateBucket = true
	ctx := context.Background()
	ref := index.Ref{Owner: "o", Name: "docs"}
	if _, err := ix.Open(ctx, ref, index.Spec{Dimension: 2, Metric: index.Cosine, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	var commitErr error
	api.commit = func() { commitErr = ix.Commit(ctx, ref, "job-1") }
	api.armed.Store(true)
	if err := ix.Put(ctx, ref, []index.Vector{{Key: "v1", Data: []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	if commitErr != nil {
		t.Fatal(commitErr)
	}
	info, err := ix.Describe(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Committed("job-1") || info.Vectors != 1 {
		t.Fatalf("after a count update around a commit: completed %v, %d vectors; want job-1 and 1", info.CompletedJobs, info.Vectors)
	}
}

// An index record written before the completed jobs got their own entry
// (the list inside the record) still reads, and a later Commit adds to it.
func TestS3VectorsLegacyCompletedJobsRead(t *testing.T) {
	api := newSimClient(t)
	ix := index.NewS3Vectors(api, "mcpbatch-test-vectors")
	ix.CreateBucket = true
	ctx := context.Background()
	ref := index.Ref{Owner: "o", Name: "old"}
	if _, err := ix.Open(ctx, ref, index.Spec{Dimension: 2, Metric: index.Cosine, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	phys := index.PhysicalName(ref)
	legacy := `{"name":"old","owner":"o","model":"m","dimension":2,"metric":"cosine","vectors":3,` +
		`"created_at":"2026-11-01T00:00:00Z","updated_at":"2026-11-02T00:00:00Z","completed_jobs":["job-a","job-b"]}`
	if _, err := api.PutVectors(ctx, &s3vectors.PutVectorsInput{VectorBucketName: aws.String("mcpbatch-test-vectors"), IndexName: aws.String(index.CatalogIndex),
		Vectors: []types.PutInputVector{{Key: &phys, Data: &types.VectorDataMemberFloat32{Value: []float32{1}},
			Metadata: document.NewLazyDocument(map[string]any{"record": legacy})}}}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Commit(ctx, ref, "job-c"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(ctx, ref, []index.Vector{{Key: "v9", Data: []float32{0, 1}}}); err != nil {
		t.Fatal(err)
	}
	info, err := ix.Describe(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(info.CompletedJobs) != "[job-a job-b job-c]" || info.Vectors != 4 {
		t.Fatalf("legacy record: completed %v, %d vectors; want [job-a job-b job-c] and 4", info.CompletedJobs, info.Vectors)
	}
}
