package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
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

// addModelTools registers list_models. Its output is rendered by this
// package from typed values (ListModelsOut), so it is registered with the
// schema inferred from that type but without the SDK's per-call output
// validation: validating a few hundred rows re-decoded and checked
// ~10 ms of CPU per call, while the typed rows cannot break their schema.
// The encoded answer is kept until the catalog's view changes (an account
// refresh).
func (s *Server) addModelTools(srv *mcp.Server) {
	no := false
	srv.AddTool(&mcp.Tool{
		Name:  "list_models",
		Title: "List the models you may use",
		Description: "The models this deployment offers: id (pass it as submit_batch's model), provider, family, task (text or embedding), " +
			"modes (batch, on_demand), max_output_tokens, input_modalities, and prices per million tokens " +
			"(input, output, batch_input, batch_output, cache_write, cache_read; absent where the model has none) with their as_of date; " +
			"and what the account says of the model: source (account, catalog or both), lifecycle (active, legacy, end_of_life with dates and successor), " +
			"access (granted, not_granted, unknown), quotas (batch records and sizes per job, concurrent jobs), batch (why the account lets the model take batch jobs or not), the inference profiles usable in this Region, account_as_of.",
		Annotations:  &mcp.ToolAnnotations{Title: "List models", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
		InputSchema:  listModelsSchemas.in,
		OutputSchema: listModelsSchemas.out,
	}, s.listModelsTool)
}

// listModelsSchemas are list_models' schemas, inferred once from its types.
var listModelsSchemas = func() (sc struct{ in, out *jsonschema.Schema }) {
	var err error
	if sc.in, err = jsonschema.For[ListModelsIn](nil); err != nil {
		panic("list_models input schema: " + err.Error())
	}
	sc.out = outputSchema[ListModelsOut]()
	return sc
}()

// viewer is a catalog whose merged view can be told apart (model.Catalog).
type viewer interface{ Current() *model.Catalog }

// listingCache holds list_models' encoded answer for one catalog view.
type listingCache struct {
	mu   sync.Mutex
	key  any
	json json.RawMessage
	n    int
}

func (s *Server) listModelsTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, out, err := call(s, ctx, req, "list_models", "", func(string) (json.RawMessage, string, string, error) {
		var cat ModelLister = model.Default()
		if s.Models != nil {
			cat = s.Models
		}
		var key any
		if v, ok := cat.(viewer); ok {
			key = v.Current()
		}
		c := &s.listings
		c.mu.Lock()
		defer c.mu.Unlock()
		if key == nil || c.key != key {
			out := ListModelsOut{Models: []model.Listing{}}
			for _, m := range cat.All() {
				out.Models = append(out.Models, m.Listing())
			}
			b, err := json.Marshal(out)
			if err != nil {
				return nil, "", "", fmt.Errorf("encode list_models: %w", err)
			}
			c.key, c.json, c.n = key, b, len(out.Models)
		}
		return c.json, fmt.Sprintf("%d models; pass a model's id as submit_batch's model.", c.n), "", nil
	})
	if err != nil {
		var r mcp.CallToolResult
		r.SetError(err)
		return &r, nil
	}
	res.StructuredContent = out
	return res, nil
}
