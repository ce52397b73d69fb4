package bedrock

// Each Bedrock model family's InvokeModel body and answer, and the Converse
// request and answer, shared by the runtime simulator and the batch
// simulator's output lines (Bedrock writes the InvokeModel response body as
// modelOutput, or the Converse response for Converse jobs).

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// invocation is one model call: the model as called, what the table says of
// it, and the ids the answer carries.
type invocation struct {
	modelID  string // as called: base id, profile id or ARN
	base     string // foundation model id, "" for an application inference profile
	m        bedrockModel
	known    bool
	fam      family
	msgID    string // id of a Claude message / Cohere response
	recordID string // batch record id, "" on the runtime
	// replyTokens pads a batch answer to about this many tokens (BedrockSim.ReplyTokens).
	replyTokens int
	cache       *promptCache // nil: no prompt caching (batch)
	// violations is the share of structured answers that go wrong (nil: none).
	violations *sim.Violations
}

// answer is a model's response body and its token counts.
type answer struct {
	body                  any
	in, out               int64
	cacheRead, cacheWrite int64
}

// malformedInput words a body that breaks the model's schema the way Bedrock does.
func malformedInput(format string, a ...any) error {
	return fmt.Errorf("Malformed input request: %s, please reformat your input and try again.", fmt.Sprintf(format, a...))
}

// tooManyTokens is Bedrock's answer to a max_tokens above the model's limit; the
// Converse wording is documented in
// https://github.com/vercel/ai/issues/2772 ("The maximum tokens you requested
// exceeds the model limit of 4096. Try again with a maximum tokens value that is
// lower than 4096."), the native-body one follows Bedrock's JSON-schema errors
// ("8192 is not less or equal to 8191", https://github.com/langchain-ai/langchain/issues/9697).
func tooManyTokens(native bool, field string, got, limit int) error {
	if native {
		return malformedInput("#/%s: %d is not less or equal to %d", field, got, limit)
	}
	return fmt.Errorf("The maximum tokens you requested exceeds the model limit of %d. Try again with a maximum tokens value that is lower than %d.", limit, limit)
}

// outputLimit is the model's max output, raised by the 128K beta flag where documented.
func (inv invocation) outputLimit(betas []string) (int, bool) {
	if !inv.known || inv.m.maxOut == 0 {
		return 0, false
	}
	if inv.m.maxOutBeta > 0 && slices.Contains(betas, sim.Output128k) {
		return inv.m.maxOutBeta, true
	}
	return inv.m.maxOut, true
}

// promptCache remembers which prompt prefixes were written, per model.
type promptCache struct {
	mu   sync.Mutex
	seen map[[32]byte]bool
}

// touch reports whether prefix was cached for model, and caches it.
func (c *promptCache) touch(model, prefix string) bool {
	key := sha256.Sum256([]byte(model + "\x00" + prefix))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[[32]byte]bool{}
	}
	hit := c.seen[key]
	c.seen[key] = true
	return hit
}

// cached splits in tokens into (uncached, read, write) for a cacheable prefix.
func (inv invocation) cached(in int64, prefix string) (int64, int64, int64) {
	if inv.cache == nil || prefix == "" {
		return in, 0, 0
	}
	ct := min(sim.Tokens(prefix), in)
	rest := max(1, in-ct)
	if inv.cache.touch(inv.modelID, prefix) {
		return rest, ct, 0
	}
	return rest, 0, ct
}

var versionSuffix = regexp.MustCompile(`-v\d+(:\d+)?$`)

// replyText is the simulated answer to a prompt: the keyword classifier when
// the system prompt asks for one, else a labelled echo.
func (inv invocation) replyText(system, prompt string) string {
	if _, ok := sim.AskedCategories(system); ok || inv.recordID == "" {
		return sim.SimulatedAnswer(system, prompt, inv.recordID)
	}
	name := inv.base
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	name = versionSuffix.ReplaceAllString(name, "")
	if len(prompt) > 60 {
		prompt = strings.ToValidUTF8(prompt[:60], "") + "..."
	}
	return padReply(fmt.Sprintf("[simulated] %s reply to record %s: %q", name, inv.recordID, prompt), inv.recordID, inv.replyTokens)
}

// padReply lengthens text to about n tokens with words drawn from
// replyWords by a hash of the record id, so answers differ as real ones do.
func padReply(text, recordID string, n int) string {
	if n <= 0 || sim.Tokens(text) >= int64(n) {
		return text
	}
	h := fnv.New64a()
	h.Write([]byte(recordID))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	var b strings.Builder
	b.WriteString(text)
	for i := 0; sim.Tokens(b.String()) < int64(n); i++ {
		if i%12 == 11 {
			b.WriteString(".")
		}
		b.WriteByte(' ')
		b.WriteString(replyWords[rng.IntN(len(replyWords))])
		if rng.IntN(9) == 0 {
			fmt.Fprintf(&b, " %d", rng.IntN(100000))
		}
	}
	return b.String()
}

// replyWords are the padding vocabulary: common English words of support
// and classification answers.
var replyWords = strings.Fields(`the a of to and in is it that for on with as was this by be are from at or an have not
customer ticket billing invoice account payment refund charge card error bug crash login password reset page load slow
question feature request support team issue problem reported user users order shipping delivery address product service
plan subscription upgrade downgrade cancel renewal price discount credit balance transaction failed declined pending
confirmed resolved escalated priority urgent low medium high category classification because since however therefore
mentions describes asks about says wants needs expects reports complains notes explains confirms denies appears seems
likely clearly probably mainly first second third last next previous recent monthly annual weekly daily morning evening
browser mobile app desktop version update install email message notification screen button link form field value
number date time zone region country language settings profile security access permission role admin manager owner`)

// invokeNative answers an InvokeModel body in the family's own shape.
func invokeNative(inv invocation, raw json.RawMessage) (answer, error) {
	if inv.fam == famUnknown {
		var probe map[string]any
		if err := json.Unmarshal(raw, &probe); err != nil {
			return answer{}, malformedInput("%v", err)
		}
		inv.fam = familyOfBody(probe)
	}
	switch inv.fam {
	case famClaude:
		return invokeClaude(inv, raw)
	case famNova:
		return invokeNova(inv, raw)
	case famLlama:
		return invokeLlama(inv, raw)
	case famMistral:
		return invokeMistral(inv, raw)
	case famTitanEmbed:
		return invokeTitanEmbed(inv, raw)
	case famCohereEmbed:
		return invokeCohereEmbed(inv, raw)
	case famCohereEmbedV4:
		return invokeCohereEmbedV4(inv, raw)
	case famNovaEmbed:
		return invokeNovaEmbed(inv, raw)
	}
	text := fmt.Sprintf("[simulated] %s reply to record %s", inv.modelID, inv.recordID)
	return answer{body: map[string]any{"simulated": true, "outputText": text}, out: sim.Tokens(text)}, nil
}

type claudeRequest struct {
	AnthropicVersion string          `json:"anthropic_version"`
	AnthropicBeta    []string        `json:"anthropic_beta"`
	MaxTokens        int             `json:"max_tokens"`
	System           json.RawMessage `json:"system"`
	Messages         []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

type claudeResponse struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []sim.TextBlock `json:"content"`
	StopReason   string          `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        claudeUsage     `json:"usage"`
}

func checkClaude(req claudeRequest) error {
	switch {
	case req.AnthropicVersion == "":
		return malformedInput("#: required key [anthropic_version] not found")
	case req.MaxTokens <= 0:
		return malformedInput("#: required key [max_tokens] not found")
	case len(req.Messages) == 0:
		return malformedInput("#: required key [messages] not found")
	}
	return nil
}

func invokeClaude(inv invocation, raw json.RawMessage) (answer, error) {
	var req claudeRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return answer{}, malformedInput("%v", err)
	}
	if err := checkClaude(req); err != nil {
		return answer{}, err
	}
	if limit, ok := inv.outputLimit(req.AnthropicBeta); ok && req.MaxTokens > limit {
		return answer{}, tooManyTokens(true, "max_tokens", req.MaxTokens, limit)
	}
	contents := make([]json.RawMessage, len(req.Messages))
	for i, m := range req.Messages {
		contents[i] = m.Content
	}
	seen, err := sim.ClaudeMedia(contents, bedrockReads(inv), true)
	if err != nil {
		return answer{}, err
	}
	system, prefix := sim.SystemText(req.System)
	prompt := ""
	in := sim.Tokens(system) + sim.SeenTokens(seen)
	for _, m := range req.Messages {
		for _, b := range sim.Blocks(m.Content) {
			in += sim.Tokens(b.Text)
		}
		if m.Role == "user" {
			prompt = sim.ContentText(m.Content)
		}
	}
	in = max(1, in)
	text, out, capped := sim.Cut(sim.WithSeen(inv.replyText(system, prompt), seen), req.MaxTokens)
	resp := claudeResponse{ID: inv.msgID, Type: "message", Role: "assistant", Model: inv.modelID, StopReason: "end_turn",
		Content: []sim.TextBlock{{Type: "text", Text: text}}}
	if capped {
		resp.StopReason = "max_tokens"
	}
	var read, write int64
	in, read, write = inv.cached(in, prefix)
	resp.Usage = claudeUsage{InputTokens: in, OutputTokens: out, CacheCreationInputTokens: write, CacheReadInputTokens: read}
	return answer{body: resp, in: in, out: out, cacheRead: read, cacheWrite: write}, nil
}

type novaBlock struct {
	Text *string `json:"text,omitempty"`
}

type novaRequest struct {
	System   []novaBlock `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	InferenceConfig struct {
		MaxTokens    *int `json:"maxTokens"`
		MaxNewTokens *int `json:"max_new_tokens"`
	} `json:"inferenceConfig"`
}

// invokeNova answers Nova's native body, whose answer is Converse-like:
// https://docs.aws.amazon.com/nova/latest/userguide/complete-response-schema.html
func invokeNova(inv invocation, raw json.RawMessage) (answer, error) {
	var req novaRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return answer{}, malformedInput("%v", err)
	}
	if len(req.Messages) == 0 {
		return answer{}, malformedInput("#: required key [messages] not found")
	}
	limit := 0
	for field, v := range map[string]*int{"inferenceConfig/maxTokens": req.InferenceConfig.MaxTokens, "inferenceConfig/max_new_tokens": req.InferenceConfig.MaxNewTokens} {
		if v == nil {
			continue
		}
		if *v < 1 {
			return answer{}, malformedInput("#/%s: %d is not greater or equal to 1", field, *v)
		}
		if lim, ok := inv.outputLimit(nil); ok && *v > lim {
			return answer{}, tooManyTokens(true, field, *v, lim)
		}
		limit = *v
	}
	var system strings.Builder
	for _, b := range req.System {
		if b.Text != nil {
			system.WriteString(*b.Text)
		}
	}
	in := sim.Tokens(system.String())
	prompt := ""
	for i, m := range req.Messages {
		var content []novaBlock
		if err := json.Unmarshal(m.Content, &content); err != nil {
			return answer{}, malformedInput("#/messages/%d/content: expected type: JSONArray", i)
		}
		for _, b := range content {
			if b.Text != nil {
				in += sim.Tokens(*b.Text)
				if m.Role == "user" {
					prompt = *b.Text
				}
			}
		}
	}
	in = max(1, in)
	text, out, capped := sim.Cut(inv.replyText(system.String(), prompt), limit)
	stop := "end_turn"
	if capped {
		stop = "max_tokens"
	}
	return answer{in: in, out: out, body: map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"text": text}}}},
		"stopReason": stop,
		"usage": map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": in + out,
			"cacheReadInputTokenCount": 0, "cacheWriteInputTokenCount": 0},
	}}, nil
}

// invokeLlama answers Meta's native body:
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-meta.html
func invokeLlama(inv invocation, raw json.RawMessage) (answer, error) {
	c, err := completePrompt(inv, raw, "max_gen_len")
	if err != nil {
		return answer{}, err
	}
	return answer{in: c.in, out: c.out, body: map[string]any{
		"generation": c.text, "prompt_token_count": c.in, "generation_token_count": c.out, "stop_reason": c.stop,
	}}, nil
}

// invokeMistral answers Mistral's text-completion body; it reports no token
// counts in the body (only in the X-Amzn-Bedrock-*-Token-Count headers):
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-mistral-text-completion.html
func invokeMistral(inv invocation, raw json.RawMessage) (answer, error) {
	c, err := completePrompt(inv, raw, "max_tokens")
	if err != nil {
		return answer{}, err
	}
	return answer{in: c.in, out: c.out, body: map[string]any{
		"outputs": []any{map[string]any{"text": c.text, "stop_reason": c.stop}},
	}}, nil
}

// completion is the simulated answer to a prompt-completion body.
type completion struct {
	text    string
	in, out int64
	stop    string // "stop", or "length" when cut at the cap
}

// completePrompt reads a prompt-completion body (Llama, Mistral) whose output
// cap is named maxField (documented default 512), refusing a cap over the
// model's maximum, and answers it.
func completePrompt(inv invocation, raw json.RawMessage, maxField string) (completion, error) {
	var req struct {
		Prompt    *string `json:"prompt"`
		MaxGenLen *int    `json:"max_gen_len"`
		MaxTokens *int    `json:"max_tokens"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return completion{}, malformedInput("%v", err)
	}
	if req.Prompt == nil {
		return completion{}, malformedInput("#: required key [prompt] not found")
	}
	capField := req.MaxGenLen
	if maxField == "max_tokens" {
		capField = req.MaxTokens
	}
	limit := 512
	if capField != nil {
		if lim, ok := inv.outputLimit(nil); ok && *capField > lim {
			return completion{}, tooManyTokens(true, maxField, *capField, lim)
		}
		limit = *capField
	}
	c := completion{in: max(1, sim.Tokens(*req.Prompt)), stop: "stop"}
	var capped bool
	c.text, c.out, capped = sim.Cut(inv.replyText("", *req.Prompt), limit)
	if capped {
		c.stop = "length"
	}
	return c, nil
}

func invokeTitanEmbed(inv invocation, raw json.RawMessage) (answer, error) {
	var req struct {
		InputText  *string `json:"inputText"`
		Dimensions *int    `json:"dimensions"`
		Normalize  *bool   `json:"normalize"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return answer{}, malformedInput("%v", err)
	}
	switch {
	case req.InputText == nil:
		return answer{}, malformedInput("#: required key [inputText] not found")
	case len([]rune(*req.InputText)) > titanMaxChars:
		return answer{}, malformedInput("#/inputText: expected maxLength: %d, actual: %d", titanMaxChars, len([]rune(*req.InputText)))
	case req.Dimensions != nil && !slices.Contains(titanDims, *req.Dimensions):
		return answer{}, malformedInput("#/dimensions: %d is not a valid enum value", *req.Dimensions)
	}
	if n := sim.Tokens(*req.InputText); n > titanMaxTokens {
		// Titan's wording, as Bedrock answers it.
		return answer{}, fmt.Errorf("400 Bad Request: Too many input tokens. Max input tokens: %d, request input token count: %d", titanMaxTokens, n)
	}
	dims := titanDefaultDims
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	norm := req.Normalize == nil || *req.Normalize
	v := embed(*req.InputText, dims, norm)
	in := max(1, sim.Tokens(*req.InputText))
	return answer{in: in, body: map[string]any{
		"embedding": v, "inputTextTokenCount": in, "embeddingsByType": map[string]any{"float": v},
	}}, nil
}

func invokeCohereEmbed(inv invocation, raw json.RawMessage) (answer, error) {
	var req struct {
		Texts          *[]string `json:"texts"`
		InputType      *string   `json:"input_type"`
		EmbeddingTypes []string  `json:"embedding_types"`
		Truncate       *string   `json:"truncate"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return answer{}, malformedInput("%v", err)
	}
	truncate, err := cohereCommon(req.Texts, req.InputType, req.Truncate)
	if err != nil {
		return answer{}, err
	}
	var in int64
	vecs := make([][]float64, 0, len(*req.Texts))
	for i, t := range *req.Texts {
		if n := len([]rune(t)); n > cohereMaxChars {
			return answer{}, malformedInput("#/texts/%d: expected maxLength: %d, actual: %d", i, cohereMaxChars, n)
		}
		if n := sim.Tokens(t); n > cohereMaxTokens {
			if truncate == "NONE" {
				return answer{}, fmt.Errorf("texts[%d]: input is %d tokens, more than the model's maximum of %d; with truncate NONE a longer input fails (set truncate to START or END)", i, n, cohereMaxTokens)
			}
			t = cutTokens(t, cohereMaxTokens, truncate == "START")
		}
		in += sim.Tokens(t)
		vecs = append(vecs, embed(t, cohereDims, true))
	}
	body := map[string]any{"id": inv.msgID, "response_type": "embeddings_floats", "embeddings": vecs, "texts": *req.Texts}
	if len(req.EmbeddingTypes) > 0 {
		// Only float vectors are simulated; other requested types are left out.
		body["response_type"] = "embeddings_by_type"
		body["embeddings"] = map[string]any{"float": vecs}
	}
	return answer{in: max(1, in), body: body}, nil
}

type converseBlock struct {
	Text       *string           `json:"text,omitempty"`
	CachePoint json.RawMessage   `json:"cachePoint,omitempty"`
	Image      *converseImage    `json:"image,omitempty"`
	Document   *converseDocument `json:"document,omitempty"`
}

type converseRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content []converseBlock `json:"content"`
	} `json:"messages"`
	System          []converseBlock `json:"system"`
	InferenceConfig struct {
		MaxTokens   *int     `json:"maxTokens"`
		Temperature *float64 `json:"temperature"`
		TopP        *float64 `json:"topP"`
	} `json:"inferenceConfig"`
	AdditionalModelRequestFields struct {
		AnthropicBeta []string `json:"anthropic_beta"`
	} `json:"additionalModelRequestFields"`
	ServiceTier *struct {
		Type string `json:"type"`
	} `json:"serviceTier"`
	// OutputConfig is Converse structured output
	// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_OutputConfig.html).
	OutputConfig *struct {
		TextFormat *struct {
			Type      string `json:"type"`
			Structure struct {
				JSONSchema *struct {
					Schema json.RawMessage `json:"schema"`
					Name   string          `json:"name"`
				} `json:"jsonSchema"`
			} `json:"structure"`
		} `json:"textFormat"`
	} `json:"outputConfig"`
}

// converseSchema is the schema a Converse request asks its answer to
// conform to: natively (outputConfig) or in its system prompt.
func converseSchema(req converseRequest, system string) (schema any, native bool, err error) {
	if oc := req.OutputConfig; oc != nil && oc.TextFormat != nil {
		tf := oc.TextFormat
		switch {
		case tf.Type != "json_schema":
			return nil, false, fmt.Errorf("1 validation error detected: Value '%s' at 'outputConfig.textFormat.type' failed to satisfy constraint: Member must satisfy enum value set: [json_schema]", tf.Type)
		case tf.Structure.JSONSchema == nil || len(tf.Structure.JSONSchema.Schema) == 0:
			return nil, false, errors.New("outputConfig.textFormat.structure.jsonSchema.schema is required")
		}
		s, err := sim.NativeSchema(tf.Structure.JSONSchema.Schema)
		if err != nil {
			return nil, false, fmt.Errorf("outputConfig.textFormat.structure.jsonSchema.schema: %v", err)
		}
		return s, true, nil
	}
	return sim.PromptedSchema(system), false, nil
}

// errConverseUnsupported is Bedrock's Converse answer for an embedding model.
var errConverseUnsupported = errors.New("This action doesn't support the model that you provided. Try again with a supported text or chat model.")

// converse answers a Converse request in the Converse shape, for every family.
// prompt is the last user text, for FailMarker.
func converse(inv invocation, req converseRequest, latencyMs int64) (answer, string, error) {
	if inv.fam.embedding() {
		return answer{}, "", errConverseUnsupported
	}
	if err := checkConverseTurns(req); err != nil {
		return answer{}, "", err
	}
	if err := converseSystemAllowed(inv, req); err != nil {
		return answer{}, "", err
	}
	if err := converseSamplingAllowed(inv, req); err != nil {
		return answer{}, "", err
	}
	limit := 0
	if mt := req.InferenceConfig.MaxTokens; mt != nil {
		if *mt < 1 {
			return answer{}, "", fmt.Errorf("1 validation error detected: Value '%d' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1", *mt)
		}
		if lim, ok := inv.outputLimit(req.AdditionalModelRequestFields.AnthropicBeta); ok && *mt > lim {
			return answer{}, "", tooManyTokens(false, "", *mt, lim)
		}
		limit = *mt
	}
	seen, err := converseMedia(inv, req)
	if err != nil {
		return answer{}, "", err
	}
	var cachedPrefix strings.Builder
	var sysText strings.Builder
	for _, b := range req.System {
		if b.Text != nil {
			sysText.WriteString(*b.Text)
		}
		if len(b.CachePoint) > 0 {
			cachedPrefix.Reset()
			cachedPrefix.WriteString(sysText.String())
		}
	}
	sys, prompt, in := converseText(req)
	in = max(1, in+sim.SeenTokens(seen))
	schema, native, err := converseSchema(req, sys)
	if err != nil {
		return answer{}, "", err
	}
	reply, cutShort := sim.WithSeen(inv.replyText(sys, prompt), seen), false
	if schema != nil {
		reply, cutShort = sim.StructuredAnswer(schema, native, inv.violations.Violate(sys+"\x00"+prompt), prompt)
	}
	text, out, capped := sim.Cut(reply, limit)
	stop := "end_turn"
	if capped || cutShort {
		stop = "max_tokens"
	}
	content := []any{map[string]any{"text": text}}
	if doc := citedDocument(inv, req); doc != "" && !capped {
		// Claude answers about a document read with citations on with a
		// citationsContent block beside its text (shape as recorded in
		// vercel/ai packages/amazon-bedrock/src/__fixtures__/bedrock-citations-content.json).
		cited := fmt.Sprintf(" [simulated] as %s says on page 1.", doc)
		out += sim.Tokens(cited)
		content = append(content, map[string]any{"citationsContent": map[string]any{
			"citations": []any{map[string]any{"title": doc,
				"location":      map[string]any{"documentPage": map[string]any{"documentIndex": 0, "start": 1, "end": 2}},
				"sourceContent": []any{map[string]any{"text": "[simulated] page 1"}}}},
			"content": []any{map[string]any{"text": cited}},
		}})
	}
	in, read, write := inv.cached(in, cachedPrefix.String())
	usage := map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": in + out + read + write}
	if read > 0 {
		usage["cacheReadInputTokens"] = read
	}
	if write > 0 {
		usage["cacheWriteInputTokens"] = write
	}
	return answer{in: in, out: out, cacheRead: read, cacheWrite: write, body: map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage":      usage,
		"metrics":    map[string]any{"latencyMs": latencyMs},
	}}, prompt, nil
}

// cutTokens keeps limit tokens of text (the simulator's 4 bytes a token),
// dropping its start or its end.
func cutTokens(text string, limit int, dropStart bool) string {
	if len(text) <= limit*4 {
		return text
	}
	if dropStart {
		return strings.ToValidUTF8(text[len(text)-limit*4:], "")
	}
	return strings.ToValidUTF8(text[:limit*4], "")
}

// invokeCohereEmbedV4 answers Cohere Embed v4's body with float vectors by type.
func invokeCohereEmbedV4(inv invocation, raw json.RawMessage) (answer, error) {
	var req struct {
		Texts           *[]string `json:"texts"`
		InputType       *string   `json:"input_type"`
		EmbeddingTypes  []string  `json:"embedding_types"`
		OutputDimension *int      `json:"output_dimension"`
		MaxTokens       *int      `json:"max_tokens"`
		Truncate        *string   `json:"truncate"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return answer{}, malformedInput("%v", err)
	}
	truncate, err := cohereCommon(req.Texts, req.InputType, req.Truncate)
	if err != nil {
		return answer{}, err
	}
	switch {
	case req.OutputDimension != nil && !slices.Contains(cohereV4Dims, *req.OutputDimension):
		return answer{}, malformedInput("#/output_dimension: %d is not a valid enum value", *req.OutputDimension)
	case !slices.Contains([]string{"NONE", "LEFT", "RIGHT"}, truncate):
		return answer{}, malformedInput("#/truncate: %s is not a valid enum value", truncate)
	}
	dims := cohereV4DefaultDims
	if req.OutputDimension != nil {
		dims = *req.OutputDimension
	}
	limit := cohereV4MaxTokens
	if req.MaxTokens != nil && *req.MaxTokens > 0 {
		limit = min(limit, *req.MaxTokens)
	}
	var in int64
	vecs := make([][]float64, 0, len(*req.Texts))
	for i, t := range *req.Texts {
		if n := sim.Tokens(t); n > int64(limit) {
			if truncate == "NONE" {
				return answer{}, fmt.Errorf("texts[%d]: input is %d tokens, more than the maximum of %d; with truncate NONE a longer input fails", i, n, limit)
			}
			t = cutTokens(t, limit, truncate == "LEFT")
		}
		in += sim.Tokens(t)
		vecs = append(vecs, embed(t, dims, true))
	}
	return answer{in: max(1, in), body: map[string]any{
		"id": inv.msgID, "texts": *req.Texts, "response_type": "embeddings_by_type", "embeddings": map[string]any{"float": vecs},
	}}, nil
}

// invokeNovaEmbed answers Nova Multimodal Embeddings' synchronous text body.
func invokeNovaEmbed(inv invocation, raw json.RawMessage) (answer, error) {
	var req struct {
		SchemaVersion *string `json:"schemaVersion"`
		TaskType      *string `json:"taskType"`
		Params        *struct {
			EmbeddingPurpose   *string `json:"embeddingPurpose"`
			EmbeddingDimension *int    `json:"embeddingDimension"`
			Text               *struct {
				TruncationMode *string `json:"truncationMode"`
				Value          *string `json:"value"`
			} `json:"text"`
		} `json:"singleEmbeddingParams"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return answer{}, malformedInput("%v", err)
	}
	switch {
	case req.SchemaVersion != nil && *req.SchemaVersion != "nova-multimodal-embed-v1":
		return answer{}, malformedInput("#/schemaVersion: %s is not a valid enum value", *req.SchemaVersion)
	case req.TaskType == nil:
		return answer{}, malformedInput("#: required key [taskType] not found")
	case *req.TaskType != "SINGLE_EMBEDDING":
		return answer{}, malformedInput("#/taskType: synchronous calls take SINGLE_EMBEDDING, got %s", *req.TaskType)
	case req.Params == nil:
		return answer{}, malformedInput("#: required key [singleEmbeddingParams] not found")
	case req.Params.EmbeddingPurpose == nil:
		return answer{}, malformedInput("#/singleEmbeddingParams: required key [embeddingPurpose] not found")
	case !slices.Contains(novaEmbedPurposes, *req.Params.EmbeddingPurpose):
		return answer{}, malformedInput("#/singleEmbeddingParams/embeddingPurpose: %s is not a valid enum value", *req.Params.EmbeddingPurpose)
	case req.Params.EmbeddingDimension != nil && !slices.Contains(novaEmbedDims, *req.Params.EmbeddingDimension):
		return answer{}, malformedInput("#/singleEmbeddingParams/embeddingDimension: %d is not a valid enum value", *req.Params.EmbeddingDimension)
	case req.Params.Text == nil || req.Params.Text.Value == nil:
		return answer{}, malformedInput("#/singleEmbeddingParams: required key [text] not found (only text is simulated)")
	}
	mode := "NONE"
	if m := req.Params.Text.TruncationMode; m != nil {
		mode = *m
	}
	if !slices.Contains([]string{"START", "END", "NONE"}, mode) {
		return answer{}, malformedInput("#/singleEmbeddingParams/text/truncationMode: %s is not a valid enum value", mode)
	}
	text := *req.Params.Text.Value
	if n := sim.Tokens(text); n > novaEmbedMaxTokens {
		if mode == "NONE" {
			return answer{}, fmt.Errorf("text is %d tokens, more than the maximum of %d; with truncationMode NONE a longer input fails", n, novaEmbedMaxTokens)
		}
		text = cutTokens(text, novaEmbedMaxTokens, mode == "START")
	}
	dims := novaEmbedDefaultDims
	if d := req.Params.EmbeddingDimension; d != nil {
		dims = *d
	}
	return answer{in: max(1, sim.Tokens(text)), body: map[string]any{
		"embeddings": []any{map[string]any{"embeddingType": "TEXT", "embedding": embed(text, dims, true)}},
	}}, nil
}

// citedDocument is the name of the first document a Claude request sends
// with citations on ("" when none).
func citedDocument(inv invocation, req converseRequest) string {
	if !strings.HasPrefix(inv.base, "anthropic.") {
		return ""
	}
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if d := b.Document; d != nil && d.Citations != nil && d.Citations.Enabled {
				return d.Name
			}
		}
	}
	return ""
}

// converseText is a Converse request's system text, last user text and the
// tokens of all its text blocks (images and documents not included).
func converseText(req converseRequest) (system, prompt string, in int64) {
	var sys strings.Builder
	for _, b := range req.System {
		if b.Text != nil {
			sys.WriteString(*b.Text)
		}
	}
	system = sys.String()
	in = sim.Tokens(system)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Text != nil {
				in += sim.Tokens(*b.Text)
				if m.Role == "user" {
					prompt = *b.Text
				}
			}
		}
	}
	return system, prompt, in
}

// cohereCommon checks what every Cohere Embed body requires (texts, at most
// cohereMaxTexts of them, a valid input_type) and returns its truncate
// setting, NONE when absent.
func cohereCommon(texts *[]string, inputType, truncate *string) (string, error) {
	switch {
	case texts == nil:
		return "", malformedInput("#: required key [texts] not found")
	case len(*texts) > cohereMaxTexts:
		return "", malformedInput("#/texts: expected maxItems: %d, actual: %d", cohereMaxTexts, len(*texts))
	case inputType == nil:
		return "", malformedInput("#: required key [input_type] not found")
	case !slices.Contains(cohereInputTypes, *inputType):
		return "", malformedInput("#/input_type: %s is not a valid enum value", *inputType)
	}
	if truncate == nil {
		return "NONE", nil
	}
	return *truncate, nil
}
