// Package mcpapp builds the MCP server over a service graph: one constructor
// for the mcp Lambda (functions/mcp) and make dev (shared/app/local), so both
// serve the same tools from the same parts. It lives apart from package app
// so the event functions do not link the MCP SDK.
package mcpapp

import (
	"io"
	"log/slog"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/parquetout"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
	"github.com/mcpbatch/mcpbatch/shared/vectors"
)

// Links presigns result downloads and signs upload links: S3 in AWS, make
// dev's upload endpoint (or its adapters') locally.
type Links interface {
	mcpserver.Presigner
	mcpserver.UploadSigner
}

// Parts are what a deployment adds to the graph. The optional ones are
// pointers, so nil turns their tools off (an interface would hold a typed nil).
type Parts struct {
	Links Links
	// Reports runs the report pipelines (nil: no pipelines file).
	Reports *pipeline.Runner
	// Notify checks submit notify settings (nil: notify is refused).
	Notify *announce.Service
	// Indexes serves the vector-index tools (nil: no vector bucket).
	Indexes *vectors.Tools
	Log     *slog.Logger
}

// New is the MCP server over g with p.
func New(g *graph.Graph, p Parts) *mcpserver.Server {
	// Only the server exports, so only its function links Parquet.
	if g.Transfer != nil {
		g.Transfer.Parquet = func(w io.Writer, schema string) (transfer.TableWriter, error) { return parquetout.New(w, schema) }
	}
	s := &mcpserver.Server{
		Jobs: g.Batch, Queries: g.Queries, Presign: p.Links, Files: g.Transfer, Uploads: p.Links, Exports: g.Transfer, SageMaker: g.SageMaker,
		Features: mcpserver.Features{Uploads: true, Exports: true, SageMaker: true},
		Models:   g.Core.Catalog, Retries: g.Retry, Log: p.Log, Version: app.Version,
	}
	if p.Reports != nil {
		s.Reports, s.Features.Reports = p.Reports, true
	}
	if p.Notify != nil {
		s.Notify = p.Notify
	}
	if p.Indexes != nil {
		s.Indexes, s.Features.Vectors = p.Indexes, true
	}
	return s
}
