package index_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors"

	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/index/indextest"
	"github.com/mcpbatch/mcpbatch/shared/sim"
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
	s := &sim.S3VectorsSim{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
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
