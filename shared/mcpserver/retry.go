package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/retry"
)

// Retrier serves retry_failed and the merged results of retried jobs.
type Retrier interface {
	Retry(ctx context.Context, req retry.Request) (*job.Job, bool, error)
	LatestResults(ctx context.Context, owner string, q service.ResultsQuery) (service.ResultsPage, error)
}

// RetryIn is the input of retry_failed.
type RetryIn struct {
	JobID     string    `json:"job_id" jsonschema:"a finished job with failed records"`
	Which     string    `json:"which,omitempty" jsonschema:"all (default: every failed record), retryable (only throttled, timed-out and 5xx failures) or ids (the record_ids given)"`
	RecordIDs []string  `json:"record_ids,omitempty" jsonschema:"failed record ids to retry (which=ids)"`
	Model     string    `json:"model,omitempty" jsonschema:"another model for the retry (default: the job's)"`
	MaxTokens int       `json:"max_tokens,omitempty" jsonschema:"another max_tokens for the retry (default: the job's)"`
	Mode      string    `json:"mode,omitempty" jsonschema:"auto (default: on demand under the batch minimum), batch or on_demand"`
	Notify    *NotifyIn `json:"notify,omitempty" jsonschema:"how to announce the retry's end (default: as the job said)"`
	BudgetUSD float64   `json:"budget_usd,omitempty" jsonschema:"refuse the retry when its estimated cost (estimated input, max_tokens × records of output) is over this many USD"`
}

// RetryOut is what retry_failed returns.
type RetryOut struct {
	JobID       string `json:"job_id" jsonschema:"the retry job (poll it with get_job)"`
	RetryOf     string `json:"retry_of"`
	Status      string `json:"status"`
	Mode        string `json:"mode"`
	RecordCount int    `json:"record_count"`
	Existing    bool   `json:"existing" jsonschema:"true when this selection was retried before and that job is returned"`
}

func (s *Server) addRetryTool(srv *mcp.Server) {
	yes, no := true, false
	addTool(srv, &mcp.Tool{
		Name:  "retry_failed",
		Title: "Retry a finished job's failed records",
		Description: "Start a new job from the failed records of a finished job: all of them, only retryable ones (throttling, timeouts, 5xx), " +
			"or the record_ids you list. Same records, ids, model and parameters unless you override model, max_tokens or mode; " +
			"mode auto runs fewer than 100 records on demand. Calling again with the same selection returns the same retry job. " +
			"A new retry takes only what is still failed after earlier retries; a job takes at most 10 retries (then retry its newest retry). " +
			"An embedding job's retry writes into the same index. " +
			"Next: poll get_job on the new job_id; get_job_results on the original job with latest: true shows every record's latest outcome.",
		Annotations: &mcp.ToolAnnotations{Title: "Retry failed records", ReadOnlyHint: false, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &yes},
		Meta:        appToolMeta(appJobURI),
	}, s.retryFailed)
}

func (s *Server) retryFailed(ctx context.Context, req *mcp.CallToolRequest, in RetryIn) (*mcp.CallToolResult, RetryOut, error) {
	return call(s, ctx, req, "retry_failed", in.JobID, func(owner string) (RetryOut, string, string, error) {
		n, err := s.checkNotify(ctx, in.Notify)
		if err != nil {
			return RetryOut{}, "", "", err
		}
		j, existed, err := s.Retries.Retry(ctx, retry.Request{Owner: owner, JobID: in.JobID, Which: in.Which, RecordIDs: in.RecordIDs,
			Model: in.Model, MaxTokens: in.MaxTokens, Mode: in.Mode, Notify: n, BudgetUSD: in.BudgetUSD})
		if err != nil {
			return RetryOut{}, "", "", err
		}
		out := RetryOut{JobID: j.ID, RetryOf: j.RetryOf, Status: string(j.Status), Mode: j.Mode, RecordCount: j.RecordCount, Existing: existed}
		verb := "Started"
		if existed {
			verb = "Already retried: returning"
		}
		summary := fmt.Sprintf("%s job %s: %d failed records of job %s, %s, status %s. Poll get_job; then get_job_results on %s with latest: true.",
			verb, j.ID, j.RecordCount, j.RetryOf, j.Mode, j.Status, j.RetryOf)
		return out, summary, j.ID, nil
	})
}

// resultsOf reads a page of results, merged over retries when latest.
func (s *Server) resultsOf(ctx context.Context, owner string, q service.ResultsQuery, latest bool) (service.ResultsPage, error) {
	if latest {
		if s.Retries == nil {
			return service.ResultsPage{}, job.Fieldf("latest", "this server has no retry_failed, so there are no retries to merge; omit latest")
		}
		return s.Retries.LatestResults(ctx, owner, q)
	}
	return s.Queries.ResultsPage(ctx, owner, q)
}
