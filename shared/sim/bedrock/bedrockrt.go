package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// RuntimeSim is a test double of the Bedrock runtime wire API (Converse and
// InvokeModel over REST-JSON), reached by the real bedrockruntime SDK client
// through BaseEndpoint. It answers with SimulatedAnswer, labels every answer
// "[simulated]" (and every response with the X-Mcpbatch-Simulated header),
// models the prompt cache (a system prompt before a cachePoint or cache_control
// is written once, then read), and can inject throttling and latency. It records
// the peak number of concurrent calls so tests can check a client's concurrency
// bound.
//
// It keeps Bedrock's documented rules for the models in its own table
// (bedrock_models.go): a base id served only through an inference profile is refused
// with Bedrock's on-demand ValidationException, max_tokens above the model's
// limit is refused, and InvokeModel answers in each family's native shape
// (Claude Messages, Nova, Llama, Mistral, Titan Text Embeddings V2, Cohere
// Embed v3) with the token counts in the X-Amzn-Bedrock-*-Token-Count headers.
// Ids it has no rules for are served permissively and logged as such.
type RuntimeSim struct {
	// ThrottleRate is the fraction (0..1) of calls answered 429 ThrottlingException,
	// spread evenly and deterministically (0.2 throttles every 5th call).
	ThrottleRate float64
	// FlexThrottleRate is the fraction (0..1) of calls on the flex service
	// tier answered 429 ThrottlingException, spread like ThrottleRate: Flex
	// requests get lower priority when the service is busy.
	FlexThrottleRate float64
	// Latency is how long each call takes before it answers.
	Latency time.Duration
	// FailMarker makes a call whose prompt contains it fail with a 400 ValidationException.
	FailMarker string
	// Violations is the share of structured answers that go wrong (sim.Violations).
	Violations *sim.Violations
	// Region is the region the simulator stands for (default us-east-1): it
	// decides which base model ids are served on demand.
	Region string
	Log    *slog.Logger

	calls      atomic.Int64
	flexCalls  atomic.Int64
	throttled  atomic.Int64
	tiers      sync.Map // tier name → *atomic.Int64 of calls served on it
	inFlight   atomic.Int64
	peak       atomic.Int64
	cache      promptCache
	permissive sim.Permissive
	http       sim.Listener
}

// RuntimeStats are what a RuntimeSim observed.
type RuntimeStats struct {
	Calls, Throttled, PeakInFlight int64
	// Tiers counts the calls answered by service tier ("default", "flex", "priority").
	Tiers map[string]int64
}

// Stats returns the calls seen so far.
func (s *RuntimeSim) Stats() RuntimeStats {
	st := RuntimeStats{Calls: s.calls.Load(), Throttled: s.throttled.Load(), PeakInFlight: s.peak.Load(), Tiers: map[string]int64{}}
	s.tiers.Range(func(k, v any) bool {
		st.Tiers[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return st
}

// serveTier checks a request's service tier against the model's and counts
// it; a refusal is the ValidationException message, "throttled" a Flex call
// turned away under FlexThrottleRate. Wording: an unknown tier is answered
// "service tier provided is invalid" and reserved without a reservation
// "Reservation not found." (both as reported in
// https://github.com/NousResearch/hermes-agent/pull/34476, 2026); no report
// of the answer for flex/priority on a model without them was found, so the
// simulator words that one itself.
func (s *RuntimeSim) serveTier(inv invocation, tier string) (refusal string, throttled bool) {
	switch tier {
	case "", "default":
		tier = "default"
	case "flex", "priority":
		if inv.known && !slices.Contains(inv.m.tiers, tier) {
			return "The model " + inv.modelID + " does not support the " + tier + " service tier.", false
		}
	case "reserved":
		return "Reservation not found.", false
	default:
		return "service tier provided is invalid", false
	}
	if tier == "flex" && s.FlexThrottleRate > 0 {
		n := s.flexCalls.Add(1)
		if int64(float64(n)*s.FlexThrottleRate) > int64(float64(n-1)*s.FlexThrottleRate) {
			s.throttled.Add(1)
			return "", true
		}
	}
	c, _ := s.tiers.LoadOrStore(tier, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
	return "", false
}

// refuseTier writes serveTier's refusal or throttle; false when the call goes on.
func (s *RuntimeSim) refuseTier(w http.ResponseWriter, inv invocation, tier string) bool {
	refusal, throttled := s.serveTier(inv, tier)
	switch {
	case throttled:
		rtError(w, http.StatusTooManyRequests, "ThrottlingException", "[simulated] Too many requests, please wait before trying again.")
	case refusal != "":
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] "+refusal)
	default:
		return false
	}
	return true
}

// Listen serves on addr (e.g. 127.0.0.1:0) and returns the base URL.
func (s *RuntimeSim) Listen(addr string) (string, error) {
	return s.http.Listen(addr, "bedrock runtime sim", s, s.Log,
		"Bedrock runtime SIMULATOR (test double of Converse/InvokeModel) listening")
}

// Close stops the server.
func (s *RuntimeSim) Close() error { return s.http.Close() }

// Settle: the runtime answers every call before returning (Simulator).
func (s *RuntimeSim) Settle(ctx context.Context) error { return sim.Settled(ctx) }

// ServeHTTP routes POST /model/{id}/converse and POST /model/{id}/invoke.
func (s *RuntimeSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, done := sim.BodyFirst(w, r)
	defer done()
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
	if id, err := url.PathUnescape(model); err == nil {
		model = id
	}
	w.Header().Set("X-Mcpbatch-Simulated", "true")
	if s.throttle(call) {
		s.throttled.Add(1)
		rtError(w, http.StatusTooManyRequests, "ThrottlingException", "[simulated] Too many requests, please wait before trying again.")
		return
	}
	if op != "converse" && op != "invoke" && op != "count-tokens" {
		rtError(w, http.StatusNotFound, "UnknownOperationException", "[simulated] unknown operation "+op)
		return
	}
	inv, refusal := s.resolve(model)
	// CountTokens takes a foundation model id: the on-demand profile rule
	// is about running the model, not counting for it.
	if refusal != "" && !(op == "count-tokens" && inv.known) {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] "+refusal)
		return
	}
	switch op {
	case "converse":
		s.converse(w, r, inv)
	case "count-tokens":
		s.countTokens(w, r, inv)
	default:
		s.invoke(w, r, inv)
	}
}

// throttle spreads ThrottleRate evenly over the call sequence.
func (s *RuntimeSim) throttle(call int64) bool {
	if s.ThrottleRate <= 0 {
		return false
	}
	return int64(float64(call)*s.ThrottleRate) > int64(float64(call-1)*s.ThrottleRate)
}

// onDemandError is Bedrock's answer to a base model id that is only served
// through an inference profile, word for word (typographic apostrophe
// included) as reported in https://github.com/stackblitz-labs/bolt.diy/issues/1102
// and https://github.com/cline/cline/issues/2482.
func onDemandError(id string) string {
	return "Invocation of model ID " + id + " with on-demand throughput isn’t supported. Retry your request with the ID or ARN of an inference profile that contains this model."
}

// errInvalidModel is Bedrock's answer to an id it does not serve, such as a
// profile for a model that has none.
const errInvalidModel = "The provided model identifier is invalid."

// resolve turns the model path parameter into an invocation, or the refusal
// Bedrock would answer. Ids and ARNs the table cannot tie to a known model are
// served permissively, with a warning logged once per id.
func (s *RuntimeSim) resolve(id string) (invocation, string) {
	inv := invocation{modelID: id, cache: &s.cache, violations: s.Violations}
	name, profile := id, false
	if strings.HasPrefix(id, "arn:") {
		parts := strings.SplitN(id, ":", 6)
		resource := ""
		if len(parts) == 6 {
			resource = parts[5]
		}
		switch typ, rest, _ := strings.Cut(resource, "/"); typ {
		case "inference-profile":
			name, profile = rest, true
		case "foundation-model":
			name = rest
		default: // application-inference-profile, provisioned-model, ...: no model named
			s.permissive.Warn(s.log(), "bedrock runtime sim", id, "the ARN does not name a model; the body's shape picks the family")
			return inv, ""
		}
	}
	if !profile {
		for _, p := range profilePrefixes {
			if rest, ok := strings.CutPrefix(name, p); ok {
				name, profile = rest, true
				break
			}
		}
	} else {
		for _, p := range profilePrefixes {
			if rest, ok := strings.CutPrefix(name, p); ok {
				name = rest
				break
			}
		}
	}
	inv.base = name
	inv.m, inv.known = bedrockRules(name)
	if !inv.known {
		inv.fam = familyOf(name)
		s.permissive.Warn(s.log(), "bedrock runtime sim", id, "model id not in the simulator's table")
		return inv, ""
	}
	inv.fam = inv.m.fam
	switch {
	case profile && !inv.m.profiles:
		return inv, errInvalidModel
	case !profile && !slices.Contains(inv.m.inRegion, "*") && !slices.Contains(inv.m.inRegion, s.region()):
		return inv, onDemandError(id)
	}
	return inv, ""
}

func (s *RuntimeSim) region() string {
	if s.Region == "" {
		return sim.DefaultRegion
	}
	return s.Region
}

func (s *RuntimeSim) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

func (s *RuntimeSim) converse(w http.ResponseWriter, r *http.Request, inv invocation) {
	var req converseRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 10<<20)).Decode(&req); err != nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] malformed request body: "+err.Error())
		return
	}
	tier := ""
	if req.ServiceTier != nil {
		tier = req.ServiceTier.Type
	}
	if s.refuseTier(w, inv, tier) {
		return
	}
	a, prompt, err := converse(inv, req, s.Latency.Milliseconds())
	if err != nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] "+err.Error())
		return
	}
	if s.FailMarker != "" && strings.Contains(prompt, s.FailMarker) {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] the simulator rejected this prompt on purpose ("+s.FailMarker+")")
		return
	}
	sim.WriteJSON(w, http.StatusOK, a.body)
}

func (s *RuntimeSim) invoke(w http.ResponseWriter, r *http.Request, inv invocation) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 25<<20))
	if err != nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] cannot read the request body: "+err.Error())
		return
	}
	if !json.Valid(body) {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] Malformed input request: the body is not valid JSON, please reformat your input and try again.")
		return
	}
	if s.refuseTier(w, inv, r.Header.Get("X-Amzn-Bedrock-Service-Tier")) {
		return
	}
	if s.FailMarker != "" && bytes.Contains(body, []byte(s.FailMarker)) {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] the simulator rejected this prompt on purpose ("+s.FailMarker+")")
		return
	}
	inv.msgID = fmt.Sprintf("msg_bdrk_sim%016x", s.calls.Load())
	if inv.fam == famCohereEmbed {
		inv.msgID = fmt.Sprintf("sim-%016x", s.calls.Load())
	}
	a, err := invokeNative(inv, body)
	if err != nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] "+err.Error())
		return
	}
	// Bedrock reports every InvokeModel's token counts in these headers, whatever the body holds.
	h := w.Header()
	h.Set("X-Amzn-Bedrock-Input-Token-Count", strconv.FormatInt(a.in, 10))
	h.Set("X-Amzn-Bedrock-Output-Token-Count", strconv.FormatInt(a.out, 10))
	h.Set("X-Amzn-Bedrock-Invocation-Latency", strconv.FormatInt(s.Latency.Milliseconds(), 10))
	if a.cacheRead > 0 || a.cacheWrite > 0 {
		h.Set("X-Amzn-Bedrock-Cache-Read-Input-Token-Count", strconv.FormatInt(a.cacheRead, 10))
		h.Set("X-Amzn-Bedrock-Cache-Write-Input-Token-Count", strconv.FormatInt(a.cacheWrite, 10))
	}
	sim.WriteJSON(w, http.StatusOK, a.body)
}

func rtError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// countTokens serves CountTokens (POST /model/{id}/count-tokens) for a
// Converse input: the input tokens the simulator's own Converse would bill
// for the same request, so a count and a run agree. Invoke-style inputs are
// refused: the simulator counts only what it can answer through Converse.
func (s *RuntimeSim) countTokens(w http.ResponseWriter, r *http.Request, inv invocation) {
	var req struct {
		Input struct {
			Converse    *converseRequest `json:"converse"`
			InvokeModel json.RawMessage  `json:"invokeModel"`
		} `json:"input"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 10<<20)).Decode(&req); err != nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] malformed request body: "+err.Error())
		return
	}
	if req.Input.Converse == nil {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] the simulator counts converse inputs only")
		return
	}
	if inv.fam.embedding() {
		rtError(w, http.StatusBadRequest, "ValidationException", "[simulated] "+errConverseUnsupported.Error())
		return
	}
	_, _, in := converseText(*req.Input.Converse)
	sim.WriteJSON(w, http.StatusOK, map[string]any{"inputTokens": max(1, in)})
}
