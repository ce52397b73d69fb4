package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/console"
)

// The job view as an MCP App (extension io.modelcontextprotocol/ui, SEP-1865):
// a host that renders Apps shows it beside the tool result of the tools that
// name it in _meta.ui.resourceUri; other clients ignore the _meta and get the
// tools' text and structured results as before.
const (
	appJobURI  = "ui://mcpbatch/job"
	appJobsURI = "ui://mcpbatch/jobs"
)

// appUIMeta is the resource's _meta.ui: the frame needs no domain at all (its
// calls go through the host bridge), so the host's CSP may forbid everything.
func appUIMeta() mcp.Meta {
	return mcp.Meta{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}},
		"prefersBorder": true,
	}}
}

// appToolMeta links a tool to the view; "ui/resourceUri" is the key hosts of
// the first MCP Apps drafts read.
func appToolMeta(uri string) mcp.Meta {
	return mcp.Meta{"ui": map[string]any{"resourceUri": uri}, "ui/resourceUri": uri}
}

// addAppResources registers the page under both URIs: one page shows a job or
// a list of jobs, whichever tool result it is given.
func (s *Server) addAppResources(srv *mcp.Server) {
	for _, r := range []struct{ uri, name, title string }{
		{appJobURI, "job-view", "Batch job (live view)"},
		{appJobsURI, "jobs-view", "Batch jobs (live view)"},
	} {
		srv.AddResource(&mcp.Resource{URI: r.uri, Name: r.name, Title: r.title, MIMEType: console.AppMIMEType, Meta: appUIMeta(),
			Description: "Progress, counts, tokens, cost and failures of a job, followed live, with retry and export."},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
					URI: r.uri, MIMEType: console.AppMIMEType, Text: console.AppHTML(), Meta: appUIMeta(),
				}}}, nil
			})
	}
}

// appResources are listed beside the caller's jobs in resources/list.
func appResources() []*mcp.Resource {
	return []*mcp.Resource{
		{URI: appJobURI, Name: "job-view", Title: "Batch job (live view)", MIMEType: console.AppMIMEType, Meta: appUIMeta()},
		{URI: appJobsURI, Name: "jobs-view", Title: "Batch jobs (live view)", MIMEType: console.AppMIMEType, Meta: appUIMeta()},
	}
}
