package anthropic

// AnthropicSim simulates the Anthropic Message Batches API (create, get, list,
// cancel, results), the Models API's list and the Token Count API
// (anthropic_count.go) on the wire, for the official SDK through option.WithBaseURL.
// It is a test double: no model is called, and every answer says it is simulated.
//
// Behaviour it keeps from the real API:
//   - processing_status is in_progress, then canceling after a cancel, then
//     ended; request_counts count every request as processing until the
//     whole batch ends, then split them into succeeded, errored, canceled, expired.
//   - results are only available once ended, as JSONL in no particular order.
//   - up to 100,000 requests or 256 MB per batch; custom_id must match
//     ^[A-Za-z0-9_-]{1,64}$ and be unique in the batch (400 invalid_request_error).
//   - errors are {"type":"error","error":{"type":...,"message":...}}.
//   - params are validated when the batch ends: max_tokens above the model's
//     documented maximum (table in models.go) makes that request errored
//     (invalid_request_error), not the batch refused. A batch created with
//     anthropic-beta: output-300k-2026-03-24 reaches the larger batch maximum
//     of the models that have one; without it they keep the normal one.
//   - a succeeded result's usage reports cache_creation_input_tokens and
//     cache_read_input_tokens apart from input_tokens: a system prefix marked
//     with cache_control and at least the model's minimum cacheable length is
//     written by the first request carrying it and read afterwards, for 5
//     minutes (or 1 hour with ttl "1h") after its last use.
//   - a model id the table does not know is served permissively, logged once.
//
// Choices where the API is loose: a batch cancelled while in progress ends on
// the next step with its first half of requests succeeded and the rest canceled.

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// AnthropicSim is an http.Handler; set fields before the first request. With
// StepDelay 0 batches move only on Step, which keeps tests deterministic.
type AnthropicSim struct {
	// APIKey, when set, must arrive as x-api-key (or Authorization: Bearer).
	APIKey string
	// Violations is the share of structured answers that go wrong (sim.Violations).
	Violations *sim.Violations
	// StepDelay is the time between two steps of every batch (0: manual stepping).
	StepDelay time.Duration
	// Steps is how many steps a batch stays in_progress (default 1).
	Steps int
	// SlowRequest makes a batch holding that request take SlowSteps more steps.
	SlowRequest func(customID string) bool
	SlowSteps   int
	// ErrorEvery makes every Nth request (in request order) errored; 0: none.
	ErrorEvery int
	// Errored makes that request errored (api_error, as an overloaded backend would).
	Errored func(customID string) bool
	// Expired makes that request expire (the batch hit its 24 h limit first).
	Expired func(customID string) bool
	// AnswerBytes is the approximate size of each simulated answer (default 200).
	AnswerBytes int
	// Busy answers 429 rate_limit_error to a create while it returns true.
	Busy func() bool
	// CountBusy answers 429 rate_limit_error to a count_tokens call while it
	// returns true (token counting has its own per-minute limit).
	CountBusy func() bool
	// AcceptThenFail, when it returns an HTTP status (500 api_error, 529
	// overloaded_error), makes a create keep its batch and answer with that
	// error instead: the caller cannot tell whether its batch exists, as after
	// a lost response. Test knob; 0 answers normally.
	AcceptThenFail func() int
	// OnCreate runs when a create arrives, before anything is read (tests hold
	// a create open with it).
	OnCreate func()
	// MaxRequests and MaxBytes default to the API's 100,000 and 256 MB.
	MaxRequests int
	MaxBytes    int64
	Seed        uint64
	Now         func() time.Time
	Log         *slog.Logger

	once   sync.Once
	mux    *http.ServeMux
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	seq     int
	batches map[string]*simBatch
	order   []*simBatch
	http    sim.Listener
	calls   map[string]int
	// cache holds written prompt prefixes until they expire.
	cache      map[[32]byte]time.Time
	permissive sim.Permissive
}

// simBatch is one simulated batch; guarded by AnthropicSim.mu.
type simBatch struct {
	id          string
	model       string
	created     time.Time
	status      string
	steps       int
	cancelledAt time.Time
	endedAt     time.Time
	reqs        []simReq
	seed        uint64
	counts      map[string]int64
	betas       []string // the anthropic-beta header's flags at create
}

type simReq struct {
	id           string
	model        string
	maxTokens    int
	inTokens     int64    // every input token, cached or not
	prefixKey    [32]byte // model + cacheable system prefix, when one is marked
	prefixTokens int64
	ttl          time.Duration
	outcome      string
	errorType    string
	errorMsg     string
	// cacheRead and cacheWrite are decided when the batch ends, in request order.
	cacheRead, cacheWrite int64
	// seen is what arrived in image and document blocks; mediaErr the
	// refusal of one, reported when the batch ends (see decide).
	seen     []sim.SeenPart
	mediaErr string
	// sampling names a sampling parameter sent at a non-default value ("").
	sampling string
	// answer is the structured answer of a request for JSON ("": the
	// simulator's labelled text); answerCut: it stopped at max_tokens.
	answer    string
	answerCut bool
}

func (s *AnthropicSim) init() {
	s.once.Do(func() {
		if s.Log == nil {
			s.Log = slog.Default()
		}
		if s.Now == nil {
			s.Now = time.Now
		}
		if s.Steps <= 0 {
			s.Steps = 1
		}
		if s.AnswerBytes <= 0 {
			s.AnswerBytes = 200
		}
		if s.MaxRequests <= 0 {
			s.MaxRequests = anthropicMaxRequests
		}
		if s.MaxBytes <= 0 {
			s.MaxBytes = anthropicMaxBytes
		}
		s.batches = map[string]*simBatch{}
		s.calls = map[string]int{}
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.mux = http.NewServeMux()
		s.mux.HandleFunc("POST /v1/messages/batches", s.create)
		s.mux.HandleFunc("GET /v1/messages/batches", s.list)
		s.mux.HandleFunc("GET /v1/messages/batches/{id}", s.get)
		s.mux.HandleFunc("POST /v1/messages/batches/{id}/cancel", s.cancelBatch)
		s.mux.HandleFunc("GET /v1/messages/batches/{id}/results", s.results)
		s.mux.HandleFunc("GET /v1/models", s.listModels)
		s.mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
		if s.StepDelay > 0 {
			s.wg.Add(1)
			go s.run()
		}
	})
}

// Listen serves the simulator on addr until Close and returns its base URL.
func (s *AnthropicSim) Listen(addr string) (string, error) {
	s.init()
	return s.http.Listen(addr, "anthropic sim", s, s.Log,
		"Anthropic Message Batches SIMULATOR listening (test double: no model is called)")
}

// Close stops stepping and the listener.
func (s *AnthropicSim) Close() error {
	s.init()
	err := s.http.Close()
	s.cancel()
	s.wg.Wait()
	return err
}

func (s *AnthropicSim) run() {
	defer s.wg.Done()
	t := time.NewTicker(s.StepDelay)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.Step()
		}
	}
}

// Step moves every batch that has not ended one step on; it returns how many moved.
func (s *AnthropicSim) Step() int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	moved := 0
	for _, b := range s.order {
		switch b.status {
		case anthropicInProgress:
			b.steps++
			if b.steps >= s.stepsFor(b) {
				s.end(b, false)
			}
			moved++
		case anthropicCanceling:
			s.end(b, true)
			moved++
		}
	}
	return moved
}

// Settle steps until every batch has ended (Simulator).
func (s *AnthropicSim) Settle(ctx context.Context) error {
	return sim.SettleSteps(ctx, "anthropic sim", func(context.Context) int { return s.Step() })
}

// Calls returns how many API calls each operation has served (for tests and benchmarks).
func (s *AnthropicSim) Calls() map[string]int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// Statuses returns each batch's processing_status by id.
func (s *AnthropicSim) Statuses() map[string]string {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, b := range s.order {
		out[b.id] = b.status
	}
	return out
}

func (s *AnthropicSim) stepsFor(b *simBatch) int {
	n := s.Steps
	if s.SlowRequest != nil {
		for _, r := range b.reqs {
			if s.SlowRequest(r.id) {
				return n + max(s.SlowSteps, 1)
			}
		}
	}
	return n
}

// end decides every request's outcome; only now do request_counts move.
func (s *AnthropicSim) end(b *simBatch, cancelled bool) {
	b.status = anthropicEnded
	b.endedAt = s.Now().UTC()
	b.counts = map[string]int64{}
	half := len(b.reqs) / 2
	for i := range b.reqs {
		r := &b.reqs[i]
		switch {
		case cancelled && i >= half:
			r.outcome = "canceled"
		case s.Expired != nil && s.Expired(r.id):
			r.outcome = "expired"
		case s.Errored != nil && s.Errored(r.id):
			r.outcome, r.errorType, r.errorMsg = "errored", "api_error", "SIMULATED: internal server error while processing this request"
		case s.ErrorEvery > 0 && (i+1)%s.ErrorEvery == 0:
			r.outcome, r.errorType, r.errorMsg = "errored", "invalid_request_error", fmt.Sprintf("SIMULATED: request %d rejected (every %dth request errors)", i+1, s.ErrorEvery)
		default:
			s.decide(b, r)
		}
		b.counts[r.outcome]++
	}
}

// decide settles a request the model would run: params are validated only now,
// so a bad request becomes an errored result, not a refused batch ("validation
// of the params object for each message request is performed asynchronously",
// https://platform.claude.com/docs/en/build-with-claude/batch-processing); a
// cacheable system prefix long enough for the model is written by the first
// request that carries it and read by the later ones while it lives.
func (s *AnthropicSim) decide(b *simBatch, r *simReq) {
	if r.mediaErr != "" {
		r.outcome, r.errorType, r.errorMsg = "errored", "invalid_request_error", r.mediaErr
		return
	}
	m, known := anthropicModels[r.model]
	if !known {
		s.permissive.Warn(s.Log, "anthropic sim", r.model, "model id not in the simulator's table")
	}
	limit := m.maxOut
	if m.maxOutBeta > 0 && slices.Contains(b.betas, sim.Output128k) {
		limit = m.maxOutBeta
	}
	if m.batchMaxOut > 0 && slices.Contains(b.betas, output300k) {
		limit = m.batchMaxOut
	}
	if known && m.fixedSampling && r.sampling != "" {
		r.outcome, r.errorType = "errored", "invalid_request_error"
		r.errorMsg = fmt.Sprintf("SIMULATED: %s: only the default value is supported for %s", r.sampling, r.model)
		return
	}
	if known && r.maxTokens > limit {
		// The Messages API's wording for this refusal.
		r.outcome, r.errorType = "errored", "invalid_request_error"
		r.errorMsg = fmt.Sprintf("SIMULATED: max_tokens: %d > %d, which is the maximum allowed number of output tokens for %s", r.maxTokens, limit, r.model)
		return
	}
	r.outcome = "succeeded"
	if r.prefixTokens == 0 || r.prefixTokens < int64(m.cacheMin) {
		return // nothing marked, or too short to cache: processed without caching
	}
	now := s.Now()
	if s.cache == nil {
		s.cache = map[[32]byte]time.Time{}
	}
	if exp, ok := s.cache[r.prefixKey]; ok && now.Before(exp) {
		r.cacheRead = r.prefixTokens
	} else {
		r.cacheWrite = r.prefixTokens
	}
	s.cache[r.prefixKey] = now.Add(r.ttl) // a read refreshes the entry's lifetime
}

func (s *AnthropicSim) newID() string {
	s.seq++
	rng := rand.New(rand.NewPCG(s.Seed, uint64(s.seq)))
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	b := make([]byte, 24)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return "msgbatch_sim" + string(b)
}
