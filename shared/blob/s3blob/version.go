package s3blob

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/blob"
)

var _ blob.Versioned = (*Store)(nil)

// Stat implements blob.Versioned with HeadObject: the size and the ETag,
// which S3 changes whenever the object is replaced.
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
// (S3 answers 412 PreconditionFailed once the object was replaced), and at
// most v.Size bytes read.
func (s *Store) OpenVersion(ctx context.Context, uri string, v blob.Version) (io.ReadCloser, error) {
	bucket, key, err := parse(uri)
	if err != nil {
		return nil, err
	}
	out, err := s.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), IfMatch: aws.String(v.Tag)})
	if err != nil {
		switch {
		case notFound(err):
			return nil, fmt.Errorf("s3blob: open %s: %w", uri, blob.ErrNotFound)
		case code(err) == "PreconditionFailed":
			return nil, fmt.Errorf("s3blob: open %s: %w", uri, blob.ErrChanged)
		}
		return nil, fmt.Errorf("s3blob: open %s: %w", uri, err)
	}
	if aws.ToInt64(out.ContentLength) != v.Size {
		out.Body.Close()
		return nil, fmt.Errorf("s3blob: open %s: %d bytes, checked %d: %w", uri, aws.ToInt64(out.ContentLength), v.Size, blob.ErrChanged)
	}
	return limited{Reader: io.LimitReader(out.Body, v.Size), Closer: out.Body}, nil
}

type limited struct {
	io.Reader
	io.Closer
}
