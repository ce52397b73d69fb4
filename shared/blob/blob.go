// Package blob is the object storage port, addressed by s3://bucket/key URIs
// everywhere, with adapters for S3 (s3blob) and a local folder (fsblob, which maps
// s3://bucket/key to <root>/bucket/key). Both pass the contract suite in blobtest.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrNotFound: no object at that URI.
var ErrNotFound = errors.New("object not found")

// ErrChanged: the object is no longer the version that was asked for.
var ErrChanged = errors.New("object changed")

// Version is what an object is at one moment: its size and a tag that
// changes whenever its content is replaced (S3: the ETag).
type Version struct {
	Size int64
	Tag  string
}

// Versioned is a Store that can say what an object is without reading it,
// and read exactly that version later: a check reads a caller's upload, and
// the later read must see the same bytes even if the upload link was used
// again in between.
type Versioned interface {
	// Stat returns the object's version (ErrNotFound when absent).
	Stat(ctx context.Context, uri string) (Version, error)
	// OpenVersion reads at most v.Size bytes of the object, and fails with
	// ErrChanged when it is no longer v.
	OpenVersion(ctx context.Context, uri string, v Version) (io.ReadCloser, error)
	// OpenVersionAt is OpenVersion from byte offset on (0 <= offset <= v.Size):
	// a read cut off mid-object resumes where it stopped, on the same version.
	OpenVersionAt(ctx context.Context, uri string, v Version, offset int64) (io.ReadCloser, error)
}

// Object describes a stored object.
type Object struct {
	URI  string
	Size int64
}

// Store reads and writes objects as streams; nothing is held whole in memory.
type Store interface {
	// Put streams r to uri (multipart for big objects) and returns the bytes written.
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
	// Open streams the object from byte offset on (0 for all of it).
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
	// List lists objects under a prefix URI, in key order.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Delete removes an object; a missing object is not an error.
	Delete(ctx context.Context, uri string) error
	// PresignGet returns a URL a client can GET for ttl (fsblob returns a file:// URL).
	PresignGet(ctx context.Context, uri string, ttl time.Duration) (string, error)
}

// ParseURI splits s3://bucket/key.
func ParseURI(uri string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("uri %q: want s3://bucket/key", uri)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("uri %q: no bucket", uri)
	}
	return bucket, key, nil
}

// Join appends path elements to a URI with single slashes.
func Join(uri string, elems ...string) string {
	out := strings.TrimRight(uri, "/")
	for _, e := range elems {
		out += "/" + strings.Trim(e, "/")
	}
	return out
}
