package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
)

// CountTokens counts one record's input tokens with the Token Count API
// (client.Messages.CountTokens), on the params its batch request would carry
// (prompt or messages, system prompt, and model_input's tools and the like):
// the count is the input the Message Batches API bills for it. Counting is
// free but limited per minute apart from message creation; the SDK retries
// a 429 after its retry-after, and a count that still fails is an error.
func (c *Client) CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error) {
	body, err := wire.CountBody(model, in, p)
	if err != nil {
		return 0, err
	}
	res, err := c.SDK.Messages.CountTokens(ctx, sdk.MessageCountTokensParams{}, option.WithRequestBody("application/json", body))
	var ae *sdk.Error
	if errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound {
		// Here a 404 names the model, not a batch (ErrNotFound's meaning).
		return 0, fmt.Errorf("count tokens of record %s: HTTP 404: the Anthropic API has no model %s: %s", in.ID, model, ae.Message)
	}
	if err != nil {
		return 0, classify("count tokens of record "+in.ID, err)
	}
	return res.InputTokens, nil
}
