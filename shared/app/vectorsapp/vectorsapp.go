// Package vectorsapp wires the vector store of embedding jobs from the
// environment: Amazon S3 Vectors (MCPBATCH_VECTOR_BUCKET, the stack's vector
// bucket) or, with MCPBATCH_VECTOR_SINK=pgvector, PostgreSQL with pgvector
// (MCPBATCH_PGVECTOR_DSN). Without either, submits naming an index are
// refused and the index tools are not served. It lives apart from package app
// so only the functions that write or search vectors (mcp, ingest, ondemand)
// link the S3 Vectors and pgx clients.
package vectorsapp

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3vectors"
	_ "github.com/lib/pq" // the "postgres" database/sql driver

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/vectors"
)

// Environment variables.
const (
	EnvVectorBucket = "MCPBATCH_VECTOR_BUCKET"
	EnvVectorSink   = "MCPBATCH_VECTOR_SINK" // s3vectors (default) or pgvector
	EnvPGVectorDSN  = "MCPBATCH_PGVECTOR_DSN"
)

// maxPGConns bounds the connections one Lambda container opens: pgxpool's
// default (max(4, CPUs)) at the function sizes the stack deploys.
const maxPGConns = 4

// Wiring holds the index once Option has run (nil: no vector store configured).
type Wiring struct {
	Index index.Index
	env   *app.Env
}

// Option builds the index from the environment and gives the graph its sink.
func (w *Wiring) Option(ctx context.Context, e *app.Env) error {
	ix, err := FromEnv(ctx, e)
	if err != nil || ix == nil {
		return err
	}
	w.Index, w.env = ix, e
	e.Deps.Vectors = &vectors.Sink{Index: ix, Records: e.Deps.Store, Blobs: e.Deps.Blobs, Log: e.Log}
	return nil
}

// FromEnv returns the configured index, or nil when none is.
func FromEnv(ctx context.Context, e *app.Env) (index.Index, error) {
	switch sink := os.Getenv(EnvVectorSink); sink {
	case "pgvector":
		dsn := os.Getenv(EnvPGVectorDSN)
		if dsn == "" {
			return nil, fmt.Errorf("%s=pgvector needs %s", EnvVectorSink, EnvPGVectorDSN)
		}
		// Connects lazily, on first use. lib/pq reads the same URL and
		// key=value DSNs as libpq, sslmode=require when the DSN names none.
		db, err := sql.Open("postgres", dsn)
		if err != nil {
			return nil, fmt.Errorf("pgvector: %w", err)
		}
		db.SetMaxOpenConns(maxPGConns)
		return index.NewPGVector(db), nil
	case "", "s3vectors":
		bucket := os.Getenv(EnvVectorBucket)
		if bucket == "" {
			return nil, nil
		}
		if _, name, ok := strings.Cut(bucket, ":bucket/"); ok && strings.HasPrefix(bucket, "arn:") {
			bucket = name // the stack passes the bucket's ARN
		}
		return index.NewS3Vectors(s3vectors.NewFromConfig(e.Config), bucket), nil
	default:
		return nil, fmt.Errorf("%s: %q is not s3vectors or pgvector", EnvVectorSink, sink)
	}
}

// Tools serves the index tools, embedding queries through embed (the mcp
// function passes Bedrock's runtime API; the caller builds it so that ingest,
// which writes vectors but never searches, does not link that client); nil
// when no vector store is configured.
func (w *Wiring) Tools(a *app.AWS, embed vectors.Embedder) *vectors.Tools {
	if w.Index == nil {
		return nil
	}
	return &vectors.Tools{Index: w.Index, ModelID: a.Graph.Core.Models().OnDemandID, Embed: embed}
}
