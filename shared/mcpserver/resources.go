package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Resource URIs: a job's status and the first page of its results.
const (
	jobURIPrefix       = "mcpbatch://jobs/"
	jobTemplate        = "mcpbatch://jobs/{job_id}"
	jobResultsTemplate = "mcpbatch://jobs/{job_id}/results"
	resultsSuffix      = "/results"
	// recentJobs is how many of the caller's jobs resources/list shows.
	recentJobs = 20
	// privateScope is the cacheScope of an answer that is the caller's own
	// (MCP 2026-07-28, server/utilities/caching: "private": only the
	// requesting user's client MAY cache the response).
	privateScope = "private"
)

// addResources registers the job resources and the per-caller resources/list.
func (s *Server) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "job", Title: "Batch job status", URITemplate: jobTemplate, MIMEType: "application/json",
		Description: "Status and counts of one of your jobs, as get_job returns them.",
	}, s.readResource)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "job-results", Title: "Batch job results (first page)", URITemplate: jobResultsTemplate, MIMEType: "application/json",
		Description: "The first 100 results of one of your jobs; page on with get_job_results, or fetch all with export_results.",
	}, s.readResource)
	// resources/list is per caller (their recent jobs), so it is answered here
	// rather than from a static list registered on the server.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			return s.listResources(ctx, req)
		}
	})
}

func ownerOfRequest(ctx context.Context, req mcp.Request) string {
	if o := ownerFromContext(ctx); o != "" {
		return o
	}
	if req != nil {
		if ex := req.GetExtra(); ex != nil && ex.Header != nil {
			return ex.Header.Get(ownerHeader)
		}
	}
	return ""
}

func (s *Server) listResources(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	owner := ownerOfRequest(ctx, req)
	if owner == "" {
		return nil, errors.New("unauthenticated: no caller identity on this request")
	}
	jobs, _, err := s.Queries.List(ctx, owner, service.ListQuery{Limit: recentJobs})
	if err != nil {
		s.log().ErrorContext(ctx, "resources/list failed", "owner", owner, "error", err)
		return nil, errors.New("resources/list failed on the server side; retry shortly")
	}
	// The list is the caller's own jobs: only the caller's client may cache it
	// (cacheScope "private", MCP 2026-07-28 caching, SEP-2549). This answer
	// bypasses the SDK's handler, so nothing fills the required field for us.
	out := &mcp.ListResourcesResult{Resources: append(make([]*mcp.Resource, 0, len(jobs)+2), appResources()...)}
	out.CacheScope = privateScope
	for _, j := range jobs {
		name := j.Name
		if name == "" {
			name = j.ID
		}
		out.Resources = append(out.Resources, &mcp.Resource{
			URI: jobURIPrefix + j.ID, Name: name, MIMEType: "application/json",
			Title:       fmt.Sprintf("Job %s (%s)", j.ID, j.Status),
			Description: fmt.Sprintf("%d records to %s, %s; created %s", j.RecordCount, j.Model, j.Status, ts(j.CreatedAt)),
		})
	}
	return out, nil
}

// readResource serves both templates; another owner's job reads as not found.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	owner := ownerOfRequest(ctx, req)
	if owner == "" {
		return nil, errors.New("unauthenticated: no caller identity on this request")
	}
	rest, ok := strings.CutPrefix(uri, jobURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	id, results := strings.CutSuffix(rest, resultsSuffix)
	var body any
	if results {
		p, err := s.Queries.ResultsPage(ctx, owner, service.ResultsQuery{JobID: id})
		if err != nil {
			return nil, s.resourceError(ctx, uri, err)
		}
		recs, j := p.Records, p.Job
		page := ResultsOut{JobID: j.ID, JobStatus: string(j.Status), NextCursor: p.Next, TruncatedByBytes: p.TruncatedByBytes,
			Records: make([]RecordOut, 0, len(recs))}
		for _, r := range recs {
			ro := RecordOut{ID: r.ID, Status: string(r.Status), Output: r.Output, StopReason: r.StopReason,
				ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Path: r.Path}
			// As get_job_results does: an output too big for the store is a link.
			if r.OutputRef != "" && s.Presign != nil {
				if ro.OutputURL, err = s.Presign.PresignGet(ctx, r.OutputRef, 15*time.Minute); err != nil {
					return nil, s.resourceError(ctx, uri, fmt.Errorf("presign output of record %s: %w", r.ID, err))
				}
			}
			page.Records = append(page.Records, ro)
		}
		body = page
	} else {
		j, err := s.Queries.Get(ctx, owner, id)
		if err != nil {
			return nil, s.resourceError(ctx, uri, err)
		}
		body = viewOf(j)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, s.resourceError(ctx, uri, err)
	}
	// One caller's job: a shared cache must not hand it to another.
	return &mcp.ReadResourceResult{Cacheable: mcp.Cacheable{CacheScope: privateScope},
		Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}}, nil
}

// resourceError maps like toolError: not found stays not found (the MCP
// resource error), anything else is a short message without internals.
func (s *Server) resourceError(ctx context.Context, uri string, err error) error {
	if errors.Is(err, service.ErrJobNotFound) {
		return mcp.ResourceNotFoundError(uri)
	}
	return s.toolError(ctx, "resources/read", err)
}
