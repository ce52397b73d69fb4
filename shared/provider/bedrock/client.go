// Package bedrock adapts Amazon Bedrock batch inference (CreateModelInvocationJob and
// friends) to mcpbatch: it submits, reads, stops and lists provider jobs through the
// official SDK, encodes user records into Bedrock's input JSONL, and parses Bedrock's
// output lines, manifest and EventBridge events.
//
// Text and vision records become Converse requests (converse.go: one builder,
// shared with the runtime adapter bedrockrt, applying the model's quirks from
// the catalog) in jobs of modelInvocationType Converse; embeddings and native
// model_input bodies go in InvokeModel jobs. A part stores its invocation type
// and its output is read by it (OutputParser); parts stored before have none
// and are read as InvokeModel output (native.go).
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrock/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// API is the part of the Bedrock control-plane client this adapter calls, so tests
// can put a fake or the real client (pointed at the simulator) behind it.
type API interface {
	CreateModelInvocationJob(ctx context.Context, in *sdk.CreateModelInvocationJobInput, optFns ...func(*sdk.Options)) (*sdk.CreateModelInvocationJobOutput, error)
	GetModelInvocationJob(ctx context.Context, in *sdk.GetModelInvocationJobInput, optFns ...func(*sdk.Options)) (*sdk.GetModelInvocationJobOutput, error)
	StopModelInvocationJob(ctx context.Context, in *sdk.StopModelInvocationJobInput, optFns ...func(*sdk.Options)) (*sdk.StopModelInvocationJobOutput, error)
	ListModelInvocationJobs(ctx context.Context, in *sdk.ListModelInvocationJobsInput, optFns ...func(*sdk.Options)) (*sdk.ListModelInvocationJobsOutput, error)
}

var _ API = (*sdk.Client)(nil)

// Errors callers branch on. They wrap the SDK's typed error, so errors.As on the
// SDK type still works.
var (
	// ErrNotFound: Bedrock knows no job by that ARN, id or name.
	ErrNotFound = errors.New("bedrock job not found")
	// ErrQuotaExceeded: the per-model limit of submitted + in-progress jobs is reached;
	// the job should wait in the queue for the reconciler.
	ErrQuotaExceeded = errors.New("bedrock batch job quota exceeded")
	// ErrThrottled: the control plane throttled us after the SDK's own retries.
	ErrThrottled = errors.New("bedrock throttled the request")
)

// Timeout bounds of a batch job, in hours.
const (
	MinTimeoutHours     = job.BedrockMinTimeoutHrs
	MaxTimeoutHours     = job.BedrockMaxTimeoutHrs
	DefaultTimeoutHours = 72
)

// The patterns compile on first use, not at init: their counted repeats
// expand to programs that cost every function's cold start about 1 ms and
// 0.7 MB of allocations, and only the functions that submit or read Bedrock
// jobs use them.
var (
	// jobNamePattern is Bedrock's documented jobName pattern (1..63 characters).
	jobNamePattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9\+\-\.]){0,63}$`)
	})
	// tokenPattern is Bedrock's clientRequestToken pattern.
	tokenPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-zA-Z0-9]{1,256}(-*[a-zA-Z0-9]){0,256}$`)
	})
	// identifierPattern is what GetModelInvocationJob takes: an ARN or the 12-char job id.
	identifierPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^((arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:model-invocation-job/)?[a-z0-9]{12})$`)
	})
)

// Client submits and tracks Bedrock batch inference jobs.
type Client struct {
	API API
	Log *slog.Logger
}

// New returns a Client over api (normally *bedrock.Client).
func New(api API, log *slog.Logger) *Client {
	if log == nil {
		log = slog.Default()
	}
	return &Client{API: api, Log: log}
}

// SubmitInput describes one provider job.
type SubmitInput struct {
	// JobName must match Bedrock's jobName pattern, at most 63 characters.
	JobName string
	// ClientRequestToken makes the submit idempotent: the same token returns the
	// same job. Required: left empty, the SDK would invent one per attempt.
	ClientRequestToken string
	ModelID            string
	RoleARN            string
	// InputURI is the s3:// URI of the JSONL input file (or a prefix of files).
	InputURI string
	// OutputURI is the s3:// prefix Bedrock writes <job id>/ under.
	OutputURI string
	// TimeoutHours is 24..168; 0 means DefaultTimeoutHours.
	TimeoutHours int
	Tags         map[string]string
	// InvocationType is InvocationConverse or InvocationInvokeModel ("": InvokeModel).
	InvocationType string
}

func (in SubmitInput) validate() (timeout int32, err error) {
	switch {
	case !jobNamePattern().MatchString(in.JobName) || len(in.JobName) > 63:
		return 0, job.Fieldf("jobName", "%q does not match Bedrock's jobName pattern (1..63 characters)", in.JobName)
	case !tokenPattern().MatchString(in.ClientRequestToken):
		return 0, job.Fieldf("clientRequestToken", "required and must match [a-zA-Z0-9]{1,256}(-*[a-zA-Z0-9]){0,256}, got %q", in.ClientRequestToken)
	case in.ModelID == "":
		return 0, job.Fieldf("modelId", "required")
	case !strings.HasPrefix(in.RoleARN, "arn:"):
		return 0, job.Fieldf("roleArn", "want an IAM role ARN, got %q", in.RoleARN)
	case !strings.HasPrefix(in.InputURI, "s3://"):
		return 0, job.Fieldf("inputUri", "want s3://bucket/key, got %q", in.InputURI)
	case !strings.HasPrefix(in.OutputURI, "s3://"):
		return 0, job.Fieldf("outputUri", "want s3://bucket/prefix, got %q", in.OutputURI)
	case in.InvocationType != "" && in.InvocationType != InvocationConverse && in.InvocationType != InvocationInvokeModel:
		return 0, job.Fieldf("modelInvocationType", "want %s or %s, got %q", InvocationConverse, InvocationInvokeModel, in.InvocationType)
	}
	h := in.TimeoutHours
	if h == 0 {
		h = DefaultTimeoutHours
	}
	if h < MinTimeoutHours || h > MaxTimeoutHours {
		return 0, job.Fieldf("timeoutHours", "must be %d..%d, got %d", MinTimeoutHours, MaxTimeoutHours, h)
	}
	return int32(h), nil
}

// Submit creates the batch job and returns its ARN. Resubmitting with the same
// ClientRequestToken returns the first job's ARN instead of creating a second job.
func (c *Client) Submit(ctx context.Context, in SubmitInput) (string, error) {
	timeout, err := in.validate()
	if err != nil {
		return "", err
	}
	req := &sdk.CreateModelInvocationJobInput{
		JobName:            aws.String(in.JobName),
		ClientRequestToken: aws.String(in.ClientRequestToken),
		ModelId:            aws.String(in.ModelID),
		RoleArn:            aws.String(in.RoleARN),
		InputDataConfig: &types.ModelInvocationJobInputDataConfigMemberS3InputDataConfig{
			Value: types.ModelInvocationJobS3InputDataConfig{
				S3Uri:         aws.String(in.InputURI),
				S3InputFormat: types.S3InputFormatJsonl,
			},
		},
		OutputDataConfig: &types.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig{
			Value: types.ModelInvocationJobS3OutputDataConfig{S3Uri: aws.String(in.OutputURI)},
		},
		TimeoutDurationInHours: aws.Int32(timeout),
		ModelInvocationType:    types.ModelInvocationType(in.InvocationType),
	}
	if len(in.Tags) > 0 {
		keys := make([]string, 0, len(in.Tags))
		for k := range in.Tags {
			keys = append(keys, k)
		}
		sort.Strings(keys) // stable requests make logs and tests comparable
		for _, k := range keys {
			req.Tags = append(req.Tags, types.Tag{Key: aws.String(k), Value: aws.String(in.Tags[k])})
		}
	}
	out, err := c.API.CreateModelInvocationJob(ctx, req)
	if err != nil {
		return "", fmt.Errorf("bedrock: create job %s: %w", in.JobName, classify(err))
	}
	arn := aws.ToString(out.JobArn)
	if arn == "" {
		return "", fmt.Errorf("bedrock: create job %s: response has no jobArn", in.JobName)
	}
	c.Log.InfoContext(ctx, "bedrock job submitted", "jobName", in.JobName, "jobArn", arn, "model", in.ModelID, "invocationType", in.InvocationType)
	return arn, nil
}

// JobInfo is what Bedrock says about one job.
type JobInfo struct {
	ARN  string
	Name string
	// Status is Bedrock's own word (StatusCompleted, ...); Outcome maps it.
	Status               string
	Message              string
	ModelID              string
	OutputURI            string
	SubmitTime           time.Time
	EndTime              time.Time
	TotalRecordCount     int64
	ProcessedRecordCount int64
	SuccessRecordCount   int64
	ErrorRecordCount     int64
}

// Get reads a job by ARN, 12-char job id or job name. GetModelInvocationJob takes
// only an ARN or id, so a name is resolved with ListModelInvocationJobs.
func (c *Client) Get(ctx context.Context, arnOrName string) (JobInfo, error) {
	if arnOrName == "" {
		return JobInfo{}, job.Fieldf("jobIdentifier", "required")
	}
	if !identifierPattern().MatchString(arnOrName) {
		return c.getByName(ctx, arnOrName)
	}
	out, err := c.API.GetModelInvocationJob(ctx, &sdk.GetModelInvocationJobInput{JobIdentifier: aws.String(arnOrName)})
	if err != nil {
		return JobInfo{}, fmt.Errorf("bedrock: get job %s: %w", arnOrName, classify(err))
	}
	return JobInfo{
		ARN:                  aws.ToString(out.JobArn),
		Name:                 aws.ToString(out.JobName),
		Status:               string(out.Status),
		Message:              aws.ToString(out.Message),
		ModelID:              aws.ToString(out.ModelId),
		OutputURI:            outputURI(out.OutputDataConfig),
		SubmitTime:           aws.ToTime(out.SubmitTime),
		EndTime:              aws.ToTime(out.EndTime),
		TotalRecordCount:     aws.ToInt64(out.TotalRecordCount),
		ProcessedRecordCount: aws.ToInt64(out.ProcessedRecordCount),
		SuccessRecordCount:   aws.ToInt64(out.SuccessRecordCount),
		ErrorRecordCount:     aws.ToInt64(out.ErrorRecordCount),
	}, nil
}

func (c *Client) getByName(ctx context.Context, name string) (JobInfo, error) {
	var found *JobInfo
	err := c.List(ctx, name, func(j JobInfo) bool {
		if j.Name == name {
			found = &j
			return false
		}
		return true
	})
	if err != nil {
		return JobInfo{}, err
	}
	if found == nil {
		return JobInfo{}, fmt.Errorf("bedrock: get job %s: %w", name, ErrNotFound)
	}
	return *found, nil
}

// Stop asks Bedrock to stop a job. Stopping a job that has already ended (or is
// already stopping) is not an error: Bedrock answers ConflictException, or a
// ValidationException whose message names the job's state; both become nil.
// Other ValidationExceptions (a malformed ARN) and ResourceNotFoundException are errors.
func (c *Client) Stop(ctx context.Context, arn string) error {
	if arn == "" {
		return job.Fieldf("jobIdentifier", "required")
	}
	_, err := c.API.StopModelInvocationJob(ctx, &sdk.StopModelInvocationJobInput{JobIdentifier: aws.String(arn)})
	if err == nil {
		c.Log.InfoContext(ctx, "bedrock job stop requested", "jobArn", arn)
		return nil
	}
	if alreadyEnded(err) {
		c.Log.InfoContext(ctx, "bedrock job already ended, nothing to stop", "jobArn", arn, "reason", err.Error())
		return nil
	}
	return fmt.Errorf("bedrock: stop job %s: %w", arn, classify(err))
}

// endedStatuses are the words a "wrong state" ValidationException names, in
// Bedrock's capitalisation (a constraint message says "failed to satisfy").
var endedStatuses = []string{"Completed", "PartiallyCompleted", "Failed", "Stopped", "Stopping", "Expired"}

func alreadyEnded(err error) bool {
	var conflict *types.ConflictException
	if errors.As(err, &conflict) {
		return true
	}
	var invalid *types.ValidationException
	if !errors.As(err, &invalid) {
		return false
	}
	msg := invalid.ErrorMessage()
	if strings.Contains(msg, "failed to satisfy constraint") {
		return false // a malformed identifier, not the job's state
	}
	for _, w := range endedStatuses {
		if strings.Contains(msg, w) {
			return true
		}
	}
	lower := strings.ToLower(msg)
	return strings.Contains(lower, "state") || strings.Contains(lower, "status")
}

// List calls fn for every job whose name contains nameContains (all jobs when
// empty), newest first, page by page, until fn returns false.
func (c *Client) List(ctx context.Context, nameContains string, fn func(JobInfo) bool) error {
	in := &sdk.ListModelInvocationJobsInput{
		MaxResults: aws.Int32(100),
		SortBy:     types.SortJobsByCreationTime,
		SortOrder:  types.SortOrderDescending,
	}
	if nameContains != "" {
		in.NameContains = aws.String(nameContains)
	}
	pages := sdk.NewListModelInvocationJobsPaginator(c.API, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("bedrock: list jobs %q: %w", nameContains, classify(err))
		}
		for _, s := range page.InvocationJobSummaries {
			if !fn(summaryInfo(s)) {
				return nil
			}
		}
	}
	return nil
}

func summaryInfo(s types.ModelInvocationJobSummary) JobInfo {
	return JobInfo{
		ARN:                  aws.ToString(s.JobArn),
		Name:                 aws.ToString(s.JobName),
		Status:               string(s.Status),
		Message:              aws.ToString(s.Message),
		ModelID:              aws.ToString(s.ModelId),
		OutputURI:            outputURI(s.OutputDataConfig),
		SubmitTime:           aws.ToTime(s.SubmitTime),
		EndTime:              aws.ToTime(s.EndTime),
		TotalRecordCount:     aws.ToInt64(s.TotalRecordCount),
		ProcessedRecordCount: aws.ToInt64(s.ProcessedRecordCount),
		SuccessRecordCount:   aws.ToInt64(s.SuccessRecordCount),
		ErrorRecordCount:     aws.ToInt64(s.ErrorRecordCount),
	}
}

func outputURI(c types.ModelInvocationJobOutputDataConfig) string {
	if s3, ok := c.(*types.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig); ok {
		return aws.ToString(s3.Value.S3Uri)
	}
	return ""
}

// classify adds a sentinel the service layer can branch on to the SDK's error.
func classify(err error) error {
	var (
		notFound *types.ResourceNotFoundException
		quota    *types.ServiceQuotaExceededException
		throttle *types.ThrottlingException
	)
	switch {
	case errors.As(err, &notFound):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.As(err, &quota):
		return fmt.Errorf("%w: %w", ErrQuotaExceeded, err)
	case errors.As(err, &throttle):
		return fmt.Errorf("%w: %w", ErrThrottled, err)
	}
	return err
}
