package s3blob_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/blob/blobtest"
	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
)

var srv *motoserver.Server

func TestMain(m *testing.M) { os.Exit(motoserver.Main(m, &srv)) }

func newClient(t *testing.T, bucket string) *s3.Client {
	t.Helper()
	c := s3.NewFromConfig(srv.Config(), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(srv.Endpoint)
		o.UsePathStyle = true
	})
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return c
}

func TestContract(t *testing.T) {
	c := newClient(t, "mcpbatch-contract")
	blobtest.Run(t, func(t *testing.T) blob.Store { return s3blob.New(c, s3blob.Options{}) }, "mcpbatch-contract")
}

// countingClient counts the multipart calls the upload manager makes.
type countingClient struct {
	*s3.Client
	creates, parts atomic.Int32
}

func (c *countingClient) CreateMultipartUpload(ctx context.Context, in *s3.CreateMultipartUploadInput, opts ...func(*s3.Options)) (*s3.CreateMultipartUploadOutput, error) {
	c.creates.Add(1)
	return c.Client.CreateMultipartUpload(ctx, in, opts...)
}

func (c *countingClient) UploadPart(ctx context.Context, in *s3.UploadPartInput, opts ...func(*s3.Options)) (*s3.UploadPartOutput, error) {
	c.parts.Add(1)
	return c.Client.UploadPart(ctx, in, opts...)
}

func TestBigObjectsUseMultipart(t *testing.T) {
	tests := []struct {
		name      string
		size      int64
		wantParts int32
	}{
		{"below one part: single PutObject", 3 << 20, 0},
		{"12 MiB: two 8 MiB parts", blobtest.BigObjectBytes, 2},
	}
	c := &countingClient{Client: newClient(t, "mcpbatch-multipart")}
	s := s3blob.NewFromClients(c, s3.NewPresignClient(c.Client), s3blob.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.creates.Store(0)
			c.parts.Store(0)
			n, err := s.Put(context.Background(), "s3://mcpbatch-multipart/"+tt.name, blobtest.NewGenerator(1, tt.size), "")
			if err != nil || n != tt.size {
				t.Fatalf("Put = %d, %v", n, err)
			}
			if c.parts.Load() != tt.wantParts || (tt.wantParts > 0) != (c.creates.Load() == 1) {
				t.Fatalf("multipart uploads %d, parts %d; want parts %d", c.creates.Load(), c.parts.Load(), tt.wantParts)
			}
		})
	}
}

// TestVersionPinned: OpenVersion reads the version Stat saw; once the object
// is replaced, S3's If-Match refuses (ErrChanged), and a deleted one is
// ErrNotFound.
func TestVersionPinned(t *testing.T) {
	c := newClient(t, "mcpbatch-pinned")
	st := s3blob.New(c, s3blob.Options{})
	ctx := context.Background()
	uri := "s3://mcpbatch-pinned/in.jsonl"
	if _, err := st.Put(ctx, uri, strings.NewReader("first\n"), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	v, err := st.Stat(ctx, uri)
	if err != nil || v.Size != 6 || v.Tag == "" {
		t.Fatalf("stat: %+v, %v", v, err)
	}
	rc, err := st.OpenVersion(ctx, uri, v)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "first\n" {
		t.Fatalf("read %q", b)
	}
	if _, err := st.Put(ctx, uri, strings.NewReader("second\n"), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.OpenVersion(ctx, uri, v); !errors.Is(err, blob.ErrChanged) {
		t.Fatalf("after a replace: %v, want ErrChanged", err)
	}
	if err := st.Delete(ctx, uri); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(ctx, uri); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("stat of a deleted object: %v", err)
	}
}
