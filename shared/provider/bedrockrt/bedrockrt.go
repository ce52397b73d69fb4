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
	"github.com/mcpbatch/mcpbatch/shared/service"
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
	if len(in.ModelInput) > 0 && bedrock.IsNativeBody(in.ModelInput) {
		return m.invoke(ctx, model, in, p.Tier)
	}
	if len(in.ModelInput) > 0 {
		// A caller's own Converse request, as a Converse batch job takes it.
		req, err := converseBody(model, in.ModelInput)
		if err != nil {
			return ondemand.OnDemandResult{}, &ondemand.CallError{Code: "ValidationException", Message: err.Error()}
		}
		req.ServiceTier = serviceTier(p.Tier)
		return m.converse(ctx, req, nil)
	}
	rules := m.rules(model)
	r, err := bedrock.NewRequest(-1, in, p, rules)
	var msgs []types.Message
	var ps *parts
	release := func() {}
	if err == nil {
		msgs, ps, release, err = m.converseMessages(ctx, model, in.ID, r, rules)
	}
	defer release()
	if err != nil {
		if ctx.Err() != nil { // stopped while waiting for the media budget
			return ondemand.OnDemandResult{}, ctx.Err()
		}
		return ondemand.OnDemandResult{}, &ondemand.CallError{Code: "ValidationException", Message: err.Error()}
	}
	req := &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msgs, ServiceTier: serviceTier(p.Tier),
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(r.MaxTokens))}}
	if r.Temperature != nil {
		req.InferenceConfig.Temperature = aws.Float32(float32(*r.Temperature))
	}
	if r.OutputSchema != "" {
		req.OutputConfig = &types.OutputConfig{TextFormat: &types.OutputFormat{Type: types.OutputFormatTypeJsonSchema,
			Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{
				Name: aws.String(bedrock.OutputSchemaName), Schema: aws.String(r.OutputSchema)}}}}
	}
	if r.System != "" {
		req.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: r.System}}
		// Only the job-level system prompt is stable across records; a per-record
		// override would write a cache entry nobody reads.
		if in.System == "" && rules != nil && rules.Caching != nil {
			req.System = append(req.System, &types.SystemContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}})
		}
	}
	return m.converse(ctx, req, ps)
}

// converse sends a Converse request and reads its answer; parts, when set,
// are the media streamed into the body as it is sent.
func (m *Model) converse(ctx context.Context, req *bedrockruntime.ConverseInput, ps *parts) (ondemand.OnDemandResult, error) {
	out, err := m.Client.Converse(ctx, req, ps.options()...)
	if err != nil {
		return ondemand.OnDemandResult{}, classify(err)
	}
	res := ondemand.OnDemandResult{StopReason: string(out.StopReason)}
	if msg, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		var b strings.Builder
		for _, c := range msg.Value.Content {
			switch t := c.(type) {
			case *types.ContentBlockMemberText:
				b.WriteString(t.Value)
			case *types.ContentBlockMemberCitationsContent:
				// Claude's answer about a document read with citations on.
				for _, g := range t.Value.Content {
					if gt, ok := g.(*types.CitationGeneratedContentMemberText); ok {
						b.WriteString(gt.Value)
					}
				}
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
func (m *Model) invoke(ctx context.Context, model string, in job.Input, tier string) (ondemand.OnDemandResult, error) {
	req := &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(model), Body: in.ModelInput, ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
	}
	if t := serviceTier(tier); t != nil {
		req.ServiceTier = t.Type
	}
	out, err := m.Client.InvokeModel(ctx, req)
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
	return ondemand.OnDemandResult{Output: rec.Output, StopReason: rec.StopReason, InputTokens: rec.InputTokens, OutputTokens: rec.OutputTokens,
		CacheReadTokens: rec.CacheReadTokens, CacheWriteTokens: rec.CacheWriteTokens}, nil
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
func SupportsPromptCache(id string) bool {
	r := (&Model{}).rules(id)
	return r != nil && r.Caching != nil
}

// rules is the model's catalog row (the embedded catalog when Catalog is
// nil), or nil when the catalog does not know it.
func (m *Model) rules(id string) *model.Model {
	cat := m.Catalog
	if cat == nil {
		cat = model.Default()
	}
	e, _ := cat.Lookup(id)
	return e
}

var _ ondemand.ManyEmbedder = (*Model)(nil)

// EmbedMany embeds several texts in one InvokeModel call (Cohere Embed takes
// up to 96; the runner sizes the groups from the catalog). Each record gets
// its own vector as {"embeddings":[...]}; the call's input tokens (from the
// response headers, Cohere puts none in the body) are shared out by text
// length, so they add up to what was billed.
func (m *Model) EmbedMany(ctx context.Context, model string, ins []job.Input, p job.Params) ([]ondemand.OnDemandResult, error) {
	texts := make([]string, len(ins))
	total := 0
	for i, in := range ins {
		texts[i] = in.Text
		total += len(in.Text)
	}
	body, err := bedrock.EmbeddingBody(model, texts, p.Embed)
	if err != nil {
		return nil, &ondemand.CallError{Code: "ValidationException", Message: err.Error()}
	}
	out, err := m.Client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(model), Body: body, ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
	})
	if err != nil {
		return nil, classify(err)
	}
	vecs, err := bedrock.SplitVectors(out.Body)
	if err != nil || len(vecs) != len(ins) {
		return nil, &ondemand.CallError{Code: "ModelOutputUnreadable", Message: fmt.Sprintf("want %d vectors: %v", len(ins), err)}
	}
	in, _ := headerTokens(out.ResultMetadata)
	res := make([]ondemand.OnDemandResult, len(ins))
	left := in
	for i := range ins {
		share := in * int64(len(texts[i])) / int64(max(total, 1))
		if i == len(ins)-1 {
			share = left
		}
		left -= share
		res[i] = ondemand.OnDemandResult{Output: string(vecs[i]), InputTokens: share}
	}
	return res, nil
}

// serviceTier is the runtime's serviceTier for a job's tier; nil for standard,
// which is the runtime's default when the field is absent.
func serviceTier(tier string) *types.ServiceTier {
	if tier == "" {
		return nil
	}
	return &types.ServiceTier{Type: types.ServiceTierType(tier)}
}

// tokenCounter is the CountTokens operation of the bedrockruntime client.
type tokenCounter interface {
	CountTokens(ctx context.Context, in *bedrockruntime.CountTokensInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.CountTokensOutput, error)
}

// CountTokens counts one record's input tokens exactly with Bedrock's
// CountTokens, on the Converse request Invoke would send (prompt,
// conversation and system prompt; images and documents included).
// Embedding texts and native bodies are not counted (an error says so).
func (m *Model) CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error) {
	tc, ok := m.Client.(tokenCounter)
	if !ok {
		return 0, errors.New("the runtime client cannot count tokens")
	}
	if in.Text != "" || len(in.ModelInput) > 0 {
		return 0, errors.New("only prompt and conversation records are counted")
	}
	rules := m.rules(model)
	r, err := bedrock.NewRequest(-1, in, p, rules)
	if err != nil {
		return 0, err
	}
	msgs, ps, release, err := m.converseMessages(ctx, model, in.ID, r, rules)
	if release != nil {
		defer release()
	}
	if err != nil {
		return 0, err
	}
	req := &types.ConverseTokensRequest{Messages: msgs}
	if r.System != "" {
		req.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: r.System}}
	}
	out, err := tc.CountTokens(ctx, &bedrockruntime.CountTokensInput{ModelId: aws.String(model), Input: &types.CountTokensInputMemberConverse{Value: *req}},
		ps.options()...) // the media go into the body as it is sent, as for Converse
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "ThrottlingException" {
		// Throttled after the SDK's retries: the dry run may keep the counts so far.
		return 0, errors.Join(service.ErrProviderBusy, fmt.Errorf("count tokens of record %s: %w", in.ID, err))
	}
	if err != nil {
		return 0, fmt.Errorf("count tokens of record %s: %w", in.ID, err)
	}
	return int64(aws.ToInt32(out.InputTokens)), nil
}
