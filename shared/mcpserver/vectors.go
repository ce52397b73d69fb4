package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/vectors"
)

// IndexService is what the vector-index tools need (vectors.Tools).
type IndexService interface {
	Search(ctx context.Context, r vectors.SearchRequest) (index.Info, []index.Match, error)
	List(ctx context.Context, owner string) ([]index.Info, error)
	Delete(ctx context.Context, owner, name string) error
}

// IndexIn names the index of an embedding submit.
type IndexIn struct {
	Name   string `json:"name" jsonschema:"index name: 1..63 letters, digits, '-', '_' or '.'; yours only"`
	Metric string `json:"metric,omitempty" jsonschema:"cosine (default) or euclidean; fixed when the index is created"`
}

// SearchIn is the input of search_index.
type SearchIn struct {
	Index  string         `json:"index" jsonschema:"the index name (list_indexes)"`
	Query  string         `json:"query" jsonschema:"text to search for; embedded with the index's model, dimensions and normalize setting"`
	K      int            `json:"k,omitempty" jsonschema:"how many matches, 1..100, default 10"`
	Filter map[string]any `json:"filter,omitempty" jsonschema:"metadata filter: {\"key\": value} or {\"key\": {\"$eq\": value}} or {\"key\": {\"$in\": [values]}}; all keys must match; keys must be metadata the index holds"`
}

// MatchOut is one search result.
type MatchOut struct {
	ID       string         `json:"id" jsonschema:"the record id given at submit"`
	Score    float64        `json:"score" jsonschema:"higher is nearer (cosine similarity, or 1/(1+L2 distance))"`
	Distance float64        `json:"distance"`
	Text     string         `json:"text,omitempty" jsonschema:"the record's text"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// SearchOut is what search_index returns.
type SearchOut struct {
	Index         string     `json:"index"`
	Model         string     `json:"model"`
	Matches       []MatchOut `json:"matches"`
	CompletedJobs []string   `json:"completed_jobs" jsonschema:"jobs whose vectors are all in the index; vectors of other jobs may be a partial set"`
}

// IndexView is one index in list_indexes.
type IndexView struct {
	Name          string   `json:"name"`
	Model         string   `json:"model"`
	Dimension     int      `json:"dimension"`
	Metric        string   `json:"metric"`
	Vectors       int64    `json:"vector_count"`
	FilterKeys    []string `json:"filter_keys,omitempty" jsonschema:"metadata keys usable in search_index filters"`
	CompletedJobs []string `json:"completed_jobs,omitempty"`
	CreatedAt     string   `json:"created_at,omitempty"`
	UpdatedAt     string   `json:"updated_at,omitempty"`
}

// ListIndexesIn is the (empty) input of list_indexes.
type ListIndexesIn struct{}

// ListIndexesOut is what list_indexes returns.
type ListIndexesOut struct {
	Indexes []IndexView `json:"indexes"`
}

// DeleteIndexIn names the index to delete.
type DeleteIndexIn struct {
	Index string `json:"index" jsonschema:"the index name; its vectors are deleted for good"`
}

// DeleteIndexOut is what delete_index returns.
type DeleteIndexOut struct {
	Index string `json:"index"`
	// Deleted is false when there was no such index of yours (already deleted).
	Deleted bool `json:"deleted"`
}

// embedParams copies submit_batch's embedding settings into the request.
func embedParams(in SubmitIn, sr *batch.SubmitRequest) {
	if in.Dimensions != 0 || in.Normalize != nil || in.InputType != "" || in.Truncate != "" {
		sr.Params.Embed = &job.EmbedParams{Dimensions: in.Dimensions, Normalize: in.Normalize, InputType: in.InputType, Truncate: in.Truncate}
	}
	if in.Index != nil {
		sr.Index = &batch.IndexRequest{Name: in.Index.Name, Metric: in.Index.Metric}
	}
}

func isEmbedding(model string) bool { return bedrock.EmbedFamilyOf(model) != bedrock.NotEmbedding }

// embeddingView shows an embedding record's dimensions, and its vector on request.
func embeddingView(ro *RecordOut, withVector bool) {
	if ro.Output == "" {
		return
	}
	v, err := bedrock.Vector([]byte(ro.Output))
	if err != nil {
		return // not a single vector (e.g. a model_input passthrough): the output stays as stored
	}
	ro.Output, ro.Dimensions = "", len(v)
	if withVector {
		ro.Vector = v
	}
}

// indexError turns index errors into tool errors that name the field and limit.
func indexError(name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, index.ErrNotFound):
		return &toolErr{msg: fmt.Sprintf("index not found: %q; call list_indexes to see your indexes", name)}
	case errors.Is(err, index.ErrInvalid):
		return &toolErr{msg: "invalid input: " + strings.TrimPrefix(err.Error(), index.ErrInvalid.Error()+": ")}
	}
	return err
}

func (s *Server) addVectorTools(srv *mcp.Server) {
	yes, no := true, false
	addTool(srv, &mcp.Tool{
		Name:  "search_index",
		Title: "Search a vector index by text",
		Description: "Nearest neighbours of a text in one of your vector indexes (made by submit_batch with an embedding model and index): " +
			"the query is embedded with the index's model (Cohere: input_type search_query), and the k nearest records come back with score, id, text and metadata. " +
			"k 1..100 (default 10); filter on metadata keys the index holds (list_indexes shows them).",
		Annotations: &mcp.ToolAnnotations{Title: "Search index", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &yes},
	}, s.searchIndex)
	addTool(srv, &mcp.Tool{
		Name:        "list_indexes",
		Title:       "List your vector indexes",
		Description: "Your vector indexes: name, model, dimension, metric, vector count, filterable metadata keys, completed jobs and when each was last written.",
		Annotations: &mcp.ToolAnnotations{Title: "List indexes", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, s.listIndexes)
	addTool(srv, &mcp.Tool{
		Name:        "delete_index",
		Title:       "Delete a vector index",
		Description: "Deletes one of your vector indexes and all its vectors, for good.",
		Annotations: &mcp.ToolAnnotations{Title: "Delete index", ReadOnlyHint: false, DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no},
	}, s.deleteIndex)
}

func (s *Server) searchIndex(ctx context.Context, req *mcp.CallToolRequest, in SearchIn) (*mcp.CallToolResult, SearchOut, error) {
	return call(s, ctx, req, "search_index", "", func(owner string) (SearchOut, string, string, error) {
		info, ms, err := s.Indexes.Search(ctx, vectors.SearchRequest{Owner: owner, Name: in.Index, Text: in.Query, K: in.K, Filter: in.Filter})
		if err != nil {
			return SearchOut{}, "", "", indexError(in.Index, err)
		}
		out := SearchOut{Index: in.Index, Model: info.Model, Matches: make([]MatchOut, 0, len(ms)), CompletedJobs: nonNil(info.CompletedJobs)}
		for _, m := range ms {
			mo := MatchOut{ID: m.Key, Score: m.Score, Distance: m.Distance}
			if len(m.Metadata) > 0 {
				mo.Metadata = make(map[string]any, len(m.Metadata))
				for k, v := range m.Metadata {
					if t, ok := v.(string); ok && k == vectors.TextKey {
						mo.Text = t
						continue
					}
					mo.Metadata[k] = v
				}
				if len(mo.Metadata) == 0 {
					mo.Metadata = nil
				}
			}
			out.Matches = append(out.Matches, mo)
		}
		summary := fmt.Sprintf("%d matches in index %s.", len(out.Matches), in.Index)
		if len(out.Matches) > 0 {
			summary += fmt.Sprintf(" Nearest: %s (score %.3f).", out.Matches[0].ID, out.Matches[0].Score)
		}
		if len(info.CompletedJobs) == 0 {
			summary += " No job writing into this index has completed yet: the set may be partial."
		}
		return out, summary, "", nil
	})
}

func (s *Server) listIndexes(ctx context.Context, req *mcp.CallToolRequest, _ ListIndexesIn) (*mcp.CallToolResult, ListIndexesOut, error) {
	return call(s, ctx, req, "list_indexes", "", func(owner string) (ListIndexesOut, string, string, error) {
		infos, err := s.Indexes.List(ctx, owner)
		if err != nil {
			return ListIndexesOut{}, "", "", indexError("", err)
		}
		out := ListIndexesOut{Indexes: make([]IndexView, 0, len(infos))}
		for _, i := range infos {
			out.Indexes = append(out.Indexes, IndexView{Name: i.Name, Model: i.Model, Dimension: i.Dimension, Metric: string(i.Metric),
				Vectors: i.Vectors, FilterKeys: i.FilterableKeys, CompletedJobs: i.CompletedJobs, CreatedAt: ts(i.CreatedAt), UpdatedAt: ts(i.UpdatedAt)})
		}
		return out, fmt.Sprintf("%d indexes.", len(out.Indexes)), "", nil
	})
}

func (s *Server) deleteIndex(ctx context.Context, req *mcp.CallToolRequest, in DeleteIndexIn) (*mcp.CallToolResult, DeleteIndexOut, error) {
	return call(s, ctx, req, "delete_index", "", func(owner string) (DeleteIndexOut, string, string, error) {
		err := s.Indexes.Delete(ctx, owner, in.Index)
		if errors.Is(err, index.ErrNotFound) {
			// Idempotent: a repeated call (or one naming no index of yours) finds nothing to delete.
			return DeleteIndexOut{Index: in.Index, Deleted: false}, fmt.Sprintf("You have no index %s (already deleted, or never created); nothing to delete.", in.Index), "", nil
		}
		if err != nil {
			return DeleteIndexOut{}, "", "", indexError(in.Index, err)
		}
		return DeleteIndexOut{Index: in.Index, Deleted: true}, fmt.Sprintf("Index %s and its vectors are deleted.", in.Index), "", nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
