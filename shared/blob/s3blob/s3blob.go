// Package s3blob is the blob.Store port over Amazon S3 (aws-sdk-go-v2).
//
// Put streams through the S3 upload manager: bodies bigger than one part go up
// as a multipart upload with a bounded number of parts in flight, so memory is
// about PartSize × Concurrency whatever the object size.
package s3blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/mcpbatch/mcpbatch/shared/blob"
)

var _ blob.Store = (*Store)(nil)

const (
	// DefaultPartSize is the multipart part size: big enough that a 1 GB Bedrock
	// output is ~120 parts, small enough that parts in flight stay a few tens of MiB.
	DefaultPartSize = 8 << 20
	// DefaultConcurrency bounds the parts of one upload in flight.
	DefaultConcurrency = 4
	// maxPresignTTL is S3's limit for SigV4 presigned URLs.
	maxPresignTTL = 7 * 24 * time.Hour
)

// Client is the part of *s3.Client the store uses (the upload manager needs the multipart calls).
type Client interface {
	manager.UploadAPIClient
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

// Presigner is the part of *s3.PresignClient the store uses.
type Presigner interface {
	PresignGetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error)
}

// Uploader is the part of *manager.Uploader the store uses.
type Uploader interface {
	Upload(ctx context.Context, in *s3.PutObjectInput, opts ...func(*manager.Uploader)) (*manager.UploadOutput, error)
}

// Options tune uploads; zero values take the defaults.
type Options struct {
	PartSize    int64
	Concurrency int
}

// Store reads and writes objects in S3.
type Store struct {
	Client    Client
	Presigner Presigner
	Uploader  Uploader
}

// New builds a Store over an S3 client.
func New(c *s3.Client, o Options) *Store {
	return NewFromClients(c, s3.NewPresignClient(c), o)
}

// NewFromClients builds a Store over any client and presigner (tests wrap them to count calls).
func NewFromClients(c Client, p Presigner, o Options) *Store {
	if o.PartSize <= 0 {
		o.PartSize = DefaultPartSize
	}
	o.PartSize = max(o.PartSize, manager.MinUploadPartSize)
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	// The upload manager is deprecated in favour of feature/s3/transfermanager, which
	// is not in go.mod yet; it is the streaming multipart uploader the SDK ships today.
	up := manager.NewUploader(c, func(u *manager.Uploader) { //nolint:staticcheck // see above
		u.PartSize = o.PartSize
		u.Concurrency = o.Concurrency
	})
	return &Store{Client: c, Presigner: p, Uploader: up}
}

// Put streams r to uri. A failed upload leaves no object (a multipart upload is aborted).
func (s *Store) Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error) {
	bucket, key, err := parse(uri)
	if err != nil {
		return 0, err
	}
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	var size func() int64
	if rs, ok := r.(interface {
		io.ReadSeeker
		io.ReaderAt
	}); ok {
		// Seekable bodies (strings.Reader, files) are uploaded in place, without
		// copying into part buffers, so keep the concrete type visible to the manager.
		pos, err := rs.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, fmt.Errorf("s3blob: put %s: %w", uri, err)
		}
		end, err := rs.Seek(0, io.SeekEnd)
		if err != nil {
			return 0, fmt.Errorf("s3blob: put %s: %w", uri, err)
		}
		if _, err := rs.Seek(pos, io.SeekStart); err != nil {
			return 0, fmt.Errorf("s3blob: put %s: %w", uri, err)
		}
		in.Body = rs
		size = func() int64 { return end - pos }
	} else {
		cr := &countingReader{r: r}
		in.Body = cr
		size = func() int64 { return cr.n }
	}
	if _, err := s.Uploader.Upload(ctx, in); err != nil {
		return 0, fmt.Errorf("s3blob: put %s: %w", uri, err)
	}
	return size(), nil
}

// Open reads the object from offset on with a Range request. An offset at or past
// the end reads nothing, as with a file.
func (s *Store) Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error) {
	bucket, key, err := parse(uri)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("s3blob: open %s: negative offset %d", uri, offset)
	}
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if offset > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", offset))
	}
	out, err := s.Client.GetObject(ctx, in)
	if err != nil {
		if notFound(err) {
			return nil, fmt.Errorf("s3blob: open %s: %w", uri, blob.ErrNotFound)
		}
		if offset > 0 && code(err) == "InvalidRange" {
			// The object exists (else NoSuchKey) and offset is past its end:
			// a checkpoint at the very end of a file resumes to nothing.
			return io.NopCloser(strings.NewReader("")), nil
		}
		return nil, fmt.Errorf("s3blob: open %s at %d: %w", uri, offset, err)
	}
	return out.Body, nil
}

var _ blob.Versioned = (*Store)(nil)

// Stat implements blob.Versioned with HeadObject: size and ETag.
func (s *Store) Stat(ctx context.Context, uri string) (blob.Version, error) {
	bucket, key, err := parse(uri)
	if err != nil {
		return blob.Version{}, err
	}
	out, err := s.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		if notFound(err) {
			return blob.Version{}, fmt.Errorf("s3blob: stat %s: %w", uri, blob.ErrNotFound)
		}
		return blob.Version{}, fmt.Errorf("s3blob: stat %s: %w", uri, err)
	}
	return blob.Version{Size: aws.ToInt64(out.ContentLength), Tag: aws.ToString(out.ETag)}, nil
}

// OpenVersion implements blob.Versioned: GetObject with If-Match on the ETag
// (S3 answers 412 once the object was replaced) and a Range of v.Size bytes,
// so a bigger replacement is never read past what was checked.
func (s *Store) OpenVersion(ctx context.Context, uri string, v blob.Version) (io.ReadCloser, error) {
	return s.OpenVersionAt(ctx, uri, v, 0)
}

// OpenVersionAt implements blob.Versioned: a ranged GET from offset to the
// version's last byte, conditional on its ETag.
func (s *Store) OpenVersionAt(ctx context.Context, uri string, v blob.Version, offset int64) (io.ReadCloser, error) {
	bucket, key, err := parse(uri)
	if err != nil {
		return nil, err
	}
	if offset < 0 || offset > v.Size {
		return nil, fmt.Errorf("s3blob: open %s at %d: outside the version's %d bytes", uri, offset, v.Size)
	}
	if v.Size-offset <= 0 {
		return io.NopCloser(strings.NewReader("")), nil
	}
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Range: aws.String(fmt.Sprintf("bytes=%d-%d", offset, v.Size-1))}
	if v.Tag != "" {
		in.IfMatch = aws.String(v.Tag)
	}
	out, err := s.Client.GetObject(ctx, in)
	if err != nil {
		switch c := code(err); {
		case c == "PreconditionFailed" || c == "InvalidRange":
			return nil, fmt.Errorf("s3blob: open %s: %w", uri, blob.ErrChanged)
		case notFound(err):
			return nil, fmt.Errorf("s3blob: open %s: %w", uri, blob.ErrNotFound)
		}
		return nil, fmt.Errorf("s3blob: open %s: %w", uri, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(out.Body, v.Size-offset), out.Body}, nil
}

// List pages through ListObjectsV2 under the prefix.
func (s *Store) List(ctx context.Context, prefix string) ([]blob.Object, error) {
	bucket, key, err := blob.ParseURI(prefix)
	if err != nil {
		return nil, fmt.Errorf("s3blob: list: %w", err)
	}
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket)}
	if key != "" {
		in.Prefix = aws.String(key)
	}
	var out []blob.Object
	p := s3.NewListObjectsV2Paginator(s.Client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3blob: list %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, blob.Object{URI: "s3://" + bucket + "/" + aws.ToString(o.Key), Size: aws.ToInt64(o.Size)})
		}
	}
	// S3 lists in key order already; sorting keeps that true for S3-compatible stand-ins.
	slices.SortFunc(out, func(a, b blob.Object) int { return strings.Compare(a.URI, b.URI) })
	return out, nil
}

// Delete removes the object; S3 itself answers 204 for a missing key.
func (s *Store) Delete(ctx context.Context, uri string) error {
	bucket, key, err := parse(uri)
	if err != nil {
		return err
	}
	if _, err := s.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		if notFound(err) {
			return nil
		}
		return fmt.Errorf("s3blob: delete %s: %w", uri, err)
	}
	return nil
}

// PresignGet returns a SigV4 presigned GET URL valid for ttl (at most 7 days).
func (s *Store) PresignGet(ctx context.Context, uri string, ttl time.Duration) (string, error) {
	bucket, key, err := parse(uri)
	if err != nil {
		return "", err
	}
	if ttl <= 0 || ttl > maxPresignTTL {
		return "", fmt.Errorf("s3blob: presign %s: ttl %s outside (0, %s]", uri, ttl, maxPresignTTL)
	}
	// The link downloads under the object's own name (an export opened from
	// the console is a file to save, not a page to show).
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(key)})
	req, err := s.Presigner.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		ResponseContentDisposition: aws.String(disposition)}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("s3blob: presign %s: %w", uri, err)
	}
	return req.URL, nil
}

// parse splits an object URI and refuses an empty key.
func parse(uri string) (bucket, key string, err error) {
	bucket, key, err = blob.ParseURI(uri)
	if err != nil {
		return "", "", fmt.Errorf("s3blob: %w", err)
	}
	if key == "" {
		return "", "", fmt.Errorf("s3blob: %s: empty key", uri)
	}
	return bucket, key, nil
}

// notFound reports a missing key or bucket: S3 says NoSuchKey on GET, NotFound
// (a bare 404) on HEAD, and NoSuchBucket when the bucket is gone.
func notFound(err error) bool {
	switch code(err) {
	case "NoSuchKey", "NotFound", "NoSuchBucket":
		return true
	}
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// countingReader counts the bytes a non-seekable body yields.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
