package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

// ModelLister is the model catalog of this deployment (only the models its
// providers allow).
type ModelLister interface {
	All() []*model.Model
}

// ListModelsIn takes no arguments.
type ListModelsIn struct{}

// ListModelsOut is what list_models returns.
type ListModelsOut struct {
	Models []model.Listing `json:"models"`
}

// addModelTools registers list_models.
func (s *Server) addModelTools(srv *mcp.Server) {
	no := false
	mcp.AddTool(srv, &mcp.Tool{
		Name:  "list_models",
		Title: "List the models you may use",
		Description: "The models this deployment offers: id (pass it as submit_batch's model), provider, family, task (text or embedding), " +
			"modes (batch, on_demand), max_output_tokens, input_modalities, and prices per million tokens " +
			"(input, output, batch_input, batch_output, cache_write, cache_read; absent where the model has none) with their as_of date.",
		Annotations: &mcp.ToolAnnotations{Title: "List models", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, s.listModels)
}

func (s *Server) listModels(ctx context.Context, req *mcp.CallToolRequest, _ ListModelsIn) (*mcp.CallToolResult, ListModelsOut, error) {
	return call(s, ctx, req, "list_models", "", func(string) (ListModelsOut, string, string, error) {
		out := ListModelsOut{Models: []model.Listing{}}
		var cat ModelLister = model.Default()
		if s.Models != nil {
			cat = s.Models
		}
		for _, m := range cat.All() {
			out.Models = append(out.Models, m.Listing())
		}
		return out, fmt.Sprintf("%d models; pass a model's id as submit_batch's model.", len(out.Models)), "", nil
	})
}
