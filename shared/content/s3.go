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

// Pinner is an Opener that can say what an object is without reading it and
// open exactly that version later (blob.Versioned underneath): checks refuse
// by size before reading a byte, and the bytes rendered are the bytes checked.
type Pinner interface {
	Head(ctx context.Context, uri string) (size int64, version string, err error)
	// OpenPinned reads at most size bytes and fails with ErrChanged when the
	// object is no longer that version.
	OpenPinned(ctx context.Context, uri string, size int64, version string) (io.ReadCloser, error)
}

// ErrChanged: an object was replaced after it was checked.
var ErrChanged = errors.New("changed since it was validated")

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

// Head is the object's size and version without reading it; ok false when
// the store cannot tell (then Open measures by reading).
func (s *Store) Head(ctx context.Context, uri string) (size int64, version string, ok bool, err error) {
	if s == nil || s.Opener == nil {
		return 0, "", false, errors.New("s3:// sources are not available here")
	}
	p, pins := s.Opener.(Pinner)
	if !pins {
		return 0, "", false, nil
	}
	if !s.within(uri) {
		return 0, "", false, fmt.Errorf("%s: %w", uri, ErrNotInUploadArea)
	}
	size, version, err = p.Head(ctx, uri)
	if err == nil && version == "" && size < 0 {
		return 0, "", false, nil // this store cannot tell
	}
	if err != nil {
		if errors.Is(err, ErrNotInUploadArea) || isNotFound(err) {
			return 0, "", false, fmt.Errorf("%s: %w", uri, ErrNotInUploadArea)
		}
		return 0, "", false, fmt.Errorf("%s: cannot be read: %w", uri, err)
	}
	return size, version, true, nil
}

// OpenPinned opens the checked version of uri, reading at most size bytes.
func (s *Store) OpenPinned(ctx context.Context, uri string, size int64, version string) (io.ReadCloser, error) {
	p, pins := s.Opener.(Pinner)
	if !pins || version == "" || !s.within(uri) {
		rc, _, err := s.Open(ctx, uri)
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.LimitReader(rc, size+1), rc}, nil // one byte more shows a grown object
	}
	rc, err := p.OpenPinned(ctx, uri, size, version)
	if err != nil {
		if errors.Is(err, ErrChanged) {
			return nil, fmt.Errorf("%s: %w", uri, ErrChanged)
		}
		return nil, fmt.Errorf("%s: cannot be read: %w", uri, err)
	}
	return rc, nil
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
