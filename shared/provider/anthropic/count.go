package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/claude"
)

// countFields are the body fields the Token Count API
// (POST /v1/messages/count_tokens) takes: a Messages request without
// max_tokens and the sampling parameters, which it refuses ("Extra inputs are
// not permitted"). Source: the API reference
// (https://platform.claude.com/docs/en/api/messages-count-tokens) and the Go
// SDK v2.15's MessageCountTokensParams, as of 2026-12-01.
var countFields = []string{"cache_control", "messages", "model", "output_config", "speed", "system", "thinking", "tool_choice", "tools"}

// CountTokens counts one record's input tokens with the Token Count API
// (client.Messages.CountTokens), on the params its batch request would carry
// (prompt or messages, system prompt, and model_input's tools and the like):
// the count is the input the Message Batches API bills for it. Counting is
// free but limited per minute apart from message creation; the SDK retries
// a 429 after its retry-after, and a count that still fails is an error.
func (c *Client) CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error) {
	body, err := countBody(model, in, p)
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

// countBody is record in's batch params cut to the fields count_tokens takes.
func countBody(model string, in job.Input, p job.Params) ([]byte, error) {
	f := func(name string) string { return fmt.Sprintf("records[id=%s].%s", in.ID, name) }
	body, err := paramsBody(f, model, in, p)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("count tokens of record %s: %w", in.ID, err)
	}
	if storedSource(m["messages"]) {
		// The submit inlines s3:// images and documents as it writes the
		// batch; count_tokens would refuse the reference.
		return nil, fmt.Errorf("count tokens of record %s: it holds s3:// images or documents, which are inlined only at submit; count_tokens takes them inline", in.ID)
	}
	for k := range m {
		if !slices.Contains(countFields, k) {
			delete(m, k)
		}
	}
	return claude.Marshal(m)
}

// storedSource reports whether a messages array holds an image or document
// whose source is an s3:// reference (the suite's own source type).
func storedSource(messages json.RawMessage) bool {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(messages, &msgs) != nil {
		return false
	}
	for _, msg := range msgs {
		var blocks []struct {
			Source *struct {
				Type string `json:"type"`
			} `json:"source"`
		}
		if claude.FirstByte(msg.Content) != '[' || json.Unmarshal(msg.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Source != nil && b.Source.Type == "s3" {
				return true
			}
		}
	}
	return false
}
