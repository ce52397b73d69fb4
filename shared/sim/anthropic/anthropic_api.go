package anthropic

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// ServeHTTP checks the headers every Anthropic call carries, then routes.
func (s *AnthropicSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, done := sim.BodyFirst(w, r)
	defer done()
	s.init()
	w.Header().Set("request-id", fmt.Sprintf("req_sim%d", time.Now().UnixNano()))
	version := r.Header.Get("anthropic-version")
	if version == "" {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	if _, ok := anthropicVersions[version]; !ok {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("anthropic-version: %q is not a valid version", version))
		return
	}
	if s.APIKey != "" {
		key := r.Header.Get("x-api-key")
		if key == "" {
			key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		if key != s.APIKey {
			anthropicError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

func anthropicError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{
		"type": "error", "error": map[string]string{"type": typ, "message": "SIMULATED: " + msg},
	})
}

func (s *AnthropicSim) count(op string) {
	s.mu.Lock()
	s.calls[op]++
	s.mu.Unlock()
}

// batchView is a MessageBatch on the wire.
type batchView struct {
	ID                string           `json:"id"`
	Type              string           `json:"type"`
	ProcessingStatus  string           `json:"processing_status"`
	RequestCounts     map[string]int64 `json:"request_counts"`
	CreatedAt         string           `json:"created_at"`
	ExpiresAt         string           `json:"expires_at"`
	EndedAt           *string          `json:"ended_at"`
	CancelInitiatedAt *string          `json:"cancel_initiated_at"`
	ArchivedAt        *string          `json:"archived_at"`
	ResultsURL        *string          `json:"results_url"`
}

func rfc(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	v := t.UTC().Format(time.RFC3339Nano)
	return &v
}

func (s *AnthropicSim) view(b *simBatch, base string) batchView {
	counts := map[string]int64{"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
	if b.status == anthropicEnded {
		for k, v := range b.counts {
			counts[k] = v
		}
	} else {
		// Every request is "processing" until the whole batch ends.
		counts["processing"] = int64(len(b.reqs))
	}
	v := batchView{
		ID: b.id, Type: "message_batch", ProcessingStatus: b.status, RequestCounts: counts,
		CreatedAt: *rfc(b.created), ExpiresAt: *rfc(b.created.Add(24 * time.Hour)),
		EndedAt: rfc(b.endedAt), CancelInitiatedAt: rfc(b.cancelledAt),
	}
	if b.status == anthropicEnded {
		u := base + "/v1/messages/batches/" + b.id + "/results"
		v.ResultsURL = &u
	}
	return v
}

func baseURL(r *http.Request) string { return "http://" + r.Host }

func writeAnthropicJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// wireRequest is what the simulator checks of one batch request.
type wireRequest struct {
	CustomID string     `json:"custom_id"`
	Params   wireParams `json:"params"`
}

// wireParams are the Messages params the simulator reads, in a batch request
// or a count_tokens body.
type wireParams struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	Messages  json.RawMessage `json:"messages"`
	System    json.RawMessage `json:"system"`
	Tools     json.RawMessage `json:"tools"`
	// The sampling parameters, kept to check them against the version.
	Temperature json.RawMessage `json:"temperature"`
	TopP        json.RawMessage `json:"top_p"`
	TopK        json.RawMessage `json:"top_k"`
	// OutputConfig is structured output: format {type: json_schema, schema}.
	OutputConfig *struct {
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

// messagesSchema is the schema a Messages request asks its answer to
// conform to: natively (output_config.format) or in its system prompt.
func messagesSchema(wp *wireParams) (schema any, native bool, err error) {
	if oc := wp.OutputConfig; oc != nil && oc.Format != nil {
		switch {
		case oc.Format.Type != "json_schema":
			return nil, false, fmt.Errorf("output_config.format.type: Input should be 'json_schema'")
		case len(oc.Format.Schema) == 0:
			return nil, false, fmt.Errorf("output_config.format.schema: Field required")
		}
		s, err := sim.NativeSchema(oc.Format.Schema)
		if err != nil {
			return nil, false, fmt.Errorf("output_config.format.schema: %v", err)
		}
		return s, true, nil
	}
	sys, _ := sim.SystemText(wp.System)
	return sim.PromptedSchema(sys), false, nil
}

// lastUserText is the text of the last user turn of a messages array.
func lastUserText(raw json.RawMessage) string {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(raw, &msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return sim.ContentText(msgs[i].Content)
		}
	}
	return ""
}

// cacheTTL reads the ttl of the last cache_control in a system value: "1h" or
// the default 5 minutes.
// https://platform.claude.com/docs/en/build-with-claude/prompt-caching
func cacheTTL(system json.RawMessage) time.Duration {
	ttl := 5 * time.Minute
	for _, b := range sim.Blocks(system) {
		var cc struct {
			TTL string `json:"ttl"`
		}
		if len(b.CacheControl) > 0 && json.Unmarshal(b.CacheControl, &cc) == nil {
			ttl = 5 * time.Minute
			if cc.TTL == "1h" {
				ttl = time.Hour
			}
		}
	}
	return ttl
}

// requestTokens estimates a request's input tokens and its cacheable system
// prefix: the text of the system prompt and the messages' text blocks, and
// the tool definitions as written.
func requestTokens(system, messages, tools json.RawMessage) (in int64, prefix string) {
	all, prefix := sim.SystemText(system)
	in = sim.Tokens(all)
	if len(tools) > 0 && string(tools) != "null" {
		in += sim.Tokens(string(tools))
	}
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(messages, &msgs)
	for _, m := range msgs {
		for _, b := range sim.Blocks(m.Content) {
			in += sim.Tokens(b.Text)
		}
	}
	return max(1, in), prefix
}

var errTooLarge = errors.New("too large")

type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// create reads {"requests":[...]} as a stream, so a 256 MB body is never held whole.
func (s *AnthropicSim) create(w http.ResponseWriter, r *http.Request) {
	s.count("create")
	if s.OnCreate != nil {
		s.OnCreate()
	}
	if s.Busy != nil && s.Busy() {
		anthropicError(w, http.StatusTooManyRequests, "rate_limit_error", "too many batch creations; retry later")
		return
	}
	dec := json.NewDecoder(bufio.NewReaderSize(&limitedReader{r: r.Body, left: s.MaxBytes + 1}, 64<<10))
	reqs, model, code, typ, msg := s.readRequests(dec, anthropicVersions[r.Header.Get("anthropic-version")])
	if code != 0 {
		anthropicError(w, code, typ, msg)
		return
	}
	s.mu.Lock()
	b := &simBatch{id: s.newID(), model: model, created: s.Now().UTC(), status: anthropicInProgress, reqs: reqs, seed: s.Seed + uint64(s.seq),
		betas: betaFlags(r.Header)}
	s.batches[b.id] = b
	s.order = append(s.order, b)
	v := s.view(b, baseURL(r))
	s.mu.Unlock()
	s.Log.Info("anthropic sim: batch created (simulated)", "batch", b.id, "requests", len(reqs), "model", model)
	if s.AcceptThenFail != nil {
		if code := s.AcceptThenFail(); code != 0 {
			typ := "api_error"
			if code == 529 {
				typ = "overloaded_error"
			}
			s.Log.Info("anthropic sim: batch kept, answer replaced by an error (simulated)", "batch", b.id, "status", code)
			anthropicError(w, code, typ, "SIMULATED: the batch was accepted but this answer failed")
			return
		}
	}
	writeAnthropicJSON(w, v)
}

func (s *AnthropicSim) readRequests(dec *json.Decoder, version anthropicVersion) (reqs []simReq, model string, code int, typ, msg string) {
	bad := func(m string, a ...any) ([]simReq, string, int, string, string) {
		return nil, "", http.StatusBadRequest, "invalid_request_error", fmt.Sprintf(m, a...)
	}
	tooBig := func() ([]simReq, string, int, string, string) {
		return nil, "", http.StatusRequestEntityTooLarge, "request_too_large", fmt.Sprintf("request body exceeds %d bytes", s.MaxBytes)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if errors.Is(err, errTooLarge) {
			return tooBig()
		}
		return bad("body must be a JSON object with requests")
	}
	seen := map[string]int{}
	found := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			if errors.Is(err, errTooLarge) {
				return tooBig()
			}
			return bad("malformed JSON body: %v", err)
		}
		if key != "requests" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return bad("malformed JSON body: %v", err)
			}
			continue
		}
		found = true
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return bad("requests: must be an array")
		}
		for dec.More() {
			var wr wireRequest
			if err := dec.Decode(&wr); err != nil {
				if errors.Is(err, errTooLarge) {
					return tooBig()
				}
				return bad("requests.%d: malformed: %v", len(reqs), err)
			}
			if why := version.versionRefusal(fmt.Sprintf("requests.%d.params.", len(reqs)), &wr.Params); why != "" {
				return bad("%s", why)
			}
			i := len(reqs)
			switch {
			case i >= s.MaxRequests:
				return bad("requests: a batch holds at most %d requests", s.MaxRequests)
			case !customIDPattern.MatchString(wr.CustomID):
				return bad("requests.%d.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
			case wr.Params.Model == "":
				return bad("requests.%d.params.model: Field required", i)
			case wr.Params.MaxTokens == nil:
				return bad("requests.%d.params.max_tokens: Field required", i)
			case len(wr.Params.Messages) < 2 || wr.Params.Messages[0] != '[':
				return bad("requests.%d.params.messages: Field required", i)
			}
			if prev, dup := seen[wr.CustomID]; dup {
				return bad("requests.%d.custom_id: duplicate custom_id %q (also requests.%d); custom_id must be unique within a batch", i, wr.CustomID, prev)
			}
			seen[wr.CustomID] = i
			model = wr.Params.Model
			in, prefix, parts, err := billedInput(&wr.Params)
			q := simReq{id: wr.CustomID, model: wr.Params.Model, maxTokens: *wr.Params.MaxTokens, inTokens: in,
				seen: parts, sampling: nonDefaultSampling(&wr.Params)}
			if err != nil {
				q.mediaErr = "SIMULATED: " + err.Error()
			}
			if schema, native, err := messagesSchema(&wr.Params); err != nil {
				q.mediaErr = "SIMULATED: " + err.Error()
			} else if schema != nil {
				sys, _ := sim.SystemText(wr.Params.System)
				prompt := lastUserText(wr.Params.Messages)
				q.answer, q.answerCut = sim.StructuredAnswer(schema, native, s.Violations.Violate(sys+"\x00"+prompt), prompt)
			}
			if prefix != "" {
				q.prefixKey = sha256.Sum256([]byte(wr.Params.Model + "\x00" + prefix))
				q.prefixTokens = min(sim.Tokens(prefix), in)
				q.ttl = cacheTTL(wr.Params.System)
			}
			reqs = append(reqs, q)
		}
		if _, err := dec.Token(); err != nil {
			return bad("requests: malformed: %v", err)
		}
	}
	if !found || len(reqs) == 0 {
		return bad("requests: Field required (at least one request)")
	}
	return reqs, model, 0, "", ""
}

func (s *AnthropicSim) lookup(w http.ResponseWriter, r *http.Request) *simBatch {
	b, ok := s.batches[r.PathValue("id")]
	if !ok {
		anthropicError(w, http.StatusNotFound, "not_found_error", "message batch "+r.PathValue("id")+" not found")
		return nil
	}
	return b
}

func (s *AnthropicSim) get(w http.ResponseWriter, r *http.Request) {
	s.count("get")
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.lookup(w, r); b != nil {
		writeAnthropicJSON(w, s.view(b, baseURL(r)))
	}
}

func (s *AnthropicSim) cancelBatch(w http.ResponseWriter, r *http.Request) {
	s.count("cancel")
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.lookup(w, r)
	if b == nil {
		return
	}
	if b.status == anthropicInProgress {
		b.status = anthropicCanceling
		b.cancelledAt = s.Now().UTC()
	}
	writeAnthropicJSON(w, s.view(b, baseURL(r)))
}

// list pages newest first with limit (1..1000, default 20), after_id and before_id.
func (s *AnthropicSim) list(w http.ResponseWriter, r *http.Request) {
	s.count("list")
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			anthropicError(w, http.StatusBadRequest, "invalid_request_error", "limit: must be 1..1000")
			return
		}
		limit = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var newest []*simBatch
	for i := len(s.order) - 1; i >= 0; i-- {
		newest = append(newest, s.order[i])
	}
	start, end := 0, len(newest)
	if after := q.Get("after_id"); after != "" {
		for i, b := range newest {
			if b.id == after {
				start = i + 1
			}
		}
	}
	if before := q.Get("before_id"); before != "" {
		for i, b := range newest {
			if b.id == before {
				end = i
			}
		}
	}
	page := newest[min(start, end):end]
	more := len(page) > limit
	if more {
		page = page[:limit]
	}
	data := make([]batchView, 0, len(page))
	for _, b := range page {
		data = append(data, s.view(b, baseURL(r)))
	}
	out := map[string]any{"data": data, "has_more": more, "first_id": nil, "last_id": nil}
	if len(page) > 0 {
		out["first_id"], out["last_id"] = page[0].id, page[len(page)-1].id
	}
	writeAnthropicJSON(w, out)
}

// results streams one line per request in a shuffled order, generated on the
// fly so 100,000 results never sit in memory.
func (s *AnthropicSim) results(w http.ResponseWriter, r *http.Request) {
	s.count("results")
	s.mu.Lock()
	b := s.lookup(w, r)
	if b == nil {
		s.mu.Unlock()
		return
	}
	if b.status != anthropicEnded {
		st := b.status
		s.mu.Unlock()
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "message batch "+b.id+" is still "+st+"; results are available once processing_status is ended")
		return
	}
	reqs, seed := b.reqs, b.seed
	s.mu.Unlock()
	rng := rand.New(rand.NewPCG(seed, 7))
	order := rng.Perm(len(reqs))
	w.Header().Set("Content-Type", "application/binary")
	bw := bufio.NewWriterSize(w, 64<<10)
	pad := strings.Repeat("lorem ipsum ", s.AnswerBytes/12+1)[:s.AnswerBytes]
	for _, i := range order {
		line, _ := json.Marshal(s.resultLine(reqs[i], i, pad))
		bw.Write(line)
		bw.WriteByte('\n')
	}
	bw.Flush()
}

// resultLine is one line of the results: a succeeded result reports cache
// writes and reads apart from input_tokens, as the Messages API does.
func (s *AnthropicSim) resultLine(q simReq, i int, pad string) map[string]any {
	var res map[string]any
	switch q.outcome {
	case "succeeded":
		reply := fmt.Sprintf("[SIMULATED answer by the mcpbatch Anthropic simulator; no model was called] request %s:%s %s", q.id, sim.SeenText(q.seen), pad)
		if q.answer != "" {
			reply = q.answer
		}
		text, out, capped := sim.Cut(reply, q.maxTokens)
		stop := "end_turn"
		if capped || q.answerCut {
			stop = "max_tokens"
		}
		res = map[string]any{"type": "succeeded", "message": map[string]any{
			"id": fmt.Sprintf("msg_sim%06d", i), "type": "message", "role": "assistant", "model": q.model,
			"content":     []map[string]any{{"type": "text", "text": text}},
			"stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": q.inTokens - q.cacheRead - q.cacheWrite, "output_tokens": out,
				"cache_creation_input_tokens": q.cacheWrite, "cache_read_input_tokens": q.cacheRead},
		}}
	case "errored":
		res = map[string]any{"type": "errored", "error": map[string]any{"type": "error",
			"error": map[string]string{"type": q.errorType, "message": q.errorMsg}}}
	default:
		res = map[string]any{"type": q.outcome}
	}
	return map[string]any{"custom_id": q.id, "result": res}
}

// betaFlags reads the anthropic-beta header: comma-separated flags, possibly
// repeated.
func betaFlags(h http.Header) []string {
	var flags []string
	for _, v := range h.Values("anthropic-beta") {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				flags = append(flags, f)
			}
		}
	}
	return flags
}
