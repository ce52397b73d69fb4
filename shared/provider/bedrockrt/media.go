package bedrockrt

import (
	"bytes"
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// allModalities: the submit checked the record against the model's own input
// modalities; here the blocks are only measured again (their Info filled) and
// held to Converse's limits before rendering.
var allModalities = []string{"text", "image", "document"}

// mediaMessages renders a record's image and document blocks as Converse
// image/document blocks (nil, nil: the record has none; messages handles it).
func (m *Model) mediaMessages(ctx context.Context, model string, in job.Input) ([]types.Message, error) {
	if len(in.Messages) == 0 || !bytes.Contains(in.Messages, []byte(`"source"`)) {
		return nil, nil
	}
	rec, err := content.Parse(0, in.ID, in.Messages)
	if err != nil {
		return nil, err
	}
	media := false
	for _, msg := range rec.Messages {
		for _, b := range msg.Blocks {
			media = media || b.Kind == content.KindImage || b.Kind == content.KindDocument
		}
	}
	if !media {
		return nil, nil
	}
	ch, err := content.NewChecker(content.PathBedrockConverse, model, allModalities, m.Content)
	if err != nil {
		return nil, err
	}
	if err := ch.Validate(ctx, rec); err != nil {
		return nil, fmt.Errorf("images and documents: %w", err)
	}
	r := &content.Renderer{Path: content.PathBedrockConverse, Store: m.Content}
	return r.ConverseMessages(ctx, rec.Messages)
}
