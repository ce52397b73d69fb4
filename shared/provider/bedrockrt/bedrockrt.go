// Package bedrockrt runs single records on demand through the Bedrock runtime API:
// Converse for prompts and conversations (with a cachePoint after a stable system
// prompt, so repeated calls read it from the prompt cache), InvokeModel for raw
// native model_input bodies. It implements ondemand.OnDemandModel.
package bedrockrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/service/ondemand"
)

// API is the part of the bedrockruntime client this adapter calls.
type API interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
	InvokeModel(ctx context.Context, in *bedrockruntime.InvokeModelInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.InvokeModelOutput, error)
}

// Model calls Bedrock models one record at a time.
type Model struct {
	Client API
	// Content resolves the s3:// sources of image and document blocks; the
	// submit already held each to its caller's upload area, so this store may
	// span every caller's area (nil: records with images or documents fail).
	Content *content.Store
	// Catalog says which models take a prompt-cache checkpoint (nil: the embedded catalog).
	Catalog *model.Catalog
	// MediaBytesInFlight bounds the image and document bytes held by the
	// records running at once (default DefaultMediaBytesInFlight).
	MediaBytesInFlight int64

	media mediaBudget
}

// UseContent sets the store image and document sources are read from.
func (m *Model) UseContent(st *content.Store) { m.Content = st }

var _ ondemand.OnDemandModel = (*Model)(nil)

// NoSDKRetries turns off the SDK's own retries: the on-demand runner owns retry
// with backoff and jitter, and two retry layers would multiply the attempts.
func NoSDKRetries(o *bedrockruntime.Options) { o.RetryMaxAttempts = 1 }

// Invoke runs one record. Throttling and transient service errors wrap
// ondemand.ErrRetryable; a model or validation error is a *ondemand.CallError.
func (m *Model) Invoke(ctx context.Context, model string, in job.Input, p job.Params) (ondemand.OnDemandResult, error) {
	if in.Text != "" {
		// Embedding models take their native body through InvokeModel (Converse refuses them).
		body, err := bedrock.EmbeddingBody(model, []string{in.Text}, p.Embed)
		if err != nil {
			return ondemand.OnDemandResult{}, &ondemand.CallError{Code: "ValidationException", Message: err.Error()}
		}
		in.ModelInput = body
	}
	if len(in.ModelInput) > 0 {
		return m.invoke(ctx, model, in)
	}
	msgs, parts, release, err := m.mediaMessages(ctx, model, in)
	defer release()
	if err == nil && msgs == nil {
		msgs, err = messages(in)
	}
	if err != nil {
		if ctx.Err() != nil { // stopped while waiting for the media budget
			return ondemand.OnDemandResult{}, ctx.Err()
		}
		return ondemand.OnDemandResult{}, &ondemand.CallError{Code: "ValidationException", Message: err.Error()}
	}
	req := &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msgs,
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(p.MaxTokens))}}
	if p.Temperature != nil {
		req.InferenceConfig.Temperature = aws.Float32(float32(*p.Temperature))
	}
	sys := p.System
	if in.System != "" {
		sys = in.System
	}
	if sys != "" {
		req.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: sys}}
		// Only the job-level system prompt is stable across records; a per-record
		// override would write a cache entry nobody reads.
		if in.System == "" && m.cacheable(model) {
			req.System = append(req.System, &types.SystemContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}})
		}
	}
	var opts []func(*bedrockruntime.Options)
	if parts != nil {
		opts = append(opts, parts.option())
	}
	out, err := m.Client.Converse(ctx, req, opts...)
	if err != nil {
		return ondemand.OnDemandResult{}, classify(err)
	}
	res := ondemand.OnDemandResult{StopReason: string(out.StopReason)}
	if msg, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		var b strings.Builder
		for _, c := range msg.Value.Content {
			if t, ok := c.(*types.ContentBlockMemberText); ok {
				b.WriteString(t.Value)
			}
		}
		res.Output = b.String()
	}
	if u := out.Usage; u != nil {
		res.InputTokens = int64(aws.ToInt32(u.InputTokens))
		res.OutputTokens = int64(aws.ToInt32(u.OutputTokens))
		res.CacheReadTokens = int64(aws.ToInt32(u.CacheReadInputTokens))
		res.CacheWriteTokens = int64(aws.ToInt32(u.CacheWriteInputTokens))
	}
	return res, nil
}

// invoke passes a native body through InvokeModel and reads the answer the way a
// batch output line's modelOutput is read, so both paths store identical records.
func (m *Model) invoke(ctx context.Context, model string, in job.Input) (ondemand.OnDemandResult, error) {
	out, err := m.Client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(model), Body: in.ModelInput, ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
	})
	if err != nil {
		return ondemand.OnDemandResult{}, classify(err)
	}
	line, err := json.Marshal(map[string]any{"recordId": in.ID, "modelInput": json.RawMessage("{}"), "modelOutput": json.RawMessage(out.Body)})
	if err != nil {
		return ondemand.OnDemandResult{}, &ondemand.CallError{Code: "ModelOutputUnreadable", Message: "the model answered with invalid JSON"}
	}
	rec, err := bedrock.ParseOutputLine(line)
	if err != nil {
		return ondemand.OnDemandResult{}, &ondemand.CallError{Code: "ModelOutputUnreadable", Message: err.Error()}
	}
	if rec.InputTokens == 0 && rec.OutputTokens == 0 {
		// Some families (Cohere Embed, Mistral) put no counts in the body;
		// InvokeModel sends them in X-Amzn-Bedrock-Input/Output-Token-Count.
		rec.InputTokens, rec.OutputTokens = headerTokens(out.ResultMetadata)
	}
	return ondemand.OnDemandResult{Output: rec.Output, StopReason: rec.StopReason, InputTokens: rec.InputTokens, OutputTokens: rec.OutputTokens}, nil
}

// headerTokens reads the token-count headers of an InvokeModel response.
func headerTokens(md middleware.Metadata) (in, out int64) {
	raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
	if !ok || raw == nil {
		return 0, 0
	}
	in, _ = strconv.ParseInt(raw.Header.Get("X-Amzn-Bedrock-Input-Token-Count"), 10, 64)
	out, _ = strconv.ParseInt(raw.Header.Get("X-Amzn-Bedrock-Output-Token-Count"), 10, 64)
	return in, out
}

// classify sorts runtime errors: throttling and 5xx are retried, everything else
// fails the record with Bedrock's own code and message.
func classify(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException", "InternalServerException", "ModelTimeoutException":
			return fmt.Errorf("%w: %s: %s", ondemand.ErrRetryable, ae.ErrorCode(), ae.ErrorMessage())
		}
		return &ondemand.CallError{Code: ae.ErrorCode(), Message: ae.ErrorMessage()}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// Connection resets and the like: transient.
	return fmt.Errorf("%w: %v", ondemand.ErrRetryable, err)
}

// SupportsPromptCache reports whether Bedrock accepts a cachePoint for the
// model, as the embedded model catalog says (its caching rules).
func SupportsPromptCache(id string) bool { return (&Model{}).cacheable(id) }

// cacheable reads the model's caching rules from the catalog (the embedded
// one when Catalog is nil).
func (m *Model) cacheable(id string) bool {
	cat := m.Catalog
	if cat == nil {
		cat = model.Default()
	}
	e, ok := cat.Lookup(id)
	return ok && e.Caching != nil
}

type inMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// messages converts a prompt or an Anthropic-style conversation to Converse
// messages; only text content is supported on demand.
func messages(in job.Input) ([]types.Message, error) {
	if in.Prompt != "" {
		return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: in.Prompt}}}}, nil
	}
	var raw []inMessage
	if err := json.Unmarshal(in.Messages, &raw); err != nil {
		return nil, fmt.Errorf("messages: not an array of {role, content}: %v", err)
	}
	out := make([]types.Message, 0, len(raw))
	for i, m := range raw {
		var blocks []types.ContentBlock
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			blocks = append(blocks, &types.ContentBlockMemberText{Value: s})
		} else {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return nil, fmt.Errorf("messages[%d].content: want a string or content blocks", i)
			}
			for j, p := range parts {
				if p.Type != "text" {
					return nil, fmt.Errorf("messages[%d].content[%d]: on-demand runs take text blocks only (got %q); use mode batch", i, j, p.Type)
				}
				blocks = append(blocks, &types.ContentBlockMemberText{Value: p.Text})
			}
		}
		out = append(out, types.Message{Role: types.ConversationRole(m.Role), Content: blocks})
	}
	return out, nil
}
