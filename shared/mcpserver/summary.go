package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/summary"
)

// Summarizer summarizes a job over its merged view (the retry service).
type Summarizer interface {
	Summarize(ctx context.Context, owner, jobID string, q summary.Query) (*job.Job, summary.Summary, error)
}

// SummaryIn is the input of summarize_results.
type SummaryIn struct {
	JobID      string `json:"job_id"`
	Field      string `json:"field,omitempty" jsonschema:"count the records by the values of this output_json field (a path: category, or scores.overall): the top values, the rest as other"`
	Top        int    `json:"top,omitempty" jsonschema:"how many of field's values to list, 1..100, default 10"`
	StatsField string `json:"stats_field,omitempty" jsonschema:"numeric statistics of this output_json field: count, min, max, mean, p50, p90"`
	Status     string `json:"status,omitempty" jsonschema:"all (default), succeeded or failed"`
	WhereField string `json:"where_field,omitempty" jsonschema:"only records whose output_json field has where_value"`
	WhereValue string `json:"where_value,omitempty" jsonschema:"the value where_field must have (a string, or a number/boolean as written in JSON)"`
}

// SummaryOut is what summarize_results returns.
type SummaryOut struct {
	JobID     string `json:"job_id"`
	JobStatus string `json:"job_status"`
	summary.Summary
}

// summarizes: the retry service also summarizes (summarize_results reads the merged view).
func (s *Server) summarizes() bool {
	_, ok := s.Retries.(Summarizer)
	return ok
}

func (s *Server) addSummaryTool(srv *mcp.Server) {
	no := false
	addTool(srv, &mcp.Tool{
		Name:  "summarize_results",
		Title: "Summarize a whole job's results",
		Description: "Answer questions about all of a job's results at once instead of paging them: counts by the values of an output_json field " +
			"(jobs submitted with output_schema or categories; e.g. field: category gives how many records fell in each), numeric statistics of a field, " +
			"and failures by error code; optionally only succeeded or failed records, or those whose where_field has where_value. " +
			"It reads every record's latest outcome across retry_failed retries, in the server, and returns only the summary.",
		Annotations: &mcp.ToolAnnotations{Title: "Summarize results", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, s.summarize)
}

func (s *Server) summarize(ctx context.Context, req *mcp.CallToolRequest, in SummaryIn) (*mcp.CallToolResult, SummaryOut, error) {
	return call(s, ctx, req, "summarize_results", in.JobID, func(owner string) (SummaryOut, string, string, error) {
		q := summary.Query{Field: in.Field, Top: in.Top, StatsField: in.StatsField, Status: in.Status, WhereField: in.WhereField, WhereValue: in.WhereValue}
		j, sum, err := s.Retries.(Summarizer).Summarize(ctx, owner, in.JobID, q)
		if err != nil {
			return SummaryOut{}, "", "", err
		}
		if sum.Values == nil {
			sum.Values = []summary.Count{}
		}
		if sum.Failures == nil {
			sum.Failures = []summary.Count{}
		}
		return SummaryOut{JobID: j.ID, JobStatus: string(j.Status), Summary: sum}, summaryText(j, sum), "", nil
	})
}

// summaryText is summarize_results' text answer.
func summaryText(j *job.Job, sum summary.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Job %s (%s): %d records, %d succeeded, %d failed.", j.ID, j.Status, sum.Records, sum.Succeeded, sum.Failed)
	if sum.Field != "" {
		parts := make([]string, 0, len(sum.Values))
		for _, c := range sum.Values {
			parts = append(parts, fmt.Sprintf("%s %d", c.Value, c.Count))
		}
		fmt.Fprintf(&b, " By %s: %s", sum.Field, strings.Join(parts, ", "))
		if sum.Other > 0 {
			fmt.Fprintf(&b, ", other %d", sum.Other)
		}
		if sum.Missing > 0 {
			fmt.Fprintf(&b, ", without it %d", sum.Missing)
		}
		b.WriteString(".")
	}
	if st := sum.Stats; st != nil && st.Count > 0 {
		fmt.Fprintf(&b, " %s: count %d, min %g, max %g, mean %.4g, p50 %.4g, p90 %.4g.", st.Field, st.Count, st.Min, st.Max, st.Mean, st.P50, st.P90)
	}
	if len(sum.Failures) > 0 {
		parts := make([]string, 0, len(sum.Failures))
		for _, c := range sum.Failures {
			parts = append(parts, fmt.Sprintf("%s %d", c.Value, c.Count))
		}
		fmt.Fprintf(&b, " Failures by code: %s.", strings.Join(parts, ", "))
	}
	return b.String()
}
