package s3vectors_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors/document"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors/types"
	"github.com/aws/smithy-go"

	simvectors "github.com/mcpbatch/mcpbatch/shared/sim/s3vectors"
)

func startS3V(tb testing.TB) (*s3vectors.Client, string) {
	tb.Helper()
	s := &simvectors.S3VectorsSim{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	c := s3vectors.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *s3vectors.Options) { o.BaseEndpoint = aws.String(url) })
	return c, url
}

func apiErr(t *testing.T, err error, code string, words ...string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	for _, w := range append(words, "[simulated S3 Vectors]") {
		if !strings.Contains(ae.ErrorMessage(), w) {
			t.Fatalf("message %q lacks %q", ae.ErrorMessage(), w)
		}
	}
}

func f32(v ...float32) types.VectorData { return &types.VectorDataMemberFloat32{Value: v} }

func setupIndex(t *testing.T, c *s3vectors.Client, metric types.DistanceMetric, dim int32, nonFilt ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateVectorBucket(ctx, &s3vectors.CreateVectorBucketInput{VectorBucketName: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	in := &s3vectors.CreateIndexInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String("idx"),
		DataType: types.DataTypeFloat32, Dimension: aws.Int32(dim), DistanceMetric: metric}
	if len(nonFilt) > 0 {
		in.MetadataConfiguration = &types.MetadataConfiguration{NonFilterableMetadataKeys: nonFilt}
	}
	if _, err := c.CreateIndex(ctx, in); err != nil {
		t.Fatal(err)
	}
}

func TestS3VectorsSimBucketsAndIndexes(t *testing.T) {
	c, url := startS3V(t)
	ctx := context.Background()
	resp, err := http.Post(url+"/Nope", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Simulator") == "" {
		t.Fatal("answer does not say it is a simulator")
	}
	for _, c2 := range []struct{ name, word string }{{"ab", "3 to 63"}, {"Upper", "lowercase"}, {"-abc", "begin and end"}, {"a.b.c", "hyphens"}} {
		_, err := c.CreateVectorBucket(ctx, &s3vectors.CreateVectorBucketInput{VectorBucketName: aws.String(c2.name)})
		apiErr(t, err, "ValidationException", c2.word)
	}
	setupIndex(t, c, types.DistanceMetricCosine, 4, "text")
	_, err = c.CreateVectorBucket(ctx, &s3vectors.CreateVectorBucketInput{VectorBucketName: aws.String("bkt")})
	apiErr(t, err, "ConflictException", "bkt")
	_, err = c.CreateIndex(ctx, &s3vectors.CreateIndexInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String("idx"),
		DataType: types.DataTypeFloat32, Dimension: aws.Int32(4), DistanceMetric: types.DistanceMetricCosine})
	apiErr(t, err, "ConflictException", "idx")
	for _, c2 := range []struct {
		name   string
		dim    int32
		metric types.DistanceMetric
		nonF   []string
		word   string
	}{
		{"ix0", 0, types.DistanceMetricCosine, nil, "between 1 and 4096"},
		{"ix1", 4097, types.DistanceMetricCosine, nil, "between 1 and 4096"},
		{"ix2", 4, "dot", nil, "cosine or euclidean"},
		{"ix3", 4, types.DistanceMetricCosine, strings.Split("a,b,c,d,e,f,g,h,i,j,k", ","), "1 to 10"},
		{"Ix4", 4, types.DistanceMetricCosine, nil, "lowercase"},
	} {
		in := &s3vectors.CreateIndexInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String(c2.name),
			DataType: types.DataTypeFloat32, Dimension: aws.Int32(c2.dim), DistanceMetric: c2.metric}
		if c2.nonF != nil {
			in.MetadataConfiguration = &types.MetadataConfiguration{NonFilterableMetadataKeys: c2.nonF}
		}
		_, err := c.CreateIndex(ctx, in)
		apiErr(t, err, "ValidationException", c2.word)
	}
	_, err = c.CreateIndex(ctx, &s3vectors.CreateIndexInput{VectorBucketName: aws.String("nobucket"), IndexName: aws.String("idx"),
		DataType: types.DataTypeFloat32, Dimension: aws.Int32(4), DistanceMetric: types.DistanceMetricCosine})
	apiErr(t, err, "NotFoundException", "nobucket")

	got, err := c.GetIndex(ctx, &s3vectors.GetIndexInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String("idx")})
	if err != nil {
		t.Fatal(err)
	}
	ix := got.Index
	if aws.ToInt32(ix.Dimension) != 4 || ix.DistanceMetric != types.DistanceMetricCosine || ix.DataType != types.DataTypeFloat32 ||
		fmt.Sprint(ix.MetadataConfiguration.NonFilterableMetadataKeys) != "[text]" || ix.CreationTime == nil || ix.CreationTime.IsZero() ||
		aws.ToString(ix.IndexArn) != "arn:aws:s3vectors:us-east-1:000000000000:bucket/bkt/index/idx" {
		t.Fatalf("GetIndex = %+v", ix)
	}
	byArn, err := c.GetIndex(ctx, &s3vectors.GetIndexInput{IndexArn: ix.IndexArn})
	if err != nil || aws.ToString(byArn.Index.IndexName) != "idx" {
		t.Fatalf("GetIndex by ARN: %v %+v", err, byArn)
	}
	for i := 0; i < 5; i++ {
		if _, err := c.CreateIndex(ctx, &s3vectors.CreateIndexInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String(fmt.Sprintf("p-%d", i)),
			DataType: types.DataTypeFloat32, Dimension: aws.Int32(2), DistanceMetric: types.DistanceMetricEuclidean}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	p := s3vectors.NewListIndexesPaginator(c, &s3vectors.ListIndexesInput{VectorBucketName: aws.String("bkt"), Prefix: aws.String("p-"), MaxResults: aws.Int32(2)})
	pages := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range page.Indexes {
			names = append(names, aws.ToString(s.IndexName))
		}
	}
	if fmt.Sprint(names) != "[p-0 p-1 p-2 p-3 p-4]" || pages != 3 {
		t.Fatalf("ListIndexes pages=%d names=%v", pages, names)
	}
	if _, err := c.DeleteIndex(ctx, &s3vectors.DeleteIndexInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String("p-0")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetIndex(ctx, &s3vectors.GetIndexInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String("p-0")})
	apiErr(t, err, "NotFoundException", "p-0")
}

func TestS3VectorsSimVectors(t *testing.T) {
	c, _ := startS3V(t)
	ctx := context.Background()
	setupIndex(t, c, types.DistanceMetricEuclidean, 2, "text")
	b, ix := aws.String("bkt"), aws.String("idx")
	put := func(vs ...types.PutInputVector) error {
		_, err := c.PutVectors(ctx, &s3vectors.PutVectorsInput{VectorBucketName: b, IndexName: ix, Vectors: vs})
		return err
	}
	vec := func(k string, meta map[string]any, d ...float32) types.PutInputVector {
		v := types.PutInputVector{Key: aws.String(k), Data: f32(d...)}
		if meta != nil {
			v.Metadata = document.NewLazyDocument(meta)
		}
		return v
	}
	if err := put(
		vec("a", map[string]any{"genre": "doc", "year": 2020, "tags": []any{"x", "y"}, "text": "long"}, 0, 0),
		vec("b", map[string]any{"genre": "drama", "year": 2023}, 3, 4),
		vec("c", map[string]any{"genre": "doc", "year": 2025}, 1, 0),
		vec("d", nil, 0, 10),
	); err != nil {
		t.Fatal(err)
	}
	many := make([]types.PutInputVector, 501)
	for i := range many {
		many[i] = vec(fmt.Sprint(i), nil, 1, 1)
	}
	big := map[string]any{}
	for i := 0; i < 51; i++ {
		big[fmt.Sprint("k", i)] = i
	}
	for _, c2 := range []struct {
		vs   []types.PutInputVector
		word string
	}{
		{many, "1 to 500"},
		{[]types.PutInputVector{vec("x", nil, 1, 2, 3)}, "dimension 3"},
		{[]types.PutInputVector{vec("x", big, 1, 2)}, "51 keys"},
		{[]types.PutInputVector{vec("x", map[string]any{"f": strings.Repeat("z", 2100)}, 1, 2)}, "filterable metadata is"},
		{[]types.PutInputVector{vec("x", map[string]any{"text": strings.Repeat("z", 41000)}, 1, 2)}, "limit 40960"},
		{[]types.PutInputVector{vec("x", map[string]any{"o": map[string]any{"n": 1}}, 1, 2)}, "string, number, boolean"},
		{[]types.PutInputVector{vec("x", nil, 1, 2), vec("x", nil, 1, 2)}, "duplicated"},
		{[]types.PutInputVector{vec(strings.Repeat("k", 1025), nil, 1, 2)}, "1 to 1024"},
		{[]types.PutInputVector{vec("x", nil, float32(math.NaN()), 2)}, "malformed"},
	} {
		apiErr(t, put(c2.vs...), "ValidationException", c2.word)
	}
	gv, err := c.GetVectors(ctx, &s3vectors.GetVectorsInput{VectorBucketName: b, IndexName: ix, Keys: []string{"a", "zz"}, ReturnData: true, ReturnMetadata: true})
	if err != nil || len(gv.Vectors) != 1 {
		t.Fatalf("GetVectors: %v %+v", err, gv)
	}
	if d := gv.Vectors[0].Data.(*types.VectorDataMemberFloat32).Value; fmt.Sprint(d) != "[0 0]" {
		t.Fatalf("data %v", d)
	}
	query := func(k int32, filter any) ([]string, []float32, error) {
		in := &s3vectors.QueryVectorsInput{VectorBucketName: b, IndexName: ix, TopK: aws.Int32(k), QueryVector: f32(0, 0), ReturnDistance: true}
		if filter != nil {
			in.Filter = document.NewLazyDocument(filter)
		}
		out, err := c.QueryVectors(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		var keys []string
		var ds []float32
		for _, v := range out.Vectors {
			keys = append(keys, aws.ToString(v.Key))
			ds = append(ds, aws.ToFloat32(v.Distance))
		}
		return keys, ds, nil
	}
	keys, ds, err := query(10, nil)
	if err != nil || fmt.Sprint(keys) != "[a c b d]" || fmt.Sprint(ds) != "[0 1 5 10]" {
		t.Fatalf("query: %v %v %v", keys, ds, err)
	}
	for _, c2 := range []struct {
		f    any
		want string
	}{
		{map[string]any{"genre": "doc"}, "[a c]"},
		{map[string]any{"genre": map[string]any{"$ne": "doc"}}, "[b]"},
		{map[string]any{"year": map[string]any{"$gte": 2023}}, "[c b]"},
		{map[string]any{"year": map[string]any{"$lt": 2023}}, "[a]"},
		{map[string]any{"genre": map[string]any{"$in": []any{"drama", "none"}}}, "[b]"},
		{map[string]any{"genre": map[string]any{"$nin": []any{"drama"}}}, "[a c]"},
		{map[string]any{"tags": "y"}, "[a]"},
		{map[string]any{"genre": map[string]any{"$exists": false}}, "[d]"},
		{map[string]any{"$or": []any{map[string]any{"year": 2020}, map[string]any{"year": 2023}}}, "[a b]"},
		{map[string]any{"$and": []any{map[string]any{"genre": "doc"}, map[string]any{"year": map[string]any{"$gt": 2020}}}}, "[c]"},
	} {
		keys, _, err := query(10, c2.f)
		if err != nil || fmt.Sprint(keys) != c2.want {
			t.Fatalf("filter %v: %v %v, want %s", c2.f, keys, err, c2.want)
		}
	}
	for _, c2 := range []struct {
		f    any
		word string
	}{
		{map[string]any{"text": "long"}, "non-filterable"},
		{map[string]any{"genre": map[string]any{"$regex": "d"}}, "unknown operator"},
		{map[string]any{"$or": []any{}}, "non-empty"},
		{map[string]any{"year": map[string]any{"$gt": "x"}}, "takes a number"},
	} {
		_, _, err := query(3, c2.f)
		apiErr(t, err, "ValidationException", c2.word)
	}
	for _, k := range []int32{0, 101} {
		_, _, err := query(k, nil)
		apiErr(t, err, "ValidationException", "topK", "100")
	}
	_, err = c.QueryVectors(ctx, &s3vectors.QueryVectorsInput{VectorBucketName: b, IndexName: ix, TopK: aws.Int32(1), QueryVector: f32(1)})
	apiErr(t, err, "ValidationException", "dimension 1")
	if _, err := c.DeleteVectors(ctx, &s3vectors.DeleteVectorsInput{VectorBucketName: b, IndexName: ix, Keys: []string{"a", "nope"}}); err != nil {
		t.Fatal(err)
	}
	keys, _, _ = query(10, nil)
	if fmt.Sprint(keys) != "[c b d]" {
		t.Fatalf("after delete: %v", keys)
	}
	// paging and segments of ListVectors
	var batch []types.PutInputVector
	for i := 0; i < 25; i++ {
		batch = append(batch, vec(fmt.Sprintf("p%02d", i), nil, 1, float32(i)))
	}
	if err := put(batch...); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for seg := int32(0); seg < 3; seg++ {
		p := s3vectors.NewListVectorsPaginator(c, &s3vectors.ListVectorsInput{VectorBucketName: b, IndexName: ix, MaxResults: aws.Int32(4), SegmentCount: aws.Int32(3), SegmentIndex: seg})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range page.Vectors {
				seen[aws.ToString(v.Key)]++
			}
		}
	}
	if len(seen) != 28 {
		t.Fatalf("listed %d distinct keys, want 28: %v", len(seen), seen)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s listed %d times", k, n)
		}
	}
	_, err = c.ListVectors(ctx, &s3vectors.ListVectorsInput{VectorBucketName: b, IndexName: ix, MaxResults: aws.Int32(1001)})
	apiErr(t, err, "ValidationException", "1000")
}

func TestS3VectorsSimCosine(t *testing.T) {
	c, _ := startS3V(t)
	ctx := context.Background()
	setupIndex(t, c, types.DistanceMetricCosine, 2)
	_, err := c.PutVectors(ctx, &s3vectors.PutVectorsInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String("idx"),
		Vectors: []types.PutInputVector{{Key: aws.String("z"), Data: f32(0, 0)}}})
	apiErr(t, err, "ValidationException", "zero vector")
	if _, err := c.PutVectors(ctx, &s3vectors.PutVectorsInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String("idx"),
		Vectors: []types.PutInputVector{{Key: aws.String("x"), Data: f32(2, 0)}, {Key: aws.String("y"), Data: f32(0, 5)}, {Key: aws.String("xy"), Data: f32(1, 1)}}}); err != nil {
		t.Fatal(err)
	}
	out, err := c.QueryVectors(ctx, &s3vectors.QueryVectorsInput{VectorBucketName: aws.String("bkt"), IndexName: aws.String("idx"),
		TopK: aws.Int32(3), QueryVector: f32(1, 0), ReturnDistance: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		k string
		d float64
	}{{"x", 0}, {"xy", 1 - 1/math.Sqrt2}, {"y", 1}}
	if out.DistanceMetric != types.DistanceMetricCosine || len(out.Vectors) != 3 {
		t.Fatalf("%+v", out)
	}
	for i, w := range want {
		v := out.Vectors[i]
		if aws.ToString(v.Key) != w.k || math.Abs(float64(aws.ToFloat32(v.Distance))-w.d) > 1e-6 {
			t.Fatalf("rank %d: %s %v, want %s %v", i, aws.ToString(v.Key), aws.ToFloat32(v.Distance), w.k, w.d)
		}
		if v.Metadata != nil {
			t.Fatalf("metadata returned without returnMetadata")
		}
	}
}

// TestS3VectorsSimPayloadLimit sends a PutVectors body over 20 MiB.
func TestS3VectorsSimPayloadLimit(t *testing.T) {
	_, url := startS3V(t)
	body := `{"vectorBucketName":"bkt","indexName":"idx","vectors":[{"key":"a","metadata":{"text":"` + strings.Repeat("x", 21<<20) + `"}}]}`
	resp, err := http.Post(url+"/PutVectors", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("X-Amzn-ErrorType") != "ValidationException" || !strings.Contains(string(msg), "20 MiB") {
		t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), msg)
	}
}
