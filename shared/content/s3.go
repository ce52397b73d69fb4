package content

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Opener opens an s3://bucket/key object for reading, with its size.
type Opener interface {
	Open(ctx context.Context, uri string) (io.ReadCloser, int64, error)
}

// ErrNotInUploadArea is the one answer for a URI outside the caller's upload
// area and for a missing object inside it, so that the error never tells a
// caller whether somebody else's key exists.
var ErrNotInUploadArea = errors.New("no such object in your upload area")

// Store resolves s3:// sources within one caller's upload area.
type Store struct {
	Opener Opener
	// Prefix is the caller's area, "s3://bucket/uploads/<caller>/".
	Prefix string
}

// Open opens uri when it lies under the prefix.
func (s *Store) Open(ctx context.Context, uri string) (io.ReadCloser, int64, error) {
	if s == nil || s.Opener == nil {
		return nil, 0, errors.New("s3:// sources are not available here")
	}
	if !s.within(uri) {
		return nil, 0, fmt.Errorf("%s: %w", uri, ErrNotInUploadArea)
	}
	rc, n, err := s.Opener.Open(ctx, uri)
	if err != nil {
		if errors.Is(err, ErrNotInUploadArea) || isNotFound(err) {
			return nil, 0, fmt.Errorf("%s: %w", uri, ErrNotInUploadArea)
		}
		return nil, 0, fmt.Errorf("%s: cannot be read: %w", uri, err)
	}
	return rc, n, nil
}

// within refuses anything that could climb out of the prefix once a service
// or a person normalises the key.
func (s *Store) within(uri string) bool {
	p := s.Prefix
	if p == "" || !strings.HasPrefix(p, "s3://") {
		return false
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	key, ok := strings.CutPrefix(uri, p)
	if !ok || key == "" {
		return false
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return !strings.ContainsAny(key, "\\?#\x00")
}

// S3GetObject is the one S3 call S3Opener needs.
type S3GetObject interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// S3Opener opens objects with GetObject; the body streams.
type S3Opener struct{ Client S3GetObject }

// Open implements Opener.
func (o S3Opener) Open(ctx context.Context, uri string) (io.ReadCloser, int64, error) {
	bucket, key, ok := strings.Cut(strings.TrimPrefix(uri, "s3://"), "/")
	if !ok || bucket == "" || key == "" {
		return nil, 0, fmt.Errorf("%q is not s3://bucket/key", uri)
	}
	out, err := o.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, 0, err
	}
	return out.Body, aws.ToInt64(out.ContentLength), nil
}

// isNotFound recognises S3's missing-object and forbidden answers (a caller
// without ListBucket gets 403 for a missing key) without naming SDK types.
func isNotFound(err error) bool {
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) {
		switch coded.ErrorCode() {
		case "NoSuchKey", "NotFound", "NoSuchBucket", "AccessDenied", "Forbidden":
			return true
		}
	}
	return false
}

// Block is an s3:// block for an object of the caller's area, an image or a
// document by what its first bytes are: how a pipeline turns each file of a
// documents folder into a record. The Checker still validates it in full.
func (s *Store) Block(ctx context.Context, uri, name string) (Block, error) {
	rc, _, err := s.Open(ctx, uri)
	if err != nil {
		return Block{}, err
	}
	defer rc.Close()
	head := make([]byte, 16)
	n, err := io.ReadFull(rc, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return Block{}, fmt.Errorf("%s: cannot be read: %w", uri, err)
	}
	kind := KindDocument
	if isImage(sniff(head[:n])) {
		kind = KindImage
	}
	return Block{Kind: kind, Source: SourceS3, URI: uri, Name: name}, nil
}
