package sim

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RuntimeSim is a test double of the Bedrock runtime wire API (Converse and
// InvokeModel over REST-JSON), reached by the real bedrockruntime SDK client
// through BaseEndpoint. It answers with SimulatedAnswer, labels every answer
// "[simulated]", models the prompt cache (a system prompt before a cachePoint is
// written once, then read), and can inject throttling and latency. It records the
// peak number of concurrent calls so tests can check a client's concurrency bound.
type RuntimeSim struct {
	// ThrottleRate is the fraction (0..1) of calls answered 429 ThrottlingException,
	// spread evenly and deterministically (0.2 throttles every 5th call).
	ThrottleRate float64
	// Latency is how long each call takes before it answers.
	Latency time.Duration
	// FailMarker makes a call whose prompt contains it fail with a 400 ValidationException.
	FailMarker string
	Log        *slog.Logger

	calls     atomic.Int64
	throttled atomic.Int64
	inFlight  atomic.Int64
	peak      atomic.Int64
	mu        sync.Mutex
	cached    map[[32]byte]bool
	http      listener
}

// RuntimeStats are what a RuntimeSim observed.
type RuntimeStats struct {
	Calls, Throttled, PeakInFlight int64
}

// Stats returns the calls seen so far.
func (s *RuntimeSim) Stats() RuntimeStats {
	return RuntimeStats{Calls: s.calls.Load(), Throttled: s.throttled.Load(), PeakInFlight: s.peak.Load()}
}

// Listen serves on addr (e.g. 127.0.0.1:0) and returns the base URL.
func (s *RuntimeSim) Listen(addr string) (string, error) {
	return s.http.listen(addr, "bedrock runtime sim", s, s.Log,
		"Bedrock runtime SIMULATOR (test double of Converse/InvokeModel) listening")
}

// Close stops the server.
func (s *RuntimeSim) Close() error { return s.http.close() }

// ServeHTTP routes POST /model/{id}/converse and POST /model/{id}/invoke.
func (s *RuntimeSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	call := s.calls.Add(1)
	if s.Latency > 0 {
		time.Sleep(s.Latency)
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/model/") {
		rtError(w, http.StatusNotFound, "UnknownOperationException", "[simulated] unknown operation "+r.Method+" "+r.URL.Path)
		return
	}
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/model/")
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		rtError(w, http.StatusNotFound, "UnknownOperationException", "[simulated] unknown operation "+r.URL.Path)
		return
	}
	model, op := rest[:i], rest[i+1:]
	if s.throttle(call) {
		s.throttled.Add(1)
		rtError(w, http.StatusTooManyRequests, "ThrottlingException", "[simulated] Too many requests, please wait before trying again.")
		return
	}
	switch op {
	case "converse":
		s.converse(w, r, model)
	case "invoke":
		s.invoke(w, r, model)
	default:
		rtError(w, http.StatusNotFound, "UnknownOperationException", "[simulated] unknown operation "+op)
	}
}

// throttle spreads ThrottleRate evenly over the call sequence.
func (s *RuntimeSim) throttle(call int64) bool {
	if s.ThrottleRate <= 0 {
		return false
	}
	return int64(float64(call)*s.ThrottleRate) > int64(float64(call-1)*s.ThrottleRate)
}

type converseBlock struct {
	Text       *string         `json:"text,omitempty"`
	CachePoint json.RawMessage `json:"cachePoint,omitempty"`
}

type converseRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content []converseBlock `json:"content"`
	} `json:"messages"`
	System          []converseBlock `json:"system"`
	InferenceConfig struct {
		MaxTokens *int `json:"maxTokens"`
	} `json:"inferenceConfig"`
}

func (s *RuntimeSim) converse(w http.ResponseWriter, r *http.Request, model string) {
	var req converseRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 10<<20)).Decode(&req); err != nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] malformed request body: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] messages: at least one message is required")
		return
	}
	var sys, cachedPrefix strings.Builder
	hasCachePoint := false
	for _, b := range req.System {
		if b.Text != nil {
			sys.WriteString(*b.Text)
		}
		if len(b.CachePoint) > 0 {
			hasCachePoint = true
			cachedPrefix.WriteString(sys.String())
		}
	}
	prompt := ""
	inChars := sys.Len()
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Text != nil {
				inChars += len(*b.Text)
				if m.Role == "user" {
					prompt = *b.Text
				}
			}
		}
	}
	if s.FailMarker != "" && strings.Contains(prompt, s.FailMarker) {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] the simulator rejected this prompt on purpose ("+s.FailMarker+")")
		return
	}
	text := SimulatedAnswer(sys.String(), prompt, "")
	in, out := int64(max(1, inChars/4)), int64(max(1, len(text)/4))
	stop := "end_turn"
	if mt := req.InferenceConfig.MaxTokens; mt != nil && out > int64(*mt) {
		out, stop = int64(*mt), "max_tokens"
		text = strings.ToValidUTF8(text[:min(len(text), *mt*4)], "")
	}
	usage := map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": in + out}
	if hasCachePoint && cachedPrefix.Len() > 0 {
		// Cached tokens are not billed as input: they move from inputTokens to the cache counters.
		ct := int64(max(1, cachedPrefix.Len()/4))
		key := sha256.Sum256([]byte(model + "\x00" + cachedPrefix.String()))
		s.mu.Lock()
		if s.cached == nil {
			s.cached = map[[32]byte]bool{}
		}
		hit := s.cached[key]
		s.cached[key] = true
		s.mu.Unlock()
		if hit {
			usage["cacheReadInputTokens"] = ct
		} else {
			usage["cacheWriteInputTokens"] = ct
		}
		usage["inputTokens"] = max(1, in-ct)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"text": text}}}},
		"stopReason": stop,
		"usage":      usage,
		"metrics":    map[string]any{"latencyMs": s.Latency.Milliseconds()},
	})
}

func (s *RuntimeSim) invoke(w http.ResponseWriter, r *http.Request, model string) {
	var req claudeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 10<<20)).Decode(&req); err != nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] malformed request body: "+err.Error())
		return
	}
	if err := checkClaude(req); err != nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] "+err.Error())
		return
	}
	prompt := contentText(req.Messages[len(req.Messages)-1].Content)
	if s.FailMarker != "" && strings.Contains(prompt, s.FailMarker) {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] the simulator rejected this prompt on purpose ("+s.FailMarker+")")
		return
	}
	text := SimulatedAnswer(contentText(req.System), prompt, "")
	resp := claudeResponse{ID: fmt.Sprintf("msg_bdrk_sim%016x", s.calls.Load()), Type: "message", Role: "assistant", Model: model, StopReason: "end_turn"}
	resp.Usage.InputTokens = int64(max(1, len(prompt)/4))
	resp.Usage.OutputTokens = int64(max(1, len(text)/4))
	resp.Content = []textBlock{{Type: "text", Text: text}}
	writeJSON(w, http.StatusOK, resp)
}

func checkClaude(req claudeRequest) error {
	switch {
	case req.AnthropicVersion == "":
		return errors.New("#: required key [anthropic_version] not found")
	case req.MaxTokens <= 0:
		return errors.New("#: required key [max_tokens] not found")
	case len(req.Messages) == 0:
		return errors.New("#: required key [messages] not found")
	}
	return nil
}

func rtError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}
