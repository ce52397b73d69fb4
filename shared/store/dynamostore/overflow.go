package dynamostore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// A job whose item would pass DynamoDB's item limit (a system prompt of a
// few hundred KB that does not compress, a long warning list) keeps its
// compressed document in object storage, and the item a pointer to it
// (jobRef): no job is refused for its size. Each write puts a new object, so
// a conditional put that loses its race leaves the winner's object whole.
const (
	attrJobRef = "jobRef"
	// maxItemBytes is DynamoDB's item size limit, 400 KB
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html, read 2026-12-03).
	maxItemBytes = 400 * 1024
	// overflowAt leaves room under the limit for the keys and the writer token.
	overflowAt = maxItemBytes - 4*1024
)

// Objects is the part of blob storage the store keeps large jobs in.
type Objects interface {
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
	Delete(ctx context.Context, uri string) error
}

// WithOverflow keeps the documents of jobs too large for an item, and the
// large pages of packed record sets (pages.go), under the URI prefix base
// (s3://bucket/jobs/) in objs.
func WithOverflow(objs Objects, base string) Option {
	return func(s *Store) { s.objs, s.objsBase, s.spillPages = objs, base, objs != nil }
}

// spill moves the item's document to object storage when the item is too
// large; it returns the object written ("" when none).
func (s *Store) spill(ctx context.Context, j *job.Job, item map[string]types.AttributeValue, token string) (string, error) {
	size := ItemSize(item)
	if size <= overflowAt {
		return "", nil
	}
	if s.objs == nil {
		return "", fmt.Errorf("dynamostore: job %s is %d bytes stored, over DynamoDB's item limit of %d, and no object storage is configured for large jobs", j.ID, size, maxItemBytes)
	}
	gz, ok := item[attrJobDocGz].(*types.AttributeValueMemberB)
	if !ok {
		return "", fmt.Errorf("dynamostore: job %s: a %d-byte item whose document did not compress", j.ID, size)
	}
	uri := blob.Join(s.objsBase, j.ID, strconv.FormatInt(j.Version, 10)+"-"+token+".json.gz")
	if _, err := s.objs.Put(ctx, uri, bytes.NewReader(gz.Value), "application/gzip"); err != nil {
		return "", fmt.Errorf("dynamostore: store large job %s: %w", j.ID, err)
	}
	delete(item, attrJobDocGz)
	item[attrJobRef] = str(uri)
	return uri, nil
}

// jobRef is the object an item's document is in ("" when it is inline).
func jobRef(item map[string]types.AttributeValue) string {
	if v, ok := item[attrJobRef].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// errRefGone: the object an item pointed to was replaced by a later write
// between reading the item and reading the object; read the item again.
var errRefGone = errors.New("job document replaced while read")

// decode reads a job item, fetching its document when it was spilled.
func (s *Store) decode(ctx context.Context, item map[string]types.AttributeValue) (*job.Job, error) {
	ref := jobRef(item)
	if ref == "" {
		return decodeJob(item)
	}
	if s.objs == nil {
		return nil, fmt.Errorf("dynamostore: job item %v keeps its document at %s, and no object storage is configured", item[attrPK], ref)
	}
	gz, err := s.readObject(ctx, ref, maxJobDoc)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, errRefGone
	}
	if err != nil {
		return nil, fmt.Errorf("dynamostore: read large job: %w", err)
	}
	doc, err := gunzipLimit(gz, maxJobDoc)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: decompress large job %s: %w", ref, err)
	}
	return storeutil.DecodeJob([]byte(doc))
}

// readObject is the object at uri, refused past limit bytes.
func (s *Store) readObject(ctx context.Context, uri string, limit int) ([]byte, error) {
	b, err := s.readAt(ctx, uri, 0, limit+1)
	if err == nil && len(b) > limit {
		err = fmt.Errorf("read %s: over %d bytes", uri, limit)
	}
	return b, err
}

// readAt is at most n bytes of the object at uri from offset.
func (s *Store) readAt(ctx context.Context, uri string, offset int64, n int) ([]byte, error) {
	rc, err := s.objs.Open(ctx, uri, offset)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", uri, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, int64(n)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	return b, nil
}

// dropRef deletes an object no item points to any more. A failure leaves it
// to the bucket's lifecycle rule.
func (s *Store) dropRef(ctx context.Context, ref string) {
	if ref != "" && s.objs != nil {
		_ = s.objs.Delete(ctx, ref)
	}
}
