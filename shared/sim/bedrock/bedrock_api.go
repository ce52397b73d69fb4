package bedrock

// The REST-JSON routes the Bedrock SDK calls, with Bedrock's request checks and error shapes.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

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

// The two modelInvocationType values of CreateModelInvocationJob.
const (
	invocationInvoke   = "InvokeModel"
	invocationConverse = "Converse"
)

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
	case r.TimeoutDurationInHours != nil && (*r.TimeoutDurationInHours < bedrockMinTimeoutHours || *r.TimeoutDurationInHours > bedrockMaxTimeoutHours):
		return constraint("timeoutDurationInHours", strconv.Itoa(*r.TimeoutDurationInHours), "Member must have value between 24 and 168")
	case r.ModelInvocationType != "" && r.ModelInvocationType != invocationInvoke && r.ModelInvocationType != invocationConverse:
		return constraint("modelInvocationType", r.ModelInvocationType, "Member must satisfy enum value set: [InvokeModel, Converse]")
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
		sim.WriteError(w, http.StatusBadRequest, "ValidationException", "request body is not valid JSON: "+err.Error())
		return
	}
	if msg := req.validate(); msg != "" {
		sim.WriteError(w, http.StatusBadRequest, "ValidationException", msg)
		return
	}
	if m, ok := s.Models.lookup(baseModel(req.ModelID)); ok && m.Batch == nil {
		sim.WriteError(w, http.StatusBadRequest, "ValidationException",
			fmt.Sprintf("[simulated] batch inference is not supported for the model %s in %s", m.ID, s.Region))
		return
	}
	s.mu.Lock()
	if prev, ok := s.tokens[req.ClientRequestToken]; ok && req.ClientRequestToken != "" {
		s.mu.Unlock()
		if prev.name != req.JobName || prev.model != req.ModelID {
			sim.WriteError(w, http.StatusBadRequest, "ConflictException",
				fmt.Sprintf("clientRequestToken %s was used for job %s with other parameters", req.ClientRequestToken, prev.name))
			return
		}
		// Same token, same request: Bedrock ignores the retry and returns the first job.
		sim.WriteJSON(w, http.StatusOK, map[string]string{"jobArn": prev.arn})
		return
	}
	if _, ok := s.names[req.JobName]; ok {
		s.mu.Unlock()
		sim.WriteError(w, http.StatusBadRequest, "ConflictException", fmt.Sprintf("a batch inference job named %s already exists", req.JobName))
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
		sim.WriteError(w, http.StatusBadRequest, "ServiceQuotaExceededException",
			fmt.Sprintf("[simulated] the quota of %d submitted and in-progress batch inference jobs for %s is reached", s.MaxJobsPerModel, base))
		return
	}
	now := s.Now().UTC()
	id := s.newJobID()
	j := &simJob{
		seq:            s.seq,
		id:             id,
		arn:            fmt.Sprintf("arn:aws:bedrock:%s:%s:model-invocation-job/%s", s.Region, s.Account, id),
		name:           req.JobName,
		token:          req.ClientRequestToken,
		model:          req.ModelID,
		role:           req.RoleArn,
		inputURI:       req.InputDataConfig.S3InputDataConfig.S3URI,
		outputURI:      req.OutputDataConfig.S3OutputDataConfig.S3URI,
		invocationType: invocationInvoke,
		timeoutHours:   defaultTimeoutHours,
		submitTime:     now,
		status:         bedrockSubmitted,
		changedAt:      now,
	}
	s.seq++
	if req.ModelInvocationType != "" {
		j.invocationType = req.ModelInvocationType
	}
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
	sim.WriteJSON(w, http.StatusOK, map[string]string{"jobArn": j.arn})
}

// lookup finds a job by ARN or 12-char id; it writes the error itself.
func (s *BedrockSim) lookup(w http.ResponseWriter, ident string) *simJob {
	if !identifierPattern.MatchString(ident) {
		sim.WriteError(w, http.StatusBadRequest, "ValidationException", constraint("jobIdentifier", ident,
			"Member must satisfy regular expression pattern: ((arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:model-invocation-job/)?[a-z0-9]{12})"))
		return nil
	}
	id := ident[strings.LastIndexByte(ident, '/')+1:]
	s.mu.Lock()
	j, ok := s.jobs[id]
	s.mu.Unlock()
	if !ok || (strings.HasPrefix(ident, "arn:") && ident != j.arn) {
		sim.WriteError(w, http.StatusNotFound, "ResourceNotFoundException", fmt.Sprintf("The specified job %s could not be found.", ident))
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
	sim.WriteJSON(w, http.StatusOK, v)
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
	case j.status == bedrockStopping:
		s.mu.Unlock()
		sim.WriteJSON(w, http.StatusOK, struct{}{})
		return
	case ended(j.status):
		st := j.status
		s.mu.Unlock()
		sim.WriteError(w, http.StatusBadRequest, "ValidationException",
			fmt.Sprintf("The job %s is in %s state and cannot be stopped.", j.arn, st))
		return
	}
	j.stoppedFrom = j.status
	s.setStatus(j, bedrockStopping, "")
	s.mu.Unlock()
	s.poke()
	sim.WriteJSON(w, http.StatusOK, struct{}{})
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
			sim.WriteError(w, http.StatusBadRequest, "ValidationException", constraint("maxResults", v, "Member must have value between 1 and 1000"))
			return
		}
		maxResults = n
	}
	offset := 0
	if v := q.Get("nextToken"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(b), "offset:"))
		if err != nil || err2 != nil || n < 0 {
			sim.WriteError(w, http.StatusBadRequest, "ValidationException", "invalid nextToken")
			return
		}
		offset = n
	}
	var after, before time.Time
	for name, t := range map[string]*time.Time{"submitTimeAfter": &after, "submitTimeBefore": &before} {
		if v := q.Get(name); v != "" {
			p, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				sim.WriteError(w, http.StatusBadRequest, "ValidationException", constraint(name, v, "Member must be an ISO 8601 timestamp"))
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
	sim.WriteJSON(w, http.StatusOK, resp)
}

func (s *BedrockSim) throttled(w http.ResponseWriter, op string) bool {
	if s.ThrottleAPI != nil && s.ThrottleAPI(op) {
		sim.WriteError(w, http.StatusTooManyRequests, "ThrottlingException", "[simulated] Too many requests, please wait before trying again.")
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
		ModelInvocationType:    j.invocationType,
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
