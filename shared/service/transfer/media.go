package transfer

import (
	"maps"
	"slices"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// MediaTypes are the content types create_upload takes for images and
// documents a record references as s3://, with the extension the object gets.
// The bytes decide the format at submit (a name or type is never trusted).
var MediaTypes = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
	"application/pdf": ".pdf", "text/csv": ".csv", "text/html": ".html", "text/plain": ".txt", "text/markdown": ".md",
	"application/msword": ".doc", "application/vnd.ms-excel": ".xls",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":       ".xlsx",
}

// MediaTypeList is MediaTypes' keys, sorted, for messages.
func MediaTypeList() string {
	return strings.Join(slices.Sorted(maps.Keys(MediaTypes)), ", ")
}

// NewMediaUpload names a fresh place for one image or document under the
// owner's upload area; records reference it by its s3:// URI.
func (s *Service) NewMediaUpload(owner, contentType string) (Upload, error) {
	ext, ok := MediaTypes[contentType]
	if !ok {
		return Upload{}, job.Fieldf("content_type", "must be application/jsonl (a batch file) or one of %s (got %q)", MediaTypeList(), service.Truncate(contentType, 100))
	}
	id := job.NewID(s.Clock.Now())
	uri := blob.Join(s.Bucket, "uploads", service.OwnerTag(owner), id+ext)
	return Upload{ID: id, URI: uri, MaxBytes: MaxMediaBytes}, nil
}

// MaxMediaBytes bounds one uploaded image or document: above every path's
// per-part limit (the largest is 5 MiB as base64), so a bigger file could
// never be sent; 32 MiB leaves room for the request-size checks to explain.
const MaxMediaBytes = 32 << 20
