package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// Exporter writes a job's results to one file.
type Exporter interface {
	Export(ctx context.Context, req transfer.ExportRequest) (*transfer.Export, error)
}

// ExportIn is the input of export_results.
type ExportIn struct {
	JobID  string `json:"job_id" jsonschema:"the job_id returned by submit_batch"`
	Format string `json:"format,omitempty" jsonschema:"jsonl (default: one JSON object per record), csv (header row, then one row per record) or parquet (columns id, status, error_code, error_message, stop_reason, path, input_tokens, output_tokens, cost_usd, output, output_uri, output_json, reused_from, and one column per top-level field of the job's output schema)"`
	Status string `json:"status,omitempty" jsonschema:"all (default), succeeded or failed"`
	Latest bool   `json:"latest,omitempty" jsonschema:"true: each record's newest outcome across the job's retry_failed retries, as get_job_results latest: true"`
}

// ExportOut is a written export.
type ExportOut struct {
	JobID     string `json:"job_id"`
	JobStatus string `json:"job_status"`
	Format    string `json:"format"`
	URL       string `json:"url" jsonschema:"presigned HTTPS GET link to the file, valid for expires_in_seconds"`
	Bytes     int64  `json:"bytes"`
	Records   int    `json:"records"`
	ExpiresIn int    `json:"expires_in_seconds"`
	Complete  bool   `json:"complete" jsonschema:"false while the job is not terminal: the file then holds only the results so far"`
}

// exportURLTTL is how long an export link works.
const exportURLTTL = 15 * time.Minute

// addExportTool registers export_results.
func (s *Server) addExportTool(srv *mcp.Server) {
	no := false
	addTool(srv, &mcp.Tool{
		Name:  "export_results",
		Title: "Export all results of a job to one file",
		Description: "Write every result of a job (or only succeeded or failed ones) to one JSONL or CSV file and get a download link " +
			"(presigned, valid 15 minutes). Use it instead of paging get_job_results when you need the whole set, e.g. thousands of records " +
			"or to hand the file to another program. Takes about a second per 10,000 records; sends progress notifications " +
			"when the request has a progressToken. Each call writes a new file; run it once the job is terminal for complete results.",
		Annotations: &mcp.ToolAnnotations{Title: "Export results", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no, DestructiveHint: &no},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in ExportIn) (*mcp.CallToolResult, ExportOut, error) {
		return call(s, ctx, req, "export_results", in.JobID, func(owner string) (ExportOut, string, string, error) {
			prog := progressWith(ctx, req, "exported %d of %d records")
			e, err := s.Exports.Export(ctx, transfer.ExportRequest{Owner: owner, JobID: in.JobID, Format: in.Format, Status: in.Status, Latest: in.Latest, Progress: prog})
			if err != nil {
				return ExportOut{}, "", "", err
			}
			url, err := s.Presign.PresignGet(ctx, e.URI, exportURLTTL)
			if err != nil {
				return ExportOut{}, "", "", fmt.Errorf("presign export %s: %w", e.URI, err)
			}
			out := ExportOut{JobID: e.Job.ID, JobStatus: string(e.Job.Status), Format: e.Format, URL: url, Bytes: e.Bytes,
				Records: e.Records, ExpiresIn: int(exportURLTTL.Seconds()), Complete: e.Job.Status.Terminal()}
			summary := fmt.Sprintf("Exported %d records of job %s (%s) as %s, %d bytes; download within 15 minutes from url.",
				e.Records, e.Job.ID, e.Job.Status, e.Format, e.Bytes)
			if !out.Complete {
				summary += " The job is not finished: export again once get_job says terminal."
			}
			return out, summary, "", nil
		})
	})
}

// progressWith reports progress with a message of its own when the client sent
// a progressToken (format takes done and total).
func progressWith(ctx context.Context, req *mcp.CallToolRequest, format string) func(done, total int) {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return func(done, total int) {
		p := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(done), Total: float64(total), Message: fmt.Sprintf(format, done, total)}
		if total <= 0 { // not known yet (a file being checked)
			p.Message = fmt.Sprintf("%d records so far", done)
		}
		_ = req.Session.NotifyProgress(ctx, p)
	}
}
