package transfer

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Export formats.
const (
	ExportJSONL   = "jsonl"
	ExportCSV     = "csv"
	ExportParquet = "parquet"
)

// exportPage is how many records one store read brings; the file is written
// while the next page is read, so memory stays at one page.
const exportPage = 500

// ExportRequest asks for all of a job's results in one file.
type ExportRequest struct {
	Owner  string
	JobID  string
	Format string // jsonl (default) | csv
	Status string // all (default) | succeeded | failed
	// Latest writes each record's newest outcome across the job's retries
	// (get_job_results latest: true).
	Latest bool
	// Progress, when set, is called after each page with the records written so far.
	Progress func(done, total int)
}

// Export is a written export file.
type Export struct {
	URI     string
	Format  string
	Bytes   int64
	Records int
	Job     *job.Job
}

// ExportLine is one record of a JSONL export (and the columns of a CSV export).
type ExportLine struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Output       string `json:"output,omitempty"`
	OutputURI    string `json:"output_uri,omitempty"`
	StopReason   string `json:"stop_reason,omitempty"`
	ErrorCode    string `json:"error_code,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	// Path is how the record was produced: batch or on_demand.
	Path string `json:"path,omitempty"`
	// OutputJSON is the checked output of a job with an output schema.
	OutputJSON json.RawMessage `json:"output_json,omitempty"`
	// ReusedFrom is the job a reused record's result came from.
	ReusedFrom string `json:"reused_from,omitempty"`
}

// exportLinkTTL is how long the output_uri link of a big output in an export
// works. A link signed with a role's temporary credentials (a Lambda's) stops
// earlier when they expire; get_job_results signs a fresh one.
const exportLinkTTL = 12 * time.Hour

// linkSigner is the part of the blob store that turns a stored output into a
// link the caller can fetch (S3: presigned GET; make dev: a file:// link).
type linkSigner interface {
	PresignGet(ctx context.Context, uri string, ttl time.Duration) (string, error)
}

var csvHeader = []string{"id", "status", "output", "output_uri", "stop_reason", "error_code", "error_message", "input_tokens", "output_tokens", "path", "output_json"}

// Export streams a job's results (optionally one status) to a file under
// <bucket>/exports/<job id>/ page by page, never holding the file in memory.
func (s *Service) Export(ctx context.Context, req ExportRequest) (*Export, error) {
	switch req.Format {
	case "":
		req.Format = ExportJSONL
	case ExportJSONL, ExportCSV, ExportParquet:
	default:
		return nil, job.Fieldf("format", "must be jsonl, csv or parquet (got %q)", service.Truncate(req.Format, 40))
	}
	switch req.Status {
	case "", job.ResultsAll, string(job.RecordSucceeded), string(job.RecordFailed):
	default:
		return nil, job.Fieldf("status", "must be one of all, succeeded, failed (got %q)", service.Truncate(req.Status, 40))
	}
	j, err := service.OwnedJob(ctx, s.Jobs, req.Owner, req.JobID)
	if err != nil {
		return nil, err
	}
	status := req.Status
	if status == "" {
		status = job.ResultsAll
	}
	out := &Export{Format: req.Format, Job: j,
		URI: blob.Join(s.Bucket, "exports", j.ID, fmt.Sprintf("%s-%s.%s", s.Clock.Now().Format("20060102T150405.000000000Z"), status, req.Format))}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.writeExport(ctx, pw, req, out)) }()
	ctype := map[string]string{ExportJSONL: "application/jsonl", ExportCSV: "text/csv", ExportParquet: "application/vnd.apache.parquet"}[req.Format]
	n, err := s.Blobs.Put(ctx, out.URI, pr, ctype)
	pr.CloseWithError(err) // stops the writer if Put gave up early
	if err != nil {
		// An error of the writer (a page that failed to load) surfaces through Put.
		var fe *job.FieldError
		if errors.As(err, &fe) {
			return nil, fe
		}
		return nil, fmt.Errorf("write export of %s: %w", j.ID, err)
	}
	out.Bytes = n
	return out, nil
}

func (s *Service) writeExport(ctx context.Context, w io.Writer, req ExportRequest, out *Export) error {
	if req.Format == ExportParquet {
		return s.writeParquet(ctx, w, req, out)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var cw *csv.Writer
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if req.Format == ExportCSV {
		cw = csv.NewWriter(bw)
		if err := cw.Write(csvHeader); err != nil {
			return err
		}
	}
	err := s.exportPages(ctx, req, out, func(recs []job.Record) error {
		for _, r := range recs {
			l, err := s.exportLine(ctx, r)
			if err != nil {
				return err
			}
			if cw != nil {
				err = cw.Write([]string{csvSafe(l.ID), csvSafe(l.Status), csvSafe(l.Output), csvSafe(l.OutputURI), csvSafe(l.StopReason),
					csvSafe(l.ErrorCode), csvSafe(l.ErrorMessage), strconv.FormatInt(l.InputTokens, 10), strconv.FormatInt(l.OutputTokens, 10), l.Path, csvSafe(r.OutputJSON)})
			} else {
				err = enc.Encode(l)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// exportLine is a record as an export shows it: a big output as a link.
func (s *Service) exportLine(ctx context.Context, r job.Record) (ExportLine, error) {
	l := ExportLine{ID: r.ID, Status: string(r.Status), Output: r.Output, StopReason: r.StopReason,
		ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Path: r.Path,
		ReusedFrom: r.ReusedFrom}
	if r.OutputJSON != "" {
		l.OutputJSON = json.RawMessage(r.OutputJSON)
	}
	if r.OutputRef != "" {
		// The caller cannot read the bucket: hand out a link, not the internal key.
		signer, ok := s.Blobs.(linkSigner)
		if !ok {
			return l, fmt.Errorf("export record %s: the blob store cannot sign a link to its output", r.ID)
		}
		var err error
		if l.OutputURI, err = signer.PresignGet(ctx, r.OutputRef, exportLinkTTL); err != nil {
			return l, fmt.Errorf("presign output of record %s: %w", r.ID, err)
		}
	}
	return l, nil
}

// exportPages hands the records an export writes to fn one store page at a
// time (each record's latest outcome with req.Latest), counting them.
func (s *Service) exportPages(ctx context.Context, req ExportRequest, out *Export, fn func([]job.Record) error) error {
	cursor := ""
	for {
		q := service.ResultsQuery{JobID: req.JobID, Status: req.Status, Cursor: cursor, Limit: exportPage}
		var p service.ResultsPage
		var err error
		if req.Latest {
			if s.Merged == nil {
				return errors.New("export of merged results is not configured")
			}
			p, err = s.Merged.LatestResults(ctx, req.Owner, q)
		} else {
			p, err = s.Results.ResultsPage(ctx, req.Owner, q)
		}
		recs, next := p.Records, p.Next
		if err != nil {
			return err
		}
		if err := fn(recs); err != nil {
			return err
		}
		out.Records += len(recs)
		if req.Progress != nil {
			req.Progress(out.Records, out.Job.RecordCount)
		}
		if next == "" {
			return nil
		}
		cursor = next
	}
}

// csvSafe neutralises a cell a spreadsheet would run as a formula (one starting
// with =, +, -, @, tab or CR) by prefixing a single quote, as OWASP's "CSV
// Injection" page advises (https://owasp.org/www-community/attacks/CSV_Injection,
// read 2026-11-30). Model output is text an attacker can steer.
func csvSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}
