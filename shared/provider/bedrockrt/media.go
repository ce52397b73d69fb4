package bedrockrt

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

// allModalities: the submit checked the record against the model's own input
// modalities; here the blocks are only measured again (their Info filled) and
// held to Converse's limits and the model's document rules before rendering.
var allModalities = []string{"text", "image", "document"}

// converseMessages renders a request's messages as the SDK's Converse
// messages, checking its image and document blocks first.
func (m *Model) converseMessages(ctx context.Context, modelID, id string, r *bedrock.Request, rules *model.Model) ([]types.Message, error) {
	media := false
	for _, msg := range r.Messages {
		for _, b := range msg.Blocks {
			media = media || b.Kind == content.KindImage || b.Kind == content.KindDocument
		}
	}
	if media {
		ch, err := content.NewChecker(content.PathBedrockConverse, modelID, allModalities, m.Content)
		if err != nil {
			return nil, err
		}
		if rules != nil && rules.Documents != nil {
			d := rules.Documents
			ch.PDF = content.PDFRules{MaxBytes: d.MaxPDFBytes, ExemptFromCap: d.PDFExemptFromCap, Citations: d.CitationsForPDF, Source: rules.FactsSource}
		}
		if err := ch.Validate(ctx, &content.Record{ID: id, Messages: r.Messages}); err != nil {
			return nil, fmt.Errorf("images and documents: %w", err)
		}
	}
	return (&content.Renderer{Path: content.PathBedrockConverse, Store: m.Content}).ConverseMessages(ctx, r.Messages)
}
