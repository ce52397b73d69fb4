package batch

import (
	"context"
	"errors"
	"io"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// BlobOpener is content.Opener over the service's object storage: S3 on AWS,
// fsblob under make dev. Sizes are not asked for (0): the Checker measures the
// bytes as it reads them.
type BlobOpener struct{ Blobs service.Blobs }

// Open implements content.Opener.
func (o BlobOpener) Open(ctx context.Context, uri string) (io.ReadCloser, int64, error) {
	rc, err := o.Blobs.Open(ctx, uri, 0)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, 0, content.ErrNotInUploadArea
	}
	if err != nil {
		return nil, 0, err
	}
	return rc, 0, nil
}

// Head implements content.Pinner when the store can pin versions (S3 and
// fsblob can); otherwise size -1 and no version, and the Checker measures
// by reading.
func (o BlobOpener) Head(ctx context.Context, uri string) (int64, string, error) {
	v, ok := o.Blobs.(blob.Versioned)
	if !ok {
		return -1, "", nil
	}
	ver, err := v.Stat(ctx, uri)
	if errors.Is(err, blob.ErrNotFound) {
		return 0, "", content.ErrNotInUploadArea
	}
	return ver.Size, ver.Tag, err
}

// OpenPinned implements content.Pinner.
func (o BlobOpener) OpenPinned(ctx context.Context, uri string, size int64, version string) (io.ReadCloser, error) {
	v, ok := o.Blobs.(blob.Versioned)
	if !ok {
		return nil, errors.New("this store cannot pin an object's version")
	}
	rc, err := v.OpenVersion(ctx, uri, blob.Version{Size: size, Tag: version})
	switch {
	case errors.Is(err, blob.ErrChanged):
		return nil, content.ErrChanged
	case errors.Is(err, blob.ErrNotFound):
		return nil, content.ErrChanged // deleted since the check
	}
	return rc, err
}

// UploadArea is the caller's upload prefix, where create_upload places
// objects: the only place a record's s3:// source may point.
func UploadArea(bucket, owner string) string {
	return blob.Join(bucket, "uploads", service.OwnerTag(owner)) + "/"
}
