// Package sim holds local stand-ins for the providers' HTTP APIs, reached by the
// real SDK clients through endpoint overrides (make dev and tests). Everything they
// produce is simulated and says so: no model is ever called.
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
//     and problem) for structural faults: record count outside 100..50,000, a line
//     that is not a JSON object, a missing, empty or duplicated recordId, a
//     modelInput that is not an object. Bedrock documents that validation does not
//     check modelInput against the model's format, so a Claude modelInput without
//     anthropic_version or messages fails only that record (errorCode 400,
//     "Malformed input request"), as InvokeModel would.
//   - Stopping a job that has ended answers ValidationException naming its state;
//     stopping a job already Stopping succeeds. A job stopped while InProgress
//     writes output for the first half of its records; stopped earlier, or Expired,
//     or Failed, it writes nothing.
//   - A second job with a jobName already taken (and another clientRequestToken)
//     is a ConflictException.
package sim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// Defaults of a BedrockSim.
const (
	DefaultAccount         = "123456789012"
	DefaultRegion          = "us-east-1"
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
	// FailJob, when it returns a message for a job name, ends that job Failed with it
	// (after InProgress, with no output).
	FailJob func(jobName string) string
	// ExpireJob makes a job go Scheduled -> Expired (never started within its timeout).
	ExpireJob func(jobName string) bool
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
	srv     *http.Server
	closed  bool

	stepMu  sync.Mutex // one step at a time: steps do the I/O
	flushMu sync.Mutex // events leave in the order they were queued
}

// NewBedrockSim returns a simulator over blobs that sends events to emit.
func NewBedrockSim(blobs blob.Store, emit func(ctx context.Context, event []byte)) *BedrockSim {
	return &BedrockSim{
		Blobs:           blobs,
		Emit:            emit,
		Account:         DefaultAccount,
		Region:          DefaultRegion,
		MaxJobsPerModel: DefaultMaxJobsPerModel,
	}
}

// simJob is one simulated job; fields after status are guarded by BedrockSim.mu.
type simJob struct {
	seq          uint64
	id, arn      string
	name, token  string
	model, role  string
	inputURI     string
	outputURI    string
	timeoutHours int
	tags         map[string]string
	submitTime   time.Time

	status      string
	message     string
	changedAt   time.Time
	endTime     time.Time
	stoppedFrom string
	busy        bool // a step is doing this job's I/O
	files       []string
	total       int64
	processed   int64
	succeeded   int64
	failed      int64
}

func (s *BedrockSim) init() {
	s.once.Do(func() {
		if s.Account == "" {
			s.Account = DefaultAccount
		}
		if s.Region == "" {
			s.Region = DefaultRegion
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
		s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "UnknownOperationException",
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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("bedrock sim: listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	if s.closed || s.srv != nil {
		s.mu.Unlock()
		ln.Close()
		return "", errors.New("bedrock sim: closed or already listening")
	}
	s.srv = srv
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Log.Error("bedrock sim: serve", "err", err)
		}
	}()
	url := "http://" + ln.Addr().String()
	s.Log.Info("Bedrock simulator listening", "url", url)
	return url, nil
}

// Close stops the background stepping and the listener, if any.
func (s *BedrockSim) Close() error {
	s.init()
	s.mu.Lock()
	s.closed = true
	srv := s.srv
	s.mu.Unlock()
	s.cancel()
	var err error
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = srv.Shutdown(ctx)
		cancel()
	}
	s.wg.Wait()
	return err
}

// ServeHTTP implements the Bedrock control-plane routes.
func (s *BedrockSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

// Settle steps until every job has ended (or ctx ends).
func (s *BedrockSim) Settle(ctx context.Context) error {
	s.init()
	for range 100 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.step(ctx, true) == 0 {
			return nil
		}
	}
	return errors.New("bedrock sim: jobs did not settle in 100 steps")
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

// ---- HTTP handlers

var (
	jobNamePattern    = regexp.MustCompile(`^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9\+\-\.]){0,63}$`)
	tokenPattern      = regexp.MustCompile(`^[a-zA-Z0-9]{1,256}(-*[a-zA-Z0-9]){0,256}$`)
	roleARNPattern    = regexp.MustCompile(`^arn:aws(-[^:]+)?:iam::([0-9]{12})?:role/.+$`)
	identifierPattern = regexp.MustCompile(`^((arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:model-invocation-job/)?[a-z0-9]{12})$`)
)

type s3Config struct {
	S3URI         string `json:"s3Uri"`
	S3InputFormat string `json:"s3InputFormat,omitempty"`
}

type inputDataConfig struct {
	S3InputDataConfig *s3Config `json:"s3InputDataConfig,omitempty"`
}

type outputDataConfig struct {
	S3OutputDataConfig *s3Config `json:"s3OutputDataConfig,omitempty"`
}

type tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type createRequest struct {
	ClientRequestToken     string           `json:"clientRequestToken"`
	JobName                string           `json:"jobName"`
	ModelID                string           `json:"modelId"`
	RoleArn                string           `json:"roleArn"`
	InputDataConfig        inputDataConfig  `json:"inputDataConfig"`
	OutputDataConfig       outputDataConfig `json:"outputDataConfig"`
	TimeoutDurationInHours *int             `json:"timeoutDurationInHours"`
	Tags                   []tag            `json:"tags"`
	ModelInvocationType    string           `json:"modelInvocationType"`
}

func constraint(field, value, rule string) string {
	return fmt.Sprintf("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: %s", value, field, rule)
}

func (r *createRequest) validate() string {
	switch {
	case !jobNamePattern.MatchString(r.JobName) || len(r.JobName) > 63:
		return constraint("jobName", r.JobName, "Member must satisfy regular expression pattern: [a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9\\+\\-\\.]){0,63} and have length less than or equal to 63")
	case r.ClientRequestToken != "" && !tokenPattern.MatchString(r.ClientRequestToken):
		return constraint("clientRequestToken", r.ClientRequestToken, "Member must satisfy regular expression pattern: [a-zA-Z0-9]{1,256}(-*[a-zA-Z0-9]){0,256}")
	case !roleARNPattern.MatchString(r.RoleArn):
		return constraint("roleArn", r.RoleArn, "Member must satisfy regular expression pattern: ^arn:aws(-[^:]+)?:iam::([0-9]{12})?:role/.+$")
	case r.ModelID == "":
		return constraint("modelId", r.ModelID, "Member must not be null")
	case r.InputDataConfig.S3InputDataConfig == nil || !strings.HasPrefix(r.InputDataConfig.S3InputDataConfig.S3URI, "s3://"):
		return constraint("inputDataConfig.s3InputDataConfig.s3Uri", "", "Member must satisfy regular expression pattern: s3://.*")
	case r.OutputDataConfig.S3OutputDataConfig == nil || !strings.HasPrefix(r.OutputDataConfig.S3OutputDataConfig.S3URI, "s3://"):
		return constraint("outputDataConfig.s3OutputDataConfig.s3Uri", "", "Member must satisfy regular expression pattern: s3://.*")
	case r.TimeoutDurationInHours != nil && (*r.TimeoutDurationInHours < job.BedrockMinTimeoutHrs || *r.TimeoutDurationInHours > job.BedrockMaxTimeoutHrs):
		return constraint("timeoutDurationInHours", strconv.Itoa(*r.TimeoutDurationInHours), "Member must have value between 24 and 168")
	case r.ModelInvocationType != "" && r.ModelInvocationType != "InvokeModel":
		return fmt.Sprintf("the Bedrock simulator supports modelInvocationType InvokeModel only, got %s", r.ModelInvocationType)
	}
	return ""
}

func (s *BedrockSim) create(w http.ResponseWriter, r *http.Request) {
	const op = "CreateModelInvocationJob"
	if s.throttled(w, op) {
		return
	}
	var req createRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "ValidationException", "request body is not valid JSON: "+err.Error())
		return
	}
	if msg := req.validate(); msg != "" {
		writeError(w, http.StatusBadRequest, "ValidationException", msg)
		return
	}
	s.mu.Lock()
	if prev, ok := s.tokens[req.ClientRequestToken]; ok && req.ClientRequestToken != "" {
		s.mu.Unlock()
		if prev.name != req.JobName || prev.model != req.ModelID {
			writeError(w, http.StatusBadRequest, "ConflictException",
				fmt.Sprintf("clientRequestToken %s was used for job %s with other parameters", req.ClientRequestToken, prev.name))
			return
		}
		// Same token, same request: Bedrock ignores the retry and returns the first job.
		writeJSON(w, http.StatusOK, map[string]string{"jobArn": prev.arn})
		return
	}
	if _, ok := s.names[req.JobName]; ok {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "ConflictException", fmt.Sprintf("a batch inference job named %s already exists", req.JobName))
		return
	}
	base := baseModel(req.ModelID)
	active := 0
	for _, j := range s.order {
		if baseModel(j.model) == base && !ended(j.status) {
			active++
		}
	}
	if active >= s.MaxJobsPerModel {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "ServiceQuotaExceededException",
			fmt.Sprintf("[simulated] the quota of %d submitted and in-progress batch inference jobs for %s is reached", s.MaxJobsPerModel, base))
		return
	}
	now := s.Now().UTC()
	id := s.newJobID()
	j := &simJob{
		seq:          s.seq,
		id:           id,
		arn:          fmt.Sprintf("arn:aws:bedrock:%s:%s:model-invocation-job/%s", s.Region, s.Account, id),
		name:         req.JobName,
		token:        req.ClientRequestToken,
		model:        req.ModelID,
		role:         req.RoleArn,
		inputURI:     req.InputDataConfig.S3InputDataConfig.S3URI,
		outputURI:    req.OutputDataConfig.S3OutputDataConfig.S3URI,
		timeoutHours: defaultTimeoutHours,
		submitTime:   now,
		status:       job.BedrockSubmitted,
		changedAt:    now,
	}
	s.seq++
	if req.TimeoutDurationInHours != nil {
		j.timeoutHours = *req.TimeoutDurationInHours
	}
	if len(req.Tags) > 0 {
		j.tags = map[string]string{}
		for _, t := range req.Tags {
			j.tags[t.Key] = t.Value
		}
	}
	s.jobs[id] = j
	s.order = append(s.order, j)
	s.names[j.name] = j
	if j.token != "" {
		s.tokens[j.token] = j
	}
	s.queueEvent(j)
	s.mu.Unlock()
	s.Log.Info("bedrock sim: job submitted", "jobName", j.name, "jobArn", j.arn, "model", j.model)
	s.poke()
	writeJSON(w, http.StatusOK, map[string]string{"jobArn": j.arn})
}

// lookup finds a job by ARN or 12-char id; it writes the error itself.
func (s *BedrockSim) lookup(w http.ResponseWriter, ident string) *simJob {
	if !identifierPattern.MatchString(ident) {
		writeError(w, http.StatusBadRequest, "ValidationException", constraint("jobIdentifier", ident,
			"Member must satisfy regular expression pattern: ((arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:model-invocation-job/)?[a-z0-9]{12})"))
		return nil
	}
	id := ident[strings.LastIndexByte(ident, '/')+1:]
	s.mu.Lock()
	j, ok := s.jobs[id]
	s.mu.Unlock()
	if !ok || (strings.HasPrefix(ident, "arn:") && ident != j.arn) {
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", fmt.Sprintf("The specified job %s could not be found.", ident))
		return nil
	}
	return j
}

func (s *BedrockSim) get(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, "GetModelInvocationJob") {
		return
	}
	j := s.lookup(w, r.PathValue("id"))
	if j == nil {
		return
	}
	s.mu.Lock()
	v := s.view(j)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, v)
}

func (s *BedrockSim) stop(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, "StopModelInvocationJob") {
		return
	}
	j := s.lookup(w, r.PathValue("id"))
	if j == nil {
		return
	}
	s.mu.Lock()
	switch {
	case j.status == job.BedrockStopping:
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, struct{}{})
		return
	case ended(j.status):
		st := j.status
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "ValidationException",
			fmt.Sprintf("The job %s is in %s state and cannot be stopped.", j.arn, st))
		return
	}
	j.stoppedFrom = j.status
	s.setStatus(j, job.BedrockStopping, "")
	s.mu.Unlock()
	s.poke()
	writeJSON(w, http.StatusOK, struct{}{})
}

func (s *BedrockSim) list(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, "ListModelInvocationJobs") {
		return
	}
	q := r.URL.Query()
	maxResults := 1000
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "ValidationException", constraint("maxResults", v, "Member must have value between 1 and 1000"))
			return
		}
		maxResults = n
	}
	offset := 0
	if v := q.Get("nextToken"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(b), "offset:"))
		if err != nil || err2 != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "ValidationException", "invalid nextToken")
			return
		}
		offset = n
	}
	var after, before time.Time
	for name, t := range map[string]*time.Time{"submitTimeAfter": &after, "submitTimeBefore": &before} {
		if v := q.Get(name); v != "" {
			p, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				writeError(w, http.StatusBadRequest, "ValidationException", constraint(name, v, "Member must be an ISO 8601 timestamp"))
				return
			}
			*t = p
		}
	}
	nameContains, statusEquals := q.Get("nameContains"), q.Get("statusEquals")
	ascending := q.Get("sortOrder") == "Ascending"

	s.mu.Lock()
	var match []jobView
	for _, j := range s.order {
		if nameContains != "" && !strings.Contains(j.name, nameContains) ||
			statusEquals != "" && j.status != statusEquals ||
			!after.IsZero() && !j.submitTime.After(after) ||
			!before.IsZero() && !j.submitTime.Before(before) {
			continue
		}
		match = append(match, s.view(j))
	}
	s.mu.Unlock()
	if !ascending {
		slices.Reverse(match) // creation order is submit-time order
	}
	resp := struct {
		InvocationJobSummaries []jobView `json:"invocationJobSummaries"`
		NextToken              string    `json:"nextToken,omitempty"`
	}{InvocationJobSummaries: []jobView{}}
	if offset < len(match) {
		end := min(offset+maxResults, len(match))
		resp.InvocationJobSummaries = match[offset:end]
		if end < len(match) {
			resp.NextToken = base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(end)))
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *BedrockSim) throttled(w http.ResponseWriter, op string) bool {
	if s.ThrottleAPI != nil && s.ThrottleAPI(op) {
		writeError(w, http.StatusTooManyRequests, "ThrottlingException", "[simulated] Too many requests, please wait before trying again.")
		return true
	}
	return false
}

// jobView is GetModelInvocationJob's response and a ListModelInvocationJobs summary.
type jobView struct {
	ClientRequestToken     string           `json:"clientRequestToken,omitempty"`
	EndTime                string           `json:"endTime,omitempty"`
	ErrorRecordCount       *int64           `json:"errorRecordCount,omitempty"`
	InputDataConfig        inputDataConfig  `json:"inputDataConfig"`
	JobArn                 string           `json:"jobArn"`
	JobExpirationTime      string           `json:"jobExpirationTime"`
	JobName                string           `json:"jobName"`
	LastModifiedTime       string           `json:"lastModifiedTime"`
	Message                string           `json:"message,omitempty"`
	ModelID                string           `json:"modelId"`
	ModelInvocationType    string           `json:"modelInvocationType"`
	OutputDataConfig       outputDataConfig `json:"outputDataConfig"`
	ProcessedRecordCount   *int64           `json:"processedRecordCount,omitempty"`
	RoleArn                string           `json:"roleArn"`
	Status                 string           `json:"status"`
	SubmitTime             string           `json:"submitTime"`
	SuccessRecordCount     *int64           `json:"successRecordCount,omitempty"`
	TimeoutDurationInHours int              `json:"timeoutDurationInHours"`
	TotalRecordCount       *int64           `json:"totalRecordCount,omitempty"`
}

// timestamp is the REST-JSON date-time shape (ISO 8601, UTC, milliseconds).
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// view must be called with s.mu held.
func (s *BedrockSim) view(j *simJob) jobView {
	v := jobView{
		ClientRequestToken:     j.token,
		EndTime:                timestamp(j.endTime),
		InputDataConfig:        inputDataConfig{S3InputDataConfig: &s3Config{S3URI: j.inputURI, S3InputFormat: "JSONL"}},
		JobArn:                 j.arn,
		JobExpirationTime:      timestamp(j.submitTime.Add(time.Duration(j.timeoutHours) * time.Hour)),
		JobName:                j.name,
		LastModifiedTime:       timestamp(j.changedAt),
		Message:                j.message,
		ModelID:                j.model,
		ModelInvocationType:    "InvokeModel",
		OutputDataConfig:       outputDataConfig{S3OutputDataConfig: &s3Config{S3URI: j.outputURI}},
		RoleArn:                j.role,
		Status:                 j.status,
		SubmitTime:             timestamp(j.submitTime),
		TimeoutDurationInHours: j.timeoutHours,
	}
	if j.total > 0 {
		total, processed, ok, failed := j.total, j.processed, j.succeeded, j.failed
		v.TotalRecordCount, v.ProcessedRecordCount, v.SuccessRecordCount, v.ErrorRecordCount = &total, &processed, &ok, &failed
	}
	return v
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in the REST-JSON error shape the SDK decodes: the type in
// X-Amzn-ErrorType and {"message": ...} in the body.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Amzn-ErrorType", code)
	writeJSON(w, status, map[string]string{"message": msg})
}

// ---- state machine

func ended(status string) bool {
	o, ok := job.BedrockOutcome(status)
	return ok && o.Ended
}

func baseModel(model string) string {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	base, _ := config.BaseModel(model)
	return base
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
	case job.BedrockSubmitted:
		next = job.BedrockValidating
	case job.BedrockValidating:
		v, err := s.validate(ctx, j)
		if err != nil {
			next, message = job.BedrockFailed, err.Error()
		} else {
			next = job.BedrockScheduled
			s.mu.Lock()
			j.files, j.total = v.files, v.total
			s.mu.Unlock()
		}
	case job.BedrockScheduled:
		next = job.BedrockInProgress
		if s.ExpireJob != nil && s.ExpireJob(j.name) {
			next, message = job.BedrockExpired, "The job was not started before its timeout expired."
		}
	case job.BedrockInProgress:
		if s.FailJob != nil {
			if msg := s.FailJob(j.name); msg != "" {
				next, message = job.BedrockFailed, msg
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
			next, message = job.BedrockFailed, "Internal error while processing the job: "+err.Error()
		case res.processed < s.total(j):
			next, message = job.BedrockPartiallyCompleted, "Not all records could be processed before the job's timeout."
		default:
			next = job.BedrockCompleted
		}
	case job.BedrockStopping:
		next = job.BedrockStopped
		if stoppedFrom == job.BedrockInProgress {
			var err error
			res, err = s.process(ctx, j, files, int(s.total(j)/2))
			if err != nil {
				next, message = job.BedrockFailed, "Internal error while stopping the job: "+err.Error()
			}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	j.busy = false
	if j.status != status {
		return // stopped meanwhile: the Stopping step takes over
	}
	if res.processed > 0 {
		j.processed, j.succeeded, j.failed = res.processed, res.succeeded, res.failed
	}
	s.setStatus(j, next, message)
}

func (s *BedrockSim) total(j *simJob) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return j.total
}

// ---- events

// queueEvent must be called with s.mu held.
func (s *BedrockSim) queueEvent(j *simJob) {
	ev := eventEnvelope{
		Version:    "0",
		ID:         s.uuidLocked(),
		DetailType: config.BedrockDetailType,
		Source:     config.BedrockEventSource,
		Account:    s.Account,
		Time:       j.changedAt.UTC().Format(time.RFC3339),
		Region:     s.Region,
		Resources:  []string{j.arn},
		Detail: eventDetail{
			Version:        "0.1",
			AccountID:      s.Account,
			BatchJobName:   j.name,
			BatchJobArn:    j.arn,
			BatchModelID:   j.model,
			Status:         j.status,
			FailureMessage: j.message,
			CreationTime:   j.submitTime.UTC().Format("Jan 2, 2006, 3:04:05 PM"),
		},
	}
	b, err := json.Marshal(ev)
	if err != nil {
		s.Log.Error("bedrock sim: encode event", "err", err)
		return
	}
	s.pending = append(s.pending, b)
}

type eventEnvelope struct {
	Version    string      `json:"version"`
	ID         string      `json:"id"`
	DetailType string      `json:"detail-type"`
	Source     string      `json:"source"`
	Account    string      `json:"account"`
	Time       string      `json:"time"`
	Region     string      `json:"region"`
	Resources  []string    `json:"resources"`
	Detail     eventDetail `json:"detail"`
}

type eventDetail struct {
	Version        string `json:"version"`
	AccountID      string `json:"accountId"`
	BatchJobName   string `json:"batchJobName"`
	BatchJobArn    string `json:"batchJobArn"`
	BatchModelID   string `json:"batchModelId"`
	Status         string `json:"status"`
	FailureMessage string `json:"failureMessage"`
	CreationTime   string `json:"creationTime"`
}

// flush delivers queued events in order, applying the loss and duplication knobs.
func (s *BedrockSim) flush(ctx context.Context) {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	events := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, ev := range events {
		var probe struct {
			Detail struct {
				Status string `json:"status"`
			} `json:"detail"`
		}
		_ = json.Unmarshal(ev, &probe)
		st := probe.Detail.Status
		if s.DropEvent != nil && s.DropEvent(st) {
			s.Log.Info("bedrock sim: event dropped on purpose (best-effort delivery)", "status", st)
			continue
		}
		n := 1
		if s.DuplicateEvent != nil && s.DuplicateEvent(st) {
			n = 2
		}
		for range n {
			if s.Emit != nil {
				s.Emit(ctx, ev)
			}
		}
	}
}

// ---- ids

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
