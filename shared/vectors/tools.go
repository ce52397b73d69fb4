package vectors

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/service/ondemand"
)

// Embedder runs one record through a model's runtime API (the on-demand model port).
type Embedder interface {
	Invoke(ctx context.Context, model string, in job.Input, p job.Params) (ondemand.OnDemandResult, error)
}

// Tools serves search_index, list_indexes and delete_index. Every call is
// scoped to its owner: another owner's index is index.ErrNotFound.
type Tools struct {
	Index index.Index
	Embed Embedder
	// ModelID maps a catalog id to the id on-demand calls use (an inference
	// profile where the model needs one); nil: the id itself.
	ModelID func(string) string
}

// DefaultTopK is k when a search gives none.
const DefaultTopK = 10

// SearchRequest is a search by text.
type SearchRequest struct {
	Owner, Name, Text string
	K                 int
	Filter            map[string]any
}

// Search embeds the query with the index's model (Cohere: input_type
// search_query) and returns the k nearest vectors.
func (t *Tools) Search(ctx context.Context, r SearchRequest) (index.Info, []index.Match, error) {
	ref := index.Ref{Owner: r.Owner, Name: r.Name}
	if err := index.CheckRef(ref); err != nil {
		return index.Info{}, nil, err
	}
	if r.K == 0 {
		r.K = DefaultTopK
	}
	if err := index.CheckTopK(r.K); err != nil {
		return index.Info{}, nil, err
	}
	if strings.TrimSpace(r.Text) == "" {
		return index.Info{}, nil, job.Fieldf("query", "empty; give the text to search for")
	}
	info, err := t.Index.Describe(ctx, ref)
	if err != nil {
		return index.Info{}, nil, err
	}
	if _, err := index.ParseFilter(info, r.Filter); err != nil {
		return index.Info{}, nil, err
	}
	q, err := t.embedQuery(ctx, info, r.Text)
	if err != nil {
		return index.Info{}, nil, err
	}
	ms, err := t.Index.Query(ctx, ref, index.Query{Vector: q, K: r.K, Filter: r.Filter})
	return info, ms, err
}

func (t *Tools) embedQuery(ctx context.Context, info index.Info, text string) ([]float32, error) {
	// Embedded as the index's first job embedded its records; an index made
	// before this was recorded has nil, the model's default.
	ep := &job.EmbedParams{Dimensions: info.Dimension, Normalize: info.Normalize}
	switch bedrock.EmbedFamilyOf(info.Model) {
	case bedrock.CohereEmbed, bedrock.CohereEmbedV4, bedrock.NovaEmbed:
		ep.InputType = job.InputSearchQuery // the query side of a search
	}
	id := info.Model
	if t.ModelID != nil {
		id = t.ModelID(id)
	}
	res, err := t.Embed.Invoke(ctx, id, job.Input{ID: "query", Text: text}, job.Params{Embed: ep})
	var ce *ondemand.CallError
	switch {
	case errors.As(err, &ce):
		return nil, job.Fieldf("query", "model %s refused it: %s", info.Model, ce.Message)
	case err != nil:
		return nil, fmt.Errorf("embed the query with %s: %w", info.Model, err)
	}
	v, err := bedrock.Vector([]byte(res.Output))
	if err != nil {
		return nil, fmt.Errorf("embed the query with %s: %w", info.Model, err)
	}
	if len(v) != info.Dimension {
		return nil, fmt.Errorf("embed the query with %s: got %d dimensions, the index has %d", info.Model, len(v), info.Dimension)
	}
	return v, nil
}

// List returns the owner's indexes.
func (t *Tools) List(ctx context.Context, owner string) ([]index.Info, error) {
	return t.Index.List(ctx, owner)
}

// Delete removes one of the owner's indexes and its vectors.
func (t *Tools) Delete(ctx context.Context, owner, name string) error {
	ref := index.Ref{Owner: owner, Name: name}
	if err := index.CheckRef(ref); err != nil {
		return err
	}
	return t.Index.DeleteIndex(ctx, ref)
}
