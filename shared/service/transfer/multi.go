package transfer

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Limits of one job over many input files (input_upload_ids or an input_uri
// folder). They bound the fan-out, not one invocation: the files are checked
// in units of at most unitBytes each (see fanout.go), so no limit of one
// Lambda applies to the job as a whole.
const (
	// MaxJobFiles is the most input files one job takes (a folder listing
	// of 100 pages of 1,000 keys at submit).
	MaxJobFiles = 100_000
	// MaxJobRecords is the most records one job over many files holds:
	// 2,000 Bedrock provider jobs of 50,000 records, spread over time by the
	// per-model quota queue.
	MaxJobRecords = 100_000_000
	// MaxJobBytes is the most input bytes one job over many files holds (1 TiB).
	MaxJobBytes = int64(1) << 40
)

// Fields of a submit over many files.
const (
	fieldUploadIDs = "input_upload_ids"
	fieldInputURI  = "input_uri"
)

// inputFile is one file of a job over many files.
type inputFile struct {
	URI string `json:"uri"`
	// Name is how problems name the file: its upload id, or its key under the folder.
	Name string `json:"name"`
}

// lister is the object store as a folder submit reads it (blob.Store).
type lister interface {
	List(ctx context.Context, prefix string) ([]blob.Object, error)
}

// multiInput reports whether req names many files: a list of uploads or a folder.
func multiInput(req FileSubmitRequest) bool {
	return len(req.UploadIDs) > 0 || strings.HasSuffix(req.InputURI, "/")
}

// listInputs resolves a submit over many files into its files, held to the
// job limits (the record limit is held by the validation, which counts them).
// Uploads are looked for by the validation too: stat-ing 100,000 of them
// would not fit the mcp function's time.
func (s *Service) listInputs(ctx context.Context, req FileSubmitRequest) (string, []inputFile, error) {
	if len(req.UploadIDs) > 0 {
		if n := len(req.UploadIDs); n > MaxJobFiles {
			return "", nil, job.Fieldf(fieldUploadIDs, "%d files is over the %d one job takes; submit them as several jobs", n, MaxJobFiles)
		}
		seen := make(map[string]int, len(req.UploadIDs))
		files := make([]inputFile, len(req.UploadIDs))
		for i, id := range req.UploadIDs {
			f := fmt.Sprintf("%s[%d]", fieldUploadIDs, i)
			if !job.ValidID(id) {
				return "", nil, job.Fieldf(f, "%q is not an upload id from create_upload", service.Truncate(id, 40))
			}
			if prev, dup := seen[id]; dup {
				return "", nil, job.Fieldf(f, "upload %s is given twice (also %s[%d]); each file is read once", id, fieldUploadIDs, prev)
			}
			seen[id] = i
			files[i] = inputFile{URI: s.uploadURI(req.Owner, id), Name: id}
		}
		return fieldUploadIDs, files, nil
	}
	prefix := req.InputURI
	if err := s.inputs().CheckCallerPrefix(fieldInputURI, req.Owner, prefix); err != nil {
		return "", nil, err
	}
	l, ok := s.Blobs.(lister)
	if !ok {
		return "", nil, job.Fieldf(fieldInputURI, "folders of input files are not available on this server; give input_upload_ids")
	}
	objs, err := l.List(ctx, prefix)
	if err != nil {
		return "", nil, fmt.Errorf("list input folder %s: %w", prefix, err)
	}
	var files []inputFile
	var total int64
	for _, o := range objs {
		if strings.HasSuffix(o.URI, "/") || o.Size == 0 {
			continue // a folder marker or an empty file holds no records
		}
		total += o.Size
		files = append(files, inputFile{URI: o.URI, Name: strings.TrimPrefix(o.URI, prefix)})
	}
	switch {
	case len(files) == 0:
		return "", nil, job.Fieldf(fieldInputURI, "no files under %s; copy the JSONL files in first", prefix)
	case len(files) > MaxJobFiles:
		return "", nil, job.Fieldf(fieldInputURI, "%d files under %s is over the %d one job takes; submit sub-folders as several jobs", len(files), prefix, MaxJobFiles)
	case total > MaxJobBytes:
		return "", nil, job.Fieldf(fieldInputURI, "%d bytes under %s is over the %d (1 TiB) one job takes; submit sub-folders as several jobs", total, prefix, MaxJobBytes)
	}
	return fieldInputURI, files, nil
}
