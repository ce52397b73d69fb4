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
