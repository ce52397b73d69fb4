package anthropic

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/pagination"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

// ModelsAPI is the Models API call the account refresh makes.
type ModelsAPI interface {
	ListAutoPaging(ctx context.Context, params sdk.ModelListParams, opts ...option.RequestOption) *pagination.PageAutoPager[sdk.ModelInfo]
}

var _ ModelsAPI = (*sdk.ModelService)(nil)

// ReadModels lists the models of GET /v1/models with their limits,
// capabilities and lifecycle.
func ReadModels(ctx context.Context, api ModelsAPI) ([]model.AnthropicFacts, error) {
	var out []model.AnthropicFacts
	pager := api.ListAutoPaging(ctx, sdk.ModelListParams{Limit: sdk.Int(1000)})
	for pager.Next() {
		m := pager.Current()
		f := model.AnthropicFacts{ID: m.ID, Name: m.DisplayName, MaxInputTokens: int(m.MaxInputTokens), MaxTokens: int(m.MaxTokens),
			Lifecycle: string(m.Lifecycle), DeprecatedAt: dateOf(m.DeprecatedAt), RetiresAt: dateOf(m.RetiresAt)}
		c := m.Capabilities
		for _, kv := range []struct {
			name string
			on   bool
		}{{"batch", c.Batch.Supported}, {"image_input", c.ImageInput.Supported}, {"pdf_input", c.PDFInput.Supported}, {"citations", c.Citations.Supported}, {"structured_outputs", c.StructuredOutputs.Supported}} {
			if kv.on {
				f.Capabilities = append(f.Capabilities, kv.name)
			}
		}
		out = append(out, f)
	}
	if err := pager.Err(); err != nil {
		return nil, fmt.Errorf("anthropic GET /v1/models: %w", err)
	}
	return out, nil
}

// dateOf is YYYY-MM-DD, "" for a null (zero) or epoch date.
func dateOf(t time.Time) string {
	if t.IsZero() || t.Unix() <= 0 {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}
