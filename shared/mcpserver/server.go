// Package mcpserver exposes the service as MCP tools over the official Go MCP SDK,
// served as stateless Streamable HTTP (the same handler runs in Lambda and in make dev).
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcptasks"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// Jobs is what the job tools need from the batch flow: the submits and cancels.
type Jobs interface {
	Submit(ctx context.Context, req batch.SubmitRequest) (*job.Job, error)
	Cancel(ctx context.Context, owner, id string) (*job.Job, error)
}

// Queries is what the job tools and resources read (the query flow).
type Queries interface {
	Get(ctx context.Context, owner, id string) (*job.Job, error)
	ResultsPage(ctx context.Context, owner string, q service.ResultsQuery) (service.ResultsPage, error)
	List(ctx context.Context, owner string, q service.ListQuery) ([]*job.Job, string, error)
}

// Presigner turns a stored big output into a link the caller can fetch.
type Presigner interface {
	PresignGet(ctx context.Context, uri string, ttl time.Duration) (string, error)
}

// Server holds the tool handlers' dependencies.
type Server struct {
	// listings caches list_models' answer per catalog view (models.go).
	listings listingCache
	// Jobs takes submits and cancels; Queries answers get_job, list_jobs,
	// get_job_results and the job resources.
	Jobs    Jobs
	Queries Queries
	Presign Presigner
	// Files takes file submits and names upload places; Uploads signs their links.
	Files   FileSubmitter
	Uploads UploadSigner
	// Exports writes export_results files.
	Exports Exporter
	// SageMaker serves invoke_endpoint_async and invoke_endpoint.
	SageMaker SageMakerService
	// Reports serves the report pipeline tools.
	Reports Reports
	// Models is the model catalog list_models shows.
	Models ModelLister
	// Retries serves retry_failed and get_job_results latest (nil: no retry_failed).
	Retries Retrier
	// Notify checks submit notify settings (nil: notify is refused).
	Notify NotifyChecker
	// Indexes serves the vector-index tools.
	Indexes IndexService
	// Features are the optional tool sets this deployment serves, decided by
	// whoever builds the server from the deployment's configuration.
	Features Features
	Log      *slog.Logger
	Version  string
}

// Features turn the optional tool sets on.
type Features struct {
	Uploads   bool // create_upload, and submit_batch with input_upload_id/input_uri (needs Files, Uploads)
	Exports   bool // export_results (needs Exports, Presign)
	SageMaker bool // invoke_endpoint_async, invoke_endpoint (needs SageMaker)
	Reports   bool // list_reports, get_report, run_pipeline (needs Reports)
	Vectors   bool // search_index, list_indexes, delete_index (needs Indexes)
}

// MCP builds the MCP server with every tool registered.
func (s *Server) MCP() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpbatch", Title: "mcpbatch: batch inference for agents", Version: s.Version}, &mcp.ServerOptions{
		Instructions: "Run bulk inference that must not block a tool call: submit_batch returns a job_id at once " +
			"(Bedrock batch inference or Anthropic Message Batches, about half the on-demand price; results typically within minutes to hours, " +
			"at most the Bedrock job timeout (72 h by default) or 24 h for Anthropic). list_models shows the models, their limits and prices. " +
			"Poll get_job until terminal is true, then read results with get_job_results page by page, or all at once with export_results. " +
			"Inputs above 5 MB go through create_upload (the request limit is 6 MB). Your recent jobs are resources (mcpbatch://jobs/{job_id}).",
		Capabilities: capabilities(),
	})
	srv.AddReceivingMiddleware(newLimitedInputs().middleware)
	s.register(srv)
	return srv
}

// capabilities are what server/discover and initialize advertise. The tool and
// resource lists are fixed per deployment, so no list-changed notifications
// and no resource subscriptions: a 2026-07-28 subscriptions/listen is then
// acknowledged with an empty filter and ends at once, instead of holding a
// stateless Lambda invocation open until its timeout for events that never
// come. Job status reaches a client through tasks/get (task-capable clients),
// get_job, or the submit's notify setting (webhook, SNS).
func capabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{
		Logging:   &mcp.LoggingCapabilities{},
		Tools:     &mcp.ToolCapabilities{},
		Resources: &mcp.ResourceCapabilities{},
		// The SDK answers prompts/list (an empty list) and prompts/get (unknown
		// prompt) whatever is declared; a 2026-07-28 server that answers them
		// MUST declare prompts in server/discover (SEP-2575), so it is said.
		Prompts: &mcp.PromptCapabilities{},
		// Served by the mcptasks layer in front of the SDK (see Handler).
		Extensions: map[string]any{mcptasks.ExtensionID: map[string]any{}},
	}
}

// register adds every tool and resource of the server: this is the one list.
// A tool set the deployment lacks is left out by its Features flag.
func (s *Server) register(srv *mcp.Server) {
	f := s.Features
	for _, t := range []struct {
		tools string // what add registers, for the reader
		on    bool
		add   func(*mcp.Server)
	}{
		{"submit_batch, get_job, get_job_results, cancel_job, list_jobs", true, s.addJobTools},
		{"list_models", true, s.addModelTools},
		{"retry_failed", s.Retries != nil, s.addRetryTool},
		{"summarize_results", s.summarizes(), s.addSummaryTool},
		{"get_webhook_secret", s.webhookSecrets() != nil, s.addWebhookSecretTool},
		{"create_upload", f.Uploads, s.addUploadTool},
		{"export_results", f.Exports, s.addExportTool},
		{"invoke_endpoint_async, invoke_endpoint", f.SageMaker, s.addSageMakerTools},
		{"describe_endpoint, shift_traffic", f.SageMaker, s.addEndpointTools},
		{"list_reports, get_report, run_pipeline", f.Reports, s.addReportTools},
		{"search_index, list_indexes, delete_index", f.Vectors, s.addVectorTools},
		{"resources mcpbatch://jobs/{job_id}, mcpbatch://jobs/{job_id}/results", true, s.addResources},
		{"MCP App resources ui://mcpbatch/job, ui://mcpbatch/jobs", true, s.addAppResources},
	} {
		if t.on {
			t.add(srv)
		}
	}
}

// addJobTools registers the job tools every deployment serves.
func (s *Server) addJobTools(srv *mcp.Server) {
	yes, no := true, false
	addTool(srv, &mcp.Tool{
		Name:  "submit_batch",
		Title: "Submit a batch inference job",
		Description: "Submit 100 or more prompts to Amazon Bedrock batch inference and get a job_id at once (no waiting). " +
			"Use it for bulk work that can wait minutes to hours: it costs about 50% of on-demand inference. " +
			"Fewer than 100 prompts run on demand instead (mode auto: full price, bounded concurrency, same job tools); mode batch or on_demand forces one way. " +
			"Limits: 100..50,000 records per provider job (larger batches are split automatically), ids any text up to 256 characters, unique; " +
			"max_tokens up to the model's max_output_tokens (list_models; batch jobs up to batch_max_output where listed); " +
			"inputs above 5 MB (the request limit is 6 MB): call create_upload, PUT a JSONL file, and pass input_upload_id instead of records. " +
			fmt.Sprintf("Many files make one job: input_upload_ids (a list of uploads) or input_uri of a folder in your input folders (s3://…/, ending in /): up to %d files, %d records and %d bytes (1 TiB) per job, checked in parallel; a file in a folder may be larger than 1 GiB. ",
				transfer.MaxJobFiles, transfer.MaxJobRecords, transfer.MaxJobBytes) +
			"messages may hold image and document blocks (Anthropic shape; source base64, or s3 with an s3_uri from create_upload), checked against the model's input modalities and the documented limits before anything is submitted; " +
			"dry_run: true returns the estimate (tokens, cost, provider jobs, problems) and submits nothing. " +
			"Next: poll get_job; when terminal, read get_job_results (or export_results for the whole set).",
		Annotations: &mcp.ToolAnnotations{Title: "Submit batch", ReadOnlyHint: false, DestructiveHint: &no, IdempotentHint: false, OpenWorldHint: &yes},
		Meta:        appToolMeta(appJobURI),
	}, s.submit)
	addTool(srv, &mcp.Tool{
		Name:  "get_job",
		Title: "Get a batch job's status",
		Description: "Status and counts of one of your jobs: queued, submitted, validating, in_progress, cancelling, ingesting, then " +
			"completed, partially_completed (some records failed: see failed), failed, cancelled or expired. " +
			"Bedrock jobs usually take minutes to hours; poll every minute or so, not in a tight loop.",
		Annotations: &mcp.ToolAnnotations{Title: "Get job", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
		Meta:        appToolMeta(appJobURI),
	}, s.getJob)
	addTool(srv, &mcp.Tool{
		Name:  "get_job_results",
		Title: "Read a job's results page by page",
		Description: "Per-record results of a job, including failed records with their error code and message. " +
			"Filter with status succeeded|failed; page with limit (1..500, default 100) and next_cursor until it is absent. " +
			"A page also stops at 4 MB of records (truncated_by_bytes: true, with next_cursor). " +
			"Results appear while the job is ingesting and are complete once get_job says terminal. " +
			"Records come in the order you gave them (a retry's in the order of the job first retried; latest: true keeps that order).",
		Annotations: &mcp.ToolAnnotations{Title: "Get job results", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, s.results)
	addTool(srv, &mcp.Tool{
		Name:  "cancel_job",
		Title: "Cancel a batch job",
		Description: "Stop a job that has not finished. Records already processed are kept and billed; the rest are not run. " +
			"Cancelling a finished job changes nothing and returns its status.",
		Annotations: &mcp.ToolAnnotations{Title: "Cancel job", ReadOnlyHint: false, DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &yes},
	}, s.cancel)
	addTool(srv, &mcp.Tool{
		Name:        "list_jobs",
		Title:       "List your batch jobs",
		Description: "Your jobs, newest first, optionally only those in one status; page with next_cursor.",
		Annotations: &mcp.ToolAnnotations{Title: "List jobs", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
		Meta:        appToolMeta(appJobsURI),
	}, s.list)
}

func (s *Server) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// call runs one tool with the one structured log line and the error mapping.
func call[Out any](s *Server, ctx context.Context, req *mcp.CallToolRequest, tool, jobID string, fn func(owner string) (Out, string, string, error)) (*mcp.CallToolResult, Out, error) {
	start := time.Now()
	owner := ownerOf(ctx, req)
	var zero Out
	if owner == "" {
		s.log().ErrorContext(ctx, "tool call", "tool", tool, "outcome", "unauthenticated")
		return nil, zero, &toolErr{msg: "unauthenticated: no caller identity on this request"}
	}
	out, summary, gotID, err := fn(owner)
	if gotID != "" {
		jobID = gotID
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	s.log().InfoContext(ctx, "tool call", "tool", tool, "owner", owner, "job_id", jobID,
		"duration_ms", time.Since(start).Milliseconds(), "outcome", outcome)
	if err != nil {
		return nil, zero, s.toolError(ctx, tool, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary}}}, out, nil
}

func ownerOf(ctx context.Context, req *mcp.CallToolRequest) string {
	if o := ownerFromContext(ctx); o != "" {
		return o
	}
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		return req.Extra.Header.Get(ownerHeader)
	}
	return ""
}

// toolErr is an error the client sees as a tool error (isError) with an actionable text.
type toolErr struct{ msg string }

func (e *toolErr) Error() string { return e.msg }

// toolError is the one place where errors become what the client reads: the field,
// the limit and the next step; never a Go error chain or a stack trace.
func (s *Server) toolError(ctx context.Context, tool string, err error) error {
	var fe *job.FieldError
	var me *service.ModelError
	var te *toolErr
	var ee *smsvc.EndpointError
	var re *smsvc.RefusedError
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &re):
		return &toolErr{msg: re.Msg}
	case errors.Is(err, smsvc.ErrNoControl):
		return &toolErr{msg: tool + ": this deployment has no SageMaker control-plane client (the mcp function's wiring lacks it); invoke tools still work"}
	case errors.As(err, &fe):
		return &toolErr{msg: fmt.Sprintf("invalid input: %s: %s", fe.Field, fe.Reason)}
	case errors.As(err, &me):
		return &toolErr{msg: fmt.Sprintf("invalid input: model: %q is not allowed; use one of: %s", me.Model, strings.Join(me.Allowed, ", "))}
	case errors.As(err, &ee):
		return endpointToolError(tool, ee)
	case errors.Is(err, service.ErrJobNotFound):
		return &toolErr{msg: "job not found: check the job_id, or call list_jobs to see your jobs (jobs are deleted after their ttl_days)"}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &toolErr{msg: tool + " timed out before finishing; nothing already stored was lost; retry the call"}
	default:
		s.log().ErrorContext(ctx, "tool failed", "tool", tool, "error", err)
		return &toolErr{msg: tool + " failed on the server side; nothing already stored was lost; retry shortly, and if it persists check the function's logs"}
	}
}

func (s *Server) submit(ctx context.Context, req *mcp.CallToolRequest, in SubmitIn) (*mcp.CallToolResult, JobHandle, error) {
	if in.DryRun && in.fileSubmit() {
		return call(s, ctx, req, "submit_batch", "", func(string) (JobHandle, string, string, error) {
			return JobHandle{}, "", "", job.Fieldf("dry_run", "takes inline records; a file submit already checks every line before submitting anything")
		})
	}
	if in.fileSubmit() {
		return s.submitFile(ctx, req, in)
	}
	return call(s, ctx, req, "submit_batch", "", func(owner string) (JobHandle, string, string, error) {
		ttl, err := in.ttlDays()
		if err != nil {
			return JobHandle{}, "", "", err
		}
		deadline, err := parseDeadline(in.Deadline)
		if err != nil {
			return JobHandle{}, "", "", err
		}
		sr := batch.SubmitRequest{
			Owner: owner, Model: in.Model, Name: in.Name, TTLDays: ttl, Mode: in.Mode, Provider: in.Provider,
			Params: job.Params{System: in.System, MaxTokens: in.MaxTokens, Temperature: in.Temperature, Tier: in.Tier}, BudgetUSD: in.BudgetUSD,
			Deadline: deadline, Reuse: in.Reuse, ReuseSampled: in.ReuseSampled,
		}
		embedParams(in, &sr)
		if sr.Params.OutputSchema, err = in.outputSchema(); err != nil {
			return JobHandle{}, "", "", err
		}
		sr.Records = make([]job.Input, len(in.Records))
		for i, r := range in.Records {
			in := job.Input{ID: r.ID, Prompt: r.Prompt, System: r.System, Text: r.Text, Metadata: r.Metadata}
			var err error
			if len(r.Messages) > 0 {
				if in.Messages, err = json.Marshal(r.Messages); err != nil {
					return JobHandle{}, "", "", job.Fieldf(fmt.Sprintf("records[%d].messages", i), "not encodable: %v", err)
				}
			}
			if len(r.ModelInput) > 0 {
				if in.ModelInput, err = json.Marshal(r.ModelInput); err != nil {
					return JobHandle{}, "", "", job.Fieldf(fmt.Sprintf("records[%d].model_input", i), "not encodable: %v", err)
				}
			}
			sr.Records[i] = in
		}
		sr.Progress = progress(ctx, req)
		if sr.Notify, err = s.checkNotify(ctx, in.Notify); err != nil {
			return JobHandle{}, "", "", err
		}
		if in.DryRun {
			return s.dryRun(ctx, sr)
		}
		j, err := s.Jobs.Submit(ctx, sr)
		if err != nil {
			return JobHandle{}, "", "", err
		}
		if j.Status == job.StatusFailed {
			return JobHandle{}, "", j.ID, &toolErr{msg: fmt.Sprintf("submit_batch: the job could not be started (job_id %s is kept as failed): %s", j.ID, j.Error)}
		}
		if j.Mode == job.ModeOnDemand {
			// On-demand runs start at submit: answer with the status get_job shows now.
			if cur, err := s.Queries.Get(ctx, owner, j.ID); err == nil {
				j = cur
			}
		}
		h := jobHandle(j)
		summary := fmt.Sprintf("Submitted job %s: %d records to %s (%s, %d provider job(s)), status %s. Poll get_job; "+
			"the job and its results are kept %d days after it ends (get_job's expires_at is final once it ended).",
			j.ID, j.RecordCount, j.Model, j.Provider, len(j.Parts), j.Status, h.TTLDays)
		if j.Reused > 0 {
			summary += fmt.Sprintf(" %d more records were answered from your earlier results (reuse) and not sent.", j.Reused)
		}
		return h, withWarnings(summary, j.Warnings), j.ID, nil
	})
}

// progress reports submit progress when the client sent a progressToken.
func progress(ctx context.Context, req *mcp.CallToolRequest) func(done, total int) {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return func(done, total int) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Progress: float64(done), Total: float64(total),
			Message: fmt.Sprintf("encoded %d of %d records", done, total),
		})
	}
}

func (s *Server) getJob(ctx context.Context, req *mcp.CallToolRequest, in JobIDIn) (*mcp.CallToolResult, JobView, error) {
	return call(s, ctx, req, "get_job", in.JobID, func(owner string) (JobView, string, string, error) {
		j, err := s.Queries.Get(ctx, owner, in.JobID)
		if err != nil {
			return JobView{}, "", "", err
		}
		v := viewOf(j)
		if dt, ok := s.Jobs.(deadlineTimer); ok {
			v.StopBatchBy = ts(dt.StopBatchBy(j))
		}
		return v, jobSummary(j), "", nil
	})
}

// deadlineTimer says when a job's unfinished batch parts are stopped for its
// deadline (the batch service; zero: not applicable).
type deadlineTimer interface {
	StopBatchBy(j *job.Job) time.Time
}

// parseDeadline reads submit_batch's deadline (zero when absent).
func parseDeadline(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, job.Fieldf("deadline", "%q is not an RFC 3339 time; give e.g. 2026-12-02T09:00:00Z or 2026-12-02T10:00:00+01:00", service.Truncate(s, 60))
	}
	return t, nil
}

// jobSummary is get_job's text answer (also a finished task's inline result).
func jobSummary(j *job.Job) string {
	summary := fmt.Sprintf("Job %s is %s: %d records, %d succeeded, %d failed.", j.ID, j.Status, j.RecordCount, j.Succeeded, j.Failed)
	if !j.Status.Terminal() {
		summary += " Not finished yet; poll again in a minute or so."
	}
	return withWarnings(summary, j.Warnings)
}

func (s *Server) results(ctx context.Context, req *mcp.CallToolRequest, in ResultsIn) (*mcp.CallToolResult, ResultsOut, error) {
	return call(s, ctx, req, "get_job_results", in.JobID, func(owner string) (ResultsOut, string, string, error) {
		q := service.ResultsQuery{JobID: in.JobID, Status: in.Status, Cursor: in.Cursor, Limit: in.Limit}
		p, err := s.resultsOf(ctx, owner, q, in.Latest)
		if err != nil {
			return ResultsOut{}, "", "", err
		}
		recs, next, j := p.Records, p.Next, p.Job
		out := ResultsOut{JobID: j.ID, JobStatus: string(j.Status), NextCursor: next, TruncatedByBytes: p.TruncatedByBytes,
			Records: make([]RecordOut, 0, len(recs))}
		embedding := isEmbedding(j.Model)
		for _, r := range recs {
			ro := RecordOut{ID: r.ID, Status: string(r.Status), Output: r.Output, StopReason: r.StopReason, ErrorCode: r.ErrorCode,
				ErrorMessage: r.ErrorMessage, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Path: r.Path}
			ro.ContentType, ro.Note, ro.ReusedFrom = r.ContentType, r.Note, r.ReusedFrom
			if r.OutputJSON != "" {
				ro.OutputJSON = json.RawMessage(r.OutputJSON)
			}
			if r.JobID != "" && r.JobID != j.ID {
				ro.JobID = r.JobID
			}
			if embedding {
				embeddingView(&ro, in.IncludeVectors)
			}
			if r.OutputRef != "" && s.Presign != nil {
				if ro.OutputURL, err = s.Presign.PresignGet(ctx, r.OutputRef, 15*time.Minute); err != nil {
					return ResultsOut{}, "", "", fmt.Errorf("presign output of record %s: %w", r.ID, err)
				}
			}
			out.Records = append(out.Records, ro)
		}
		summary := fmt.Sprintf("%d results of job %s (%s).", len(out.Records), j.ID, j.Status)
		switch {
		case p.TruncatedByBytes:
			summary += fmt.Sprintf(" The page stopped at its %d MB byte budget before the limit; more: call again with cursor=next_cursor.", service.MaxResultsPageBytes>>20)
		case next != "":
			summary += " More: call again with cursor=next_cursor."
		}
		return out, summary, "", nil
	})
}

func (s *Server) cancel(ctx context.Context, req *mcp.CallToolRequest, in JobIDIn) (*mcp.CallToolResult, CancelOut, error) {
	return call(s, ctx, req, "cancel_job", in.JobID, func(owner string) (CancelOut, string, string, error) {
		j, err := s.Jobs.Cancel(ctx, owner, in.JobID)
		if err != nil {
			return CancelOut{}, "", "", err
		}
		return CancelOut{JobID: j.ID, Status: string(j.Status)}, fmt.Sprintf("Job %s is %s.", j.ID, j.Status), "", nil
	})
}

func (s *Server) list(ctx context.Context, req *mcp.CallToolRequest, in ListIn) (*mcp.CallToolResult, ListOut, error) {
	return call(s, ctx, req, "list_jobs", "", func(owner string) (ListOut, string, string, error) {
		jobs, next, err := s.Queries.List(ctx, owner, service.ListQuery{Status: in.Status, Cursor: in.Cursor, Limit: in.Limit})
		if err != nil {
			return ListOut{}, "", "", err
		}
		out := ListOut{NextCursor: next, Jobs: make([]JobView, 0, len(jobs))}
		for _, j := range jobs {
			out.Jobs = append(out.Jobs, viewOf(j))
		}
		return out, fmt.Sprintf("%d jobs.", len(out.Jobs)), "", nil
	})
}
