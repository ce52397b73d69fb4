package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/pipeline"
)

// Reports is what the report tools need from the pipeline runner.
type Reports interface {
	ListReports(ctx context.Context, pipeline, cursor string, limit int) ([]pipeline.RunInfo, string, error)
	GetReport(ctx context.Context, pipeline, date string, linkTTL time.Duration) (pipeline.ReportView, error)
	Request(ctx context.Context, pipeline, date string, budgetUSD float64) (pipeline.RunInfo, error)
	// RunOf is the run whose job is id (ok false: no pipeline's run).
	RunOf(ctx context.Context, id string) (ri pipeline.RunInfo, ok bool, err error)
}

// ListReportsIn is the input of list_reports.
type ListReportsIn struct {
	Pipeline string `json:"pipeline,omitempty" jsonschema:"only this pipeline's runs; all pipelines when absent"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous page"`
	Limit    int    `json:"limit,omitempty" jsonschema:"runs per page, 1..500, default 100"`
}

// ListReportsOut is a page of pipeline runs.
type ListReportsOut struct {
	Reports    []pipeline.RunInfo `json:"reports"`
	NextCursor string             `json:"next_cursor,omitempty"`
}

// ReportIn names a pipeline run.
type ReportIn struct {
	Pipeline string `json:"pipeline" jsonschema:"pipeline name from the pipelines configuration"`
	Date     string `json:"date" jsonschema:"run date, YYYY-MM-DD in the pipeline's time zone"`
}

// RunPipelineIn is the input of run_pipeline.
type RunPipelineIn struct {
	Pipeline  string  `json:"pipeline" jsonschema:"pipeline name from the pipelines configuration"`
	Date      string  `json:"date,omitempty" jsonschema:"run date YYYY-MM-DD, from ttl_days before today up to today; today in the pipeline's time zone when absent"`
	BudgetUSD float64 `json:"budget_usd,omitempty" jsonschema:"a lower budget in USD for this run than the pipeline's budget_usd (one over it is refused): a run whose estimate is over it is refused (get_report says why); its batch parts are held at it"`
}

const reportLinkTTL = 15 * time.Minute

// addReportTools registers list_reports, get_report and run_pipeline.
func (s *Server) addReportTools(srv *mcp.Server) {
	yes, no := true, false
	addTool(srv, &mcp.Tool{
		Name:  "list_reports",
		Title: "List report pipeline runs",
		Description: "Runs of the scheduled report pipelines, newest first per pipeline: date, job status, counts and whether the report is ready. " +
			"Reports belong to the deployment, not to one caller. Page with next_cursor. Next: get_report for a run's summary and links.",
		Annotations: &mcp.ToolAnnotations{Title: "List reports", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, s.listReports)
	addTool(srv, &mcp.Tool{
		Name:  "get_report",
		Title: "Get a pipeline run's report",
		Description: "Summary of one pipeline run (records, succeeded, failed, tokens, cost estimate, duration, category distribution) " +
			"and links (valid 15 minutes) to report.html, report.md and report.json. While the run's job is not finished, report_ready is false.",
		Annotations: &mcp.ToolAnnotations{Title: "Get report", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, s.getReport)
	addTool(srv, &mcp.Tool{
		Name:  "run_pipeline",
		Title: "Start a report pipeline run by hand",
		Description: "Start a pipeline run now (for today, or for date). Any caller of this deployment may run its pipelines; a run costs the operator, so budget_usd may only lower the pipeline's budget_usd. One run per pipeline and date: asking again for a date that already ran " +
			"returns that run instead of starting another. A date outside the schedule window (today back ttl_days) or a folder with no usable document is refused with the reason. Returns at once; poll get_report with the same pipeline and date " +
			"(it also says why a run was refused at submit, e.g. an estimate over the pipeline's budget_usd).",
		Annotations: &mcp.ToolAnnotations{Title: "Run pipeline", ReadOnlyHint: false, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &yes},
		Meta:        appToolMeta(appJobURI),
	}, s.runPipeline)
}

func (s *Server) listReports(ctx context.Context, req *mcp.CallToolRequest, in ListReportsIn) (*mcp.CallToolResult, ListReportsOut, error) {
	return call(s, ctx, req, "list_reports", "", func(string) (ListReportsOut, string, string, error) {
		runs, next, err := s.Reports.ListReports(ctx, in.Pipeline, in.Cursor, in.Limit)
		if err != nil {
			return ListReportsOut{}, "", "", err
		}
		if runs == nil {
			runs = []pipeline.RunInfo{}
		}
		summary := fmt.Sprintf("%d pipeline runs.", len(runs))
		if next != "" {
			summary += " More: call again with cursor=next_cursor."
		}
		return ListReportsOut{Reports: runs, NextCursor: next}, summary, "", nil
	})
}

func (s *Server) getReport(ctx context.Context, req *mcp.CallToolRequest, in ReportIn) (*mcp.CallToolResult, pipeline.ReportView, error) {
	return call(s, ctx, req, "get_report", "", func(string) (pipeline.ReportView, string, string, error) {
		v, err := s.Reports.GetReport(ctx, in.Pipeline, in.Date, reportLinkTTL)
		if err != nil {
			return pipeline.ReportView{}, "", "", err
		}
		if v.Summary == nil {
			return v, fmt.Sprintf("Run of %s on %s (job %s) is %s; the report is not ready yet.", v.Run.Pipeline, v.Run.Date, v.Run.JobID, v.Run.JobStatus), v.Run.JobID, nil
		}
		sm := v.Summary
		var cats []string
		for _, c := range sm.Categories {
			cats = append(cats, fmt.Sprintf("%s %d", c.Name, c.Count))
		}
		text := fmt.Sprintf("%s, %s: %d records, %d succeeded, %d failed, %d documents skipped; cost estimate $%.4f. HTML report: %s",
			sm.Title, sm.Date, sm.Records, sm.Succeeded, sm.Failed, sm.SkippedDocuments, sm.CostUSD, v.Links["report.html"])
		if len(cats) > 0 {
			text += ". Categories: " + strings.Join(cats, ", ")
		}
		return v, text, v.Run.JobID, nil
	})
}

func (s *Server) runPipeline(ctx context.Context, req *mcp.CallToolRequest, in RunPipelineIn) (*mcp.CallToolResult, pipeline.RunInfo, error) {
	return call(s, ctx, req, "run_pipeline", "", func(string) (pipeline.RunInfo, string, string, error) {
		ri, err := s.Reports.Request(ctx, in.Pipeline, in.Date, in.BudgetUSD)
		if err != nil {
			return pipeline.RunInfo{}, "", "", err
		}
		if !ri.Created {
			return ri, fmt.Sprintf("Pipeline %s already ran for %s (job %s, %s); nothing new started.", ri.Pipeline, ri.Date, ri.JobID, ri.JobStatus), ri.JobID, nil
		}
		return ri, fmt.Sprintf("Run of %s for %s requested (job %s). Poll get_report with pipeline=%s date=%s.", ri.Pipeline, ri.Date, ri.JobID, ri.Pipeline, ri.Date), ri.JobID, nil
	})
}
