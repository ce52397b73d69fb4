package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// UploadSigner makes a link a client can PUT one object to.
type UploadSigner interface {
	PresignPut(ctx context.Context, uri, contentType string, ttl time.Duration) (string, error)
}

// FileSubmitter starts jobs from input files and names upload places.
type FileSubmitter interface {
	NewUpload(owner string) transfer.Upload
	SubmitFile(ctx context.Context, req transfer.FileSubmitRequest) (*job.Job, error)
}

// CreateUploadIn is the input of create_upload.
type CreateUploadIn struct {
	ContentType string `json:"content_type,omitempty" jsonschema:"Content-Type you will send with the PUT: application/jsonl (default) for a batch file; image/png, image/jpeg, image/gif, image/webp, application/pdf, text/csv, text/plain, text/markdown, text/html, DOCX/XLSX/DOC/XLS types for an image or document that records reference by s3_uri"`
}

// CreateUploadOut says where and how to upload.
type CreateUploadOut struct {
	UploadID  string            `json:"upload_id" jsonschema:"pass it to submit_batch as input_upload_id once the PUT succeeded"`
	URL       string            `json:"url" jsonschema:"presigned URL: HTTP PUT the whole file to it"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers" jsonschema:"headers the PUT must carry exactly"`
	MaxBytes  int64             `json:"max_bytes"`
	ExpiresIn int               `json:"expires_in_seconds"`
	Format    string            `json:"format" jsonschema:"what each line of the file holds"`
	// S3URI is set for an image or document upload.
	S3URI string `json:"s3_uri,omitempty" jsonschema:"for an image or document: reference it in a record's content block as {\"type\":\"image\",\"source\":{\"type\":\"s3\",\"uri\":s3_uri}}"`
}

// mediaUploader names upload places for images and documents.
type mediaUploader interface {
	NewMediaUpload(owner, contentType string) (transfer.Upload, error)
}

const mediaFormat = "one image or document, sent as is; the bytes decide its format at submit_batch"

// mediaUpload is create_upload for an image or document.
func (s *Server) mediaUpload(ctx context.Context, owner, ct string) (CreateUploadOut, string, string, error) {
	mu, ok := s.Files.(mediaUploader)
	if !ok {
		return CreateUploadOut{}, "", "", job.Fieldf("content_type", "image and document uploads are not available on this server")
	}
	u, err := mu.NewMediaUpload(owner, ct)
	if err != nil {
		return CreateUploadOut{}, "", "", err
	}
	url, err := s.Uploads.PresignPut(ctx, u.URI, ct, transfer.UploadURLTTL)
	if err != nil {
		return CreateUploadOut{}, "", "", fmt.Errorf("presign upload %s: %w", u.ID, err)
	}
	out := CreateUploadOut{UploadID: u.ID, URL: url, Method: "PUT", Headers: map[string]string{"Content-Type": ct},
		MaxBytes: u.MaxBytes, ExpiresIn: int(transfer.UploadURLTTL.Seconds()), Format: mediaFormat, S3URI: u.URI}
	summary := fmt.Sprintf("PUT the file to url with Content-Type: %s within 15 minutes, then reference it in a record as "+
		`{"type":"image"|"document","source":{"type":"s3","uri":%q}}.`, ct, u.URI)
	return out, summary, "", nil
}

const fileFormat = `JSON Lines, one record per line: {"id"?, "prompt" | "messages" | "model_input", "system"?} as in submit_batch records, ` +
	`or Bedrock's native {"recordId", "modelInput"}`

var contentTypePattern = regexp.MustCompile(`^[a-z]+/[a-z0-9.+-]+$`)

// maxContentTypeLen bounds a batch file's content_type (the media types are
// a fixed list): it is signed into the upload URL as is.
const maxContentTypeLen = 100

// addUploadTool registers create_upload.
func (s *Server) addUploadTool(srv *mcp.Server) {
	no := false
	addTool(srv, &mcp.Tool{
		Name:  "create_upload",
		Title: "Get a link to upload a big batch as a file",
		Description: "For inputs above 5 MB (the request limit is 6 MB; roughly more than a few thousand prompts): get a presigned URL, " +
			"HTTP PUT a JSONL file to it (up to 1 GiB, within 15 minutes), then call submit_batch with input_upload_id=upload_id " +
			"and no records. Each line is a record as in submit_batch, or Bedrock's native {recordId, modelInput}. " +
			"With an image or document content_type (image/png, application/pdf, ...) it is a place for one image or document: " +
			"PUT the file, then reference its s3_uri in a record's image or document block. " +
			"submit_batch answers at once with the job in status validating (at most 1,000,000 records); every line is checked before anything " +
			"is submitted: poll get_job until it moves on, or ends failed with the first 20 problems and their line numbers in error.",
		Annotations: &mcp.ToolAnnotations{Title: "Create upload", ReadOnlyHint: false, DestructiveHint: &no, IdempotentHint: false, OpenWorldHint: &no},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in CreateUploadIn) (*mcp.CallToolResult, CreateUploadOut, error) {
		return call(s, ctx, req, "create_upload", "", func(owner string) (CreateUploadOut, string, string, error) {
			ct := in.ContentType
			if ct == "" {
				ct = "application/jsonl"
			}
			if _, media := transfer.MediaTypes[ct]; media {
				return s.mediaUpload(ctx, owner, ct)
			}
			if !contentTypePattern.MatchString(ct) || len(ct) > maxContentTypeLen {
				return CreateUploadOut{}, "", "", job.Fieldf("content_type", "must look like type/subtype of at most %d characters, e.g. application/jsonl (got %q)", maxContentTypeLen, service.Truncate(ct, maxContentTypeLen))
			}
			u := s.Files.NewUpload(owner)
			url, err := s.Uploads.PresignPut(ctx, u.URI, ct, transfer.UploadURLTTL)
			if err != nil {
				return CreateUploadOut{}, "", "", fmt.Errorf("presign upload %s: %w", u.ID, err)
			}
			out := CreateUploadOut{UploadID: u.ID, URL: url, Method: "PUT", Headers: map[string]string{"Content-Type": ct},
				MaxBytes: u.MaxBytes, ExpiresIn: int(transfer.UploadURLTTL.Seconds()), Format: fileFormat}
			summary := fmt.Sprintf("PUT the JSONL file to url with Content-Type: %s within 15 minutes (up to %d bytes), "+
				"then call submit_batch with input_upload_id=%s.", ct, u.MaxBytes, u.ID)
			return out, summary, "", nil
		})
	})
}

// fileSubmit reports whether the records are in files rather than inline.
func (in SubmitIn) fileSubmit() bool {
	return in.InputUploadID != "" || len(in.InputUploadIDs) > 0 || in.InputURI != ""
}

// submitFile is submit_batch with its records in a file.
func (s *Server) submitFile(ctx context.Context, req *mcp.CallToolRequest, in SubmitIn) (*mcp.CallToolResult, JobHandle, error) {
	return call(s, ctx, req, "submit_batch", "", func(owner string) (JobHandle, string, string, error) {
		if !s.Features.Uploads {
			return JobHandle{}, "", "", job.Fieldf("input_upload_id", "file inputs are not available on this server; pass records")
		}
		if len(in.Records) > 0 {
			return JobHandle{}, "", "", job.Fieldf("records", "give records or input_upload_id/input_upload_ids/input_uri, not both")
		}
		if in.Index != nil {
			return JobHandle{}, "", "", job.Fieldf("index", "a file submit does not write into an index; pass the records inline (up to 6 MB per call) to fill an index")
		}
		if in.BudgetUSD != 0 {
			// A file's records are read after the call returns, so no estimate exists to refuse it with.
			return JobHandle{}, "", "", job.Fieldf("budget_usd", "is not held for file submits (input_upload_id, input_uri); pass the records inline (up to 6 MB per call) or submit without budget_usd")
		}
		if in.Deadline != "" {
			// A file's records are read after the call returns: no estimate exists to hold a deadline to.
			return JobHandle{}, "", "", job.Fieldf("deadline", "is not held for file submits (input_upload_id, input_uri); pass the records inline (up to 6 MB per call) or submit without deadline")
		}
		n, err := s.checkNotify(ctx, in.Notify)
		if err != nil {
			return JobHandle{}, "", "", err
		}
		ttl, err := in.ttlDays()
		if err != nil {
			return JobHandle{}, "", "", err
		}
		fr := transfer.FileSubmitRequest{
			SubmitRequest: batch.SubmitRequest{Owner: owner, Model: in.Model, Name: in.Name, TTLDays: ttl,
				Params: job.Params{System: in.System, MaxTokens: in.MaxTokens, Temperature: in.Temperature, Tier: in.Tier},
				Notify: n, Reuse: in.Reuse, ReuseSampled: in.ReuseSampled,
			},
			UploadID: in.InputUploadID, UploadIDs: in.InputUploadIDs, InputURI: in.InputURI,
		}
		embedParams(in, &fr.SubmitRequest)
		if fr.Params.OutputSchema, err = in.outputSchema(); err != nil {
			return JobHandle{}, "", "", err
		}
		j, err := s.Files.SubmitFile(ctx, fr)
		if err != nil {
			return JobHandle{}, "", "", err
		}
		if j.Status == job.StatusFailed {
			return JobHandle{}, "", j.ID, &toolErr{msg: fmt.Sprintf("submit_batch: the job could not be started (job_id %s is kept as failed): %s", j.ID, j.Error)}
		}
		h := jobHandle(j)
		summary := fmt.Sprintf("Job %s takes the file for %s, status %s: every line is checked before anything is submitted. "+
			"Poll get_job: it moves on to submitted, or ends failed listing the first problems with their line numbers.", j.ID, j.Model, j.Status)
		return h, withWarnings(summary, j.Warnings), j.ID, nil
	})
}
