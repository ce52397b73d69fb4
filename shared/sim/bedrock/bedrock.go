// Package bedrock simulates Amazon Bedrock for make dev and tests: batch
// inference, the runtime (RuntimeSim), the account's model facts (Account,
// QuotasSim) and the Price List (PriceListSim, whose products are Bedrock's
// only), all from one table of models (bedrock_models.go).
//
// BedrockSim simulates Amazon Bedrock batch inference (the control-plane REST-JSON
// routes of CreateModelInvocationJob, GetModelInvocationJob, StopModelInvocationJob
// and ListModelInvocationJobs), its S3 output and its EventBridge events.
//
// Choices where Bedrock's behaviour is documented loosely:
//   - Records that fail still end the job Completed (errorRecordCount > 0), as Bedrock
//     does; PartiallyCompleted means "not every record could be processed in time",
//     simulated with PartialAfter. Callers must count failed records themselves.
//   - Validation fails the whole job (Failed, with a message naming the file, line
//     and problem) for structural faults and quotas: an input file over 1 GB or a
//     job over 5 GB (MaxFileBytes, MaxJobBytes), more than 50,000 records in a
//     file, record count outside 100..50,000, a line
//     that is not a JSON object, a missing, empty or duplicated recordId, a
//     modelInput that is not an object. Bedrock documents that validation does not
//     check modelInput against the model's format, so a modelInput the model
//     would refuse (a Claude body without anthropic_version, max_tokens above the
//     model's limit, a Titan embedding with other dimensions...) fails only that
//     record (errorCode 400, "Malformed input request"), as InvokeModel would.
//   - modelOutput is the model family's InvokeModel response body, built by the
//     same code as the runtime simulator's (native.go); for a Converse job
//     (modelInvocationType Converse) modelInput is a Converse request and
//     modelOutput a Converse response. manifest.json.out sums the records' tokens.
//   - Stopping a job that has ended answers ValidationException naming its state;
//     stopping a job already Stopping succeeds. A stopped job bills only what it
//     processed (StopModelInvocationJob's documentation): its output and
//     manifest hold exactly the records processed before the stop. A job stopped
//     while InProgress has processed the first half of its records (a SlowJob:
//     the records its steps reached); stopped earlier, or Expired, or Failed, it
//     writes nothing.
//   - A second job with a jobName already taken (and another clientRequestToken)
//     is a ConflictException.
//   - A job for a model of the account's table that batch inference does not
//     serve (no batch quotas in its row of bedrock_models.go; the quotas Bedrock lists per
//     model are those of the models it takes batch jobs for) is a
//     ValidationException naming the model.
package bedrock

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// Defaults of a BedrockSim.
const (
	DefaultMaxJobsPerModel = 20
	defaultTimeoutHours    = 168
)

// BedrockSim is an http.Handler that simulates Bedrock batch inference. Set the
// fields before the first request; the zero value (plus Blobs) works, and NewBedrockSim
// fills the usual defaults. With StepDelay 0 jobs move only when Step or Settle is
// called, which makes tests deterministic; with StepDelay > 0 a goroutine moves each
// job one status per StepDelay until Close.
type BedrockSim struct {
	// Blobs holds the input JSONL (read at the input s3:// URI) and receives the output.
	Blobs blob.Store
	// Violations is the share of structured answers that go wrong (sim.Violations).
	Violations *sim.Violations
	// Emit receives every state-change event as EventBridge delivers it to a Lambda
	// target, in order, from the goroutine that steps. It may call the simulator's
	// HTTP API but not Step or Settle. Nil discards events.
	Emit func(ctx context.Context, event []byte)
	// Account and Region appear in ARNs and events.
	Account string
	Region  string
	// StepDelay is the time between two statuses of a job (0: manual stepping).
	StepDelay time.Duration

	// FailRecord makes the record with that id fail (error line in the output).
	FailRecord func(recordID string) bool
	// FailEvery makes every Nth record (in input order) fail; 0 disables it.
	// Failed records alternate between {"errorCode": 400} and {"errorCode": "ThrottlingException"}.
	FailEvery int
	// ReplyTokens, when set, makes a batch record's text answer about that
	// many tokens long (the labelled echo, then varied words): real answers
	// are far longer than the echo, and what storing them costs follows
	// their length (make cost). 0: the echo alone.
	ReplyTokens int
	// FailJob, when it returns a message for a job name, ends that job Failed with it
	// (after InProgress, with no output).
	FailJob func(jobName string) string
	// ExpireJob makes a job go Scheduled -> Expired (never started within its timeout).
	ExpireJob func(jobName string) bool
	// SlowJob, when it returns n > 0 for a job name, makes that job process n
	// records per step while InProgress (GetModelInvocationJob shows the
	// processedRecordCount), so a test can stop it part way through.
	SlowJob func(jobName string) int
	// PartialAfter > 0 processes only that many records per job, then ends the job
	// PartiallyCompleted (its timeout came first).
	PartialAfter int
	// DropEvent loses the event of that status (EventBridge delivery is best effort).
	DropEvent func(status string) bool
	// DuplicateEvent delivers the event of that status twice (at-least-once delivery).
	DuplicateEvent func(status string) bool
	// ThrottleAPI answers ThrottlingException to that operation ("CreateModelInvocationJob", ...).
	ThrottleAPI func(op string) bool
	// MaxJobsPerModel is the quota of submitted + in-progress jobs per base model.
	MaxJobsPerModel int
	// MaxFileBytes and MaxJobBytes are the quotas on one input file and on all
	// of a job's input files (default 1 GB and 5 GB); a job over either fails
	// validation. Tests lower them rather than write gigabytes.
	MaxFileBytes int64
	MaxJobBytes  int64
	// Models is the simulated account's model table behind the control-plane
	// reads (account.go); nil: NewAccount's.
	Models *Account
	// Seed makes ids and output order reproducible.
	Seed uint64
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives the simulator's log lines (default slog.Default()).
	Log *slog.Logger

	once   sync.Once
	mux    *http.ServeMux
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}

	mu      sync.Mutex
	rng     *rand.Rand
	seq     uint64
	jobs    map[string]*simJob // by 12-char id
	order   []*simJob          // creation order
	tokens  map[string]*simJob
	names   map[string]*simJob
	pending [][]byte // events queued by API calls, sent on the next step
	http    sim.Listener

	permissive sim.Permissive

	stepMu  sync.Mutex // one step at a time: steps do the I/O
	flushMu sync.Mutex // events leave in the order they were queued
}

// NewBedrockSim returns a simulator over blobs that sends events to emit.
func NewBedrockSim(blobs blob.Store, emit func(ctx context.Context, event []byte)) *BedrockSim {
	return &BedrockSim{
		Blobs:           blobs,
		Emit:            emit,
		Account:         sim.DefaultAccount,
		Region:          sim.DefaultRegion,
		MaxJobsPerModel: DefaultMaxJobsPerModel,
	}
}

// simJob is one simulated job; fields after status are guarded by BedrockSim.mu.
type simJob struct {
	seq         uint64
	id, arn     string
	name, token string
	model, role string
	inputURI    string
	outputURI   string
	// invocationType is InvokeModel (modelInput is the model's native body) or
	// Converse (modelInput is a Converse request).
	invocationType string
	timeoutHours   int
	tags           map[string]string
	submitTime     time.Time

	status      string
	message     string
	changedAt   time.Time
	endTime     time.Time
	stoppedFrom string
	// progress is how many records a SlowJob has reached.
	progress  int64
	busy      bool // a step is doing this job's I/O
	files     []string
	total     int64
	processed int64
	succeeded int64
	failed    int64
}

func (s *BedrockSim) init() {
	s.once.Do(func() {
		if s.Account == "" {
			s.Account = sim.DefaultAccount
		}
		if s.Region == "" {
			s.Region = sim.DefaultRegion
		}
		if s.MaxJobsPerModel == 0 {
			s.MaxJobsPerModel = DefaultMaxJobsPerModel
		}
		if s.Now == nil {
			s.Now = time.Now
		}
		if s.Log == nil {
			s.Log = slog.Default()
		}
		s.Log = s.Log.With("component", "bedrock-sim")
		s.rng = rand.New(rand.NewPCG(s.Seed, 0x6265647230636b)) // "bedr0ck"
		s.jobs = map[string]*simJob{}
		s.tokens = map[string]*simJob{}
		s.names = map[string]*simJob{}
		s.kick = make(chan struct{}, 1)
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.mux = http.NewServeMux()
		s.mux.HandleFunc("POST /model-invocation-job", s.create)
		s.mux.HandleFunc("GET /model-invocation-job/{id}", s.get)
		s.mux.HandleFunc("POST /model-invocation-job/{id}/stop", s.stop)
		s.mux.HandleFunc("GET /model-invocation-jobs", s.list)
		if s.Models == nil {
			s.Models = NewAccount()
		}
		s.Models.region, s.Models.account = s.Region, s.Account
		s.mux.HandleFunc("GET /foundation-models", s.Models.listFoundationModels)
		s.mux.HandleFunc("GET /foundation-model-availability/{modelId}", s.Models.availability)
		s.mux.HandleFunc("GET /inference-profiles", s.Models.listInferenceProfiles)
		s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			sim.WriteError(w, http.StatusNotFound, "UnknownOperationException",
				fmt.Sprintf("the Bedrock simulator does not implement %s %s", r.Method, r.URL.Path))
		})
		s.Log.Info("Bedrock batch inference SIMULATOR started: jobs, outputs and events are simulated, no model is called",
			"account", s.Account, "region", s.Region, "stepDelay", s.StepDelay)
		if s.StepDelay > 0 {
			s.wg.Add(1)
			go s.run()
		}
	})
}

// Listen serves the simulator on addr (e.g. "127.0.0.1:0") until Close and returns
// its base URL, for the SDK's BaseEndpoint.
func (s *BedrockSim) Listen(addr string) (string, error) {
	s.init()
	return s.http.Listen(addr, "bedrock sim", s, s.Log, "Bedrock simulator listening")
}

// Close stops the background stepping and the listener, if any.
func (s *BedrockSim) Close() error {
	s.init()
	err := s.http.Close()
	s.cancel()
	s.wg.Wait()
	return err
}

func (s *BedrockSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, done := sim.BodyFirst(w, r)
	defer done()
	s.init()
	w.Header().Set("X-Amzn-Requestid", s.newUUID())
	s.mux.ServeHTTP(w, r)
}

func (s *BedrockSim) run() {
	defer s.wg.Done()
	tick := time.NewTicker(max(s.StepDelay/4, 5*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.kick:
			s.flush(s.ctx)
		case <-tick.C:
			s.step(s.ctx, false)
		}
	}
}

// Step sends queued events and moves every unfinished job one status forward,
// whatever StepDelay says. It returns how many jobs moved.
func (s *BedrockSim) Step(ctx context.Context) int {
	s.init()
	return s.step(ctx, true)
}

// Settle steps until every job has ended (Simulator).
func (s *BedrockSim) Settle(ctx context.Context) error {
	s.init()
	return sim.SettleSteps(ctx, "bedrock sim", func(ctx context.Context) int { return s.step(ctx, true) })
}

// Statuses returns each job's name and current status, for tests and logs.
func (s *BedrockSim) Statuses() map[string]string {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.order))
	for _, j := range s.order {
		out[j.name] = j.status
	}
	return out
}

func ended(status string) bool {
	switch status {
	case bedrockCompleted, bedrockPartiallyCompleted, bedrockFailed, bedrockStopped, bedrockExpired:
		return true
	}
	return false
}

// baseModel is the foundation model behind an id, profile id or ARN.
func baseModel(model string) string {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	for _, p := range profilePrefixes {
		if rest, ok := strings.CutPrefix(model, p); ok {
			return rest
		}
	}
	return model
}

func (s *BedrockSim) maxFileBytes() int64 {
	if s.MaxFileBytes > 0 {
		return s.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

func (s *BedrockSim) maxJobBytes() int64 {
	if s.MaxJobBytes > 0 {
		return s.MaxJobBytes
	}
	return DefaultMaxJobBytes
}

// setStatus must be called with s.mu held; it queues the state-change event.
func (s *BedrockSim) setStatus(j *simJob, status, message string) {
	j.status = status
	j.message = message
	j.changedAt = s.Now().UTC()
	if ended(status) {
		j.endTime = j.changedAt
	}
	s.queueEvent(j)
	lvl := slog.LevelDebug
	if ended(status) {
		lvl = slog.LevelInfo
	}
	s.Log.Log(context.Background(), lvl, "bedrock sim: job status", "jobName", j.name, "status", status, "message", message)
}

func (s *BedrockSim) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// step moves each job whose time has come (all of them when force) one status on.
func (s *BedrockSim) step(ctx context.Context, force bool) int {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	s.flush(ctx)
	s.mu.Lock()
	now := s.Now()
	var due []*simJob
	for _, j := range s.order {
		if ended(j.status) || j.busy || (!force && now.Sub(j.changedAt) < s.StepDelay) {
			continue
		}
		j.busy = true
		due = append(due, j)
	}
	s.mu.Unlock()
	for _, j := range due {
		s.advance(ctx, j)
	}
	s.flush(ctx)
	return len(due)
}

// advance moves one job on, doing its I/O outside the lock.
func (s *BedrockSim) advance(ctx context.Context, j *simJob) {
	s.mu.Lock()
	status, stoppedFrom, files := j.status, j.stoppedFrom, j.files
	s.mu.Unlock()

	var next, message string
	var res runResult
	switch status {
	case bedrockSubmitted:
		next = bedrockValidating
	case bedrockValidating:
		v, err := s.validate(ctx, j)
		if err != nil {
			next, message = bedrockFailed, err.Error()
		} else {
			next = bedrockScheduled
			s.mu.Lock()
			j.files, j.total = v.files, v.total
			s.mu.Unlock()
		}
	case bedrockScheduled:
		next = bedrockInProgress
		if s.ExpireJob != nil && s.ExpireJob(j.name) {
			next, message = bedrockExpired, "The job was not started before its timeout expired."
		}
	case bedrockInProgress:
		if n := s.slow(j); n > 0 {
			s.mu.Lock()
			j.progress = min(j.progress+int64(n), j.total)
			j.processed = j.progress
			reached := j.progress >= j.total
			if !reached {
				j.busy = false
				j.changedAt = s.Now().UTC()
			}
			s.mu.Unlock()
			if !reached {
				return // still running: no new status, no event
			}
		}
		if s.FailJob != nil {
			if msg := s.FailJob(j.name); msg != "" {
				next, message = bedrockFailed, msg
				break
			}
		}
		limit := -1
		if s.PartialAfter > 0 {
			limit = s.PartialAfter
		}
		var err error
		res, err = s.process(ctx, j, files, limit)
		switch {
		case err != nil:
			next, message = bedrockFailed, "Internal error while processing the job: "+err.Error()
		case res.processed < s.total(j):
			next, message = bedrockPartiallyCompleted, "Not all records could be processed before the job's timeout."
		default:
			next = bedrockCompleted
		}
	case bedrockStopping:
		next = bedrockStopped
		if stoppedFrom == bedrockInProgress {
			limit := int(s.total(j) / 2)
			if s.slow(j) > 0 {
				s.mu.Lock()
				limit = int(j.progress)
				s.mu.Unlock()
			}
			var err error
			if limit > 0 { // nothing processed: nothing written
				res, err = s.process(ctx, j, files, limit)
			}
			if err != nil {
				next, message = bedrockFailed, "Internal error while stopping the job: "+err.Error()
			}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	j.busy = false
	if j.status != status {
		return // stopped meanwhile: the Stopping step takes over
	}
	if res.processed > 0 || next == bedrockStopped {
		j.processed, j.succeeded, j.failed = res.processed, res.succeeded, res.failed
	}
	s.setStatus(j, next, message)
}

// slow is the records per step of a SlowJob (0: not slow).
func (s *BedrockSim) slow(j *simJob) int {
	if s.SlowJob == nil {
		return 0
	}
	return s.SlowJob(j.name)
}

func (s *BedrockSim) total(j *simJob) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return j.total
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// newJobID must be called with s.mu held.
func (s *BedrockSim) newJobID() string {
	for {
		b := make([]byte, 12)
		for i := range b {
			b[i] = idAlphabet[s.rng.IntN(len(idAlphabet))]
		}
		if _, taken := s.jobs[string(b)]; !taken {
			return string(b)
		}
	}
}

// newUUID returns a version-4 UUID drawn from the seeded generator.
func (s *BedrockSim) newUUID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uuidLocked()
}

// uuidLocked must be called with s.mu held.
func (s *BedrockSim) uuidLocked() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := s.rng.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
