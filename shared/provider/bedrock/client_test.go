package bedrock_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrock/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/sim/simtest"
)

const roleARN = "arn:aws:iam::123456789012:role/mcpbatch-bedrock"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type fixture struct {
	sim    *simbedrock.BedrockSim
	blobs  *simtest.MemBlobs
	client *bedrock.Client
}

// newFixture runs the simulator behind an httptest server and points the real
// SDK client at it.
func newFixture(t *testing.T, knobs func(*simbedrock.BedrockSim), opts ...func(*sdk.Options)) *fixture {
	t.Helper()
	f := &fixture{blobs: simtest.NewMemBlobs()}
	f.sim = simbedrock.NewBedrockSim(f.blobs, nil)
	f.sim.Log = quiet
	if knobs != nil {
		knobs(f.sim)
	}
	srv := httptest.NewServer(f.sim)
	t.Cleanup(func() {
		srv.Close()
		_ = f.sim.Close()
	})
	f.client = bedrock.New(simtest.NewBedrockClient(srv.URL, opts...), quiet)
	return f
}

// writeInput encodes n prompts with EncodeRecordAt into the input file of jobID.
func (f *fixture) writeInput(t *testing.T, id string, n int) string {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		line, err := bedrock.EncodeRecordAt(i, haiku, job.Input{ID: fmt.Sprintf("r%05d", i), Prompt: fmt.Sprintf("Question %d <b>", i)}, job.Params{MaxTokens: 200})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	uri := "s3://bucket/input/" + id + "/records.jsonl"
	if _, err := f.blobs.Put(context.Background(), uri, &b, "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	return uri
}

func submitInput(id, inputURI string) bedrock.SubmitInput {
	return bedrock.SubmitInput{
		JobName:            "mcpbatch-" + id,
		ClientRequestToken: id,
		ModelID:            haiku,
		RoleARN:            roleARN,
		InputURI:           inputURI,
		OutputURI:          "s3://bucket/output/" + id,
		Tags:               map[string]string{"mcpbatch:job": id, "app": "mcpbatch"},
		InvocationType:     bedrock.InvocationConverse, // writeInput's prompts are Converse requests
	}
}

func TestSubmitGetStopList(t *testing.T) {
	f := newFixture(t, func(s *simbedrock.BedrockSim) { s.FailEvery = 25 })
	ctx := context.Background()
	id := job.NewID(time.Now())
	in := submitInput(id, f.writeInput(t, id, 150))

	arn, err := f.client.Submit(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(arn, "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/") {
		t.Fatalf("arn %s", arn)
	}

	t.Run("same clientRequestToken gives the same job", func(t *testing.T) {
		again, err := f.client.Submit(ctx, in)
		if err != nil || again != arn {
			t.Fatalf("resubmit: %s, %v; want %s", again, err, arn)
		}
		n := 0
		if err := f.client.List(ctx, "", func(bedrock.JobInfo) bool { n++; return true }); err != nil || n != 1 {
			t.Errorf("jobs after a resubmit: %d, %v", n, err)
		}
	})

	t.Run("get by ARN, id and name", func(t *testing.T) {
		for _, ident := range []string{arn, bedrock.JobID(arn), in.JobName} {
			info, err := f.client.Get(ctx, ident)
			if err != nil {
				t.Fatalf("get %s: %v", ident, err)
			}
			if info.ARN != arn || info.Name != in.JobName || info.Status != bedrock.StatusSubmitted ||
				info.OutputURI != in.OutputURI || info.ModelID != haiku || info.SubmitTime.IsZero() {
				t.Errorf("get %s: %+v", ident, info)
			}
		}
	})

	t.Run("completed with counts", func(t *testing.T) {
		if err := f.sim.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		info, err := f.client.Get(ctx, arn)
		if err != nil {
			t.Fatal(err)
		}
		want := bedrock.JobInfo{TotalRecordCount: 150, ProcessedRecordCount: 150, SuccessRecordCount: 144, ErrorRecordCount: 6}
		if info.Status != bedrock.StatusCompleted || info.EndTime.IsZero() ||
			info.TotalRecordCount != want.TotalRecordCount || info.ProcessedRecordCount != want.ProcessedRecordCount ||
			info.SuccessRecordCount != want.SuccessRecordCount || info.ErrorRecordCount != want.ErrorRecordCount {
			t.Errorf("info %+v", info)
		}
	})

	t.Run("output parses and matches the manifest", func(t *testing.T) {
		prefix := bedrock.OutputPrefix(in.OutputURI, arn)
		objs, err := f.blobs.List(ctx, prefix)
		if err != nil || len(objs) != 2 {
			t.Fatalf("output objects %v, %v", objs, err)
		}
		var ok, failed, inTok, outTok int64
		seen := map[string]bool{}
		for _, o := range objs {
			if !strings.HasSuffix(o.URI, bedrock.OutputSuffix) || strings.HasSuffix(o.URI, bedrock.ManifestName) {
				continue
			}
			r, err := f.blobs.Open(ctx, o.URI, 0)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				rec, err := bedrock.ParseConverseLine(sc.Bytes())
				if err != nil {
					t.Fatalf("parse %s: %v", sc.Bytes(), err)
				}
				seen[rec.ID] = true
				switch rec.Status {
				case job.RecordSucceeded:
					ok++
					inTok += rec.InputTokens
					outTok += rec.OutputTokens
					if !strings.HasPrefix(rec.Output, "[simulated]") || rec.StopReason == "" {
						t.Errorf("record %+v", rec)
					}
				case job.RecordFailed:
					failed++
					if rec.ErrorCode != "400" && rec.ErrorCode != "ThrottlingException" {
						t.Errorf("error code %q", rec.ErrorCode)
					}
				}
			}
			r.Close()
		}
		r, err := f.blobs.Open(ctx, prefix+bedrock.ManifestName, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		m, err := bedrock.ParseManifest(r)
		if err != nil {
			t.Fatal(err)
		}
		want := bedrock.Manifest{TotalRecordCount: 150, ProcessedRecordCount: 150, SuccessRecordCount: ok, ErrorRecordCount: failed, InputTokenCount: inTok, OutputTokenCount: outTok}
		if m != want || len(seen) != 150 || ok != 144 {
			t.Errorf("manifest %+v, want %+v (records seen %d)", m, want, len(seen))
		}
	})

	t.Run("stopping an ended job is not an error", func(t *testing.T) {
		if err := f.client.Stop(ctx, arn); err != nil {
			t.Errorf("stop completed job: %v", err)
		}
	})

	t.Run("not found", func(t *testing.T) {
		const ghost = "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/zzzzzzzzzzzz"
		for name, err := range map[string]error{
			"get arn":  second(f.client.Get(ctx, ghost)),
			"get name": second(f.client.Get(ctx, "mcpbatch-nosuchjob")),
			"stop":     f.client.Stop(ctx, ghost),
		} {
			var nf *types.ResourceNotFoundException
			if !errors.Is(err, bedrock.ErrNotFound) {
				t.Errorf("%s: %v, want ErrNotFound", name, err)
			}
			if name != "get name" && !errors.As(err, &nf) {
				t.Errorf("%s: %v does not wrap the SDK's ResourceNotFoundException", name, err)
			}
		}
	})
}

func second[T any](_ T, err error) error { return err }

func TestStopRunningJob(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	id := job.NewID(time.Now())
	arn, err := f.client.Submit(ctx, submitInput(id, f.writeInput(t, id, 100)))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		f.sim.Step(ctx)
	}
	if err := f.client.Stop(ctx, arn); err != nil {
		t.Fatal(err)
	}
	if info, _ := f.client.Get(ctx, arn); info.Status != bedrock.StatusStopping {
		t.Errorf("status %s, want Stopping", info.Status)
	}
	if err := f.client.Stop(ctx, arn); err != nil {
		t.Errorf("stop while stopping: %v", err)
	}
	if err := f.sim.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := f.client.Get(ctx, arn)
	if err != nil || info.Status != bedrock.StatusStopped || info.ProcessedRecordCount != 50 {
		t.Errorf("info %+v, %v; want Stopped with 50 processed", info, err)
	}
	if err := f.client.Stop(ctx, arn); err != nil {
		t.Errorf("stop stopped job: %v", err)
	}
}

func TestListPaginates(t *testing.T) {
	f := newFixture(t, func(s *simbedrock.BedrockSim) { s.MaxJobsPerModel = 1000 })
	ctx := context.Background()
	input := f.writeInput(t, "shared", 100)
	for i := range 130 {
		id := fmt.Sprintf("j%03d", i)
		if _, err := f.client.Submit(ctx, submitInput(id, input)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		contains string
		stopAt   int
		want     int
		first    string
	}{
		{"all pages, newest first", "", 0, 130, "mcpbatch-j129"},
		{"name filter", "mcpbatch-j12", 0, 10, "mcpbatch-j129"},
		{"fn stops the walk", "", 7, 7, "mcpbatch-j129"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			err := f.client.List(ctx, tc.contains, func(j bedrock.JobInfo) bool {
				names = append(names, j.Name)
				return tc.stopAt == 0 || len(names) < tc.stopAt
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(names) != tc.want || names[0] != tc.first {
				t.Errorf("%d names starting %v, want %d starting %s", len(names), names[:min(3, len(names))], tc.want, tc.first)
			}
		})
	}
}

func TestSubmitErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("quota", func(t *testing.T) {
		f := newFixture(t, func(s *simbedrock.BedrockSim) { s.MaxJobsPerModel = 1 })
		input := f.writeInput(t, "q", 100)
		if _, err := f.client.Submit(ctx, submitInput("q1", input)); err != nil {
			t.Fatal(err)
		}
		_, err := f.client.Submit(ctx, submitInput("q2", input))
		var q *types.ServiceQuotaExceededException
		if !errors.Is(err, bedrock.ErrQuotaExceeded) || !errors.As(err, &q) {
			t.Errorf("err = %v, want ErrQuotaExceeded wrapping the SDK error", err)
		}
	})
	t.Run("throttled after the SDK's retries", func(t *testing.T) {
		f := newFixture(t, func(s *simbedrock.BedrockSim) { s.ThrottleAPI = func(string) bool { return true } },
			func(o *sdk.Options) { o.RetryMaxAttempts = 2 })
		_, err := f.client.Submit(ctx, submitInput("th", "s3://bucket/in.jsonl"))
		if !errors.Is(err, bedrock.ErrThrottled) || !strings.Contains(err.Error(), "mcpbatch-th") {
			t.Errorf("err = %v, want ErrThrottled naming the job", err)
		}
	})

	f := newFixture(t, nil)
	valid := submitInput("v", "s3://bucket/in.jsonl")
	tests := []struct {
		name      string
		mutate    func(*bedrock.SubmitInput)
		wantField string
	}{
		{"no token", func(in *bedrock.SubmitInput) { in.ClientRequestToken = "" }, "clientRequestToken"},
		{"bad token", func(in *bedrock.SubmitInput) { in.ClientRequestToken = "a b" }, "clientRequestToken"},
		{"bad job name", func(in *bedrock.SubmitInput) { in.JobName = "-x" }, "jobName"},
		{"job name too long", func(in *bedrock.SubmitInput) { in.JobName = strings.Repeat("a", 64) }, "jobName"},
		{"timeout too short", func(in *bedrock.SubmitInput) { in.TimeoutHours = 23 }, "timeoutHours"},
		{"timeout too long", func(in *bedrock.SubmitInput) { in.TimeoutHours = 169 }, "timeoutHours"},
		{"no model", func(in *bedrock.SubmitInput) { in.ModelID = "" }, "modelId"},
		{"bad role", func(in *bedrock.SubmitInput) { in.RoleARN = "role" }, "roleArn"},
		{"bad input uri", func(in *bedrock.SubmitInput) { in.InputURI = "/tmp/x" }, "inputUri"},
		{"bad output uri", func(in *bedrock.SubmitInput) { in.OutputURI = "bucket/x" }, "outputUri"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := valid
			tc.mutate(&in)
			_, err := f.client.Submit(ctx, in)
			var fe *job.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.wantField {
				t.Errorf("err = %v, want a FieldError on %s", err, tc.wantField)
			}
		})
	}
}

// fakeAPI records requests and answers with canned errors.
type fakeAPI struct {
	create  *sdk.CreateModelInvocationJobInput
	stopErr error
}

func (f *fakeAPI) CreateModelInvocationJob(_ context.Context, in *sdk.CreateModelInvocationJobInput, _ ...func(*sdk.Options)) (*sdk.CreateModelInvocationJobOutput, error) {
	f.create = in
	return &sdk.CreateModelInvocationJobOutput{JobArn: aws.String("arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abcdefabcdef")}, nil
}

func (f *fakeAPI) GetModelInvocationJob(context.Context, *sdk.GetModelInvocationJobInput, ...func(*sdk.Options)) (*sdk.GetModelInvocationJobOutput, error) {
	return nil, errors.New("not used")
}

func (f *fakeAPI) StopModelInvocationJob(context.Context, *sdk.StopModelInvocationJobInput, ...func(*sdk.Options)) (*sdk.StopModelInvocationJobOutput, error) {
	return &sdk.StopModelInvocationJobOutput{}, f.stopErr
}

func (f *fakeAPI) ListModelInvocationJobs(context.Context, *sdk.ListModelInvocationJobsInput, ...func(*sdk.Options)) (*sdk.ListModelInvocationJobsOutput, error) {
	return &sdk.ListModelInvocationJobsOutput{}, nil
}

func TestSubmitRequest(t *testing.T) {
	fake := &fakeAPI{}
	c := bedrock.New(fake, quiet)
	in := submitInput("01jdz3k6r8x9y2w4v5t7q0m1n3", "s3://bucket/input/x/records.jsonl")
	if _, err := c.Submit(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	req := fake.create
	s3in, _ := req.InputDataConfig.(*types.ModelInvocationJobInputDataConfigMemberS3InputDataConfig)
	s3out, _ := req.OutputDataConfig.(*types.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig)
	switch {
	case aws.ToString(req.ClientRequestToken) != in.ClientRequestToken:
		t.Errorf("token %q: the SDK must not invent one", aws.ToString(req.ClientRequestToken))
	case aws.ToInt32(req.TimeoutDurationInHours) != bedrock.DefaultTimeoutHours:
		t.Errorf("timeout %d", aws.ToInt32(req.TimeoutDurationInHours))
	case s3in == nil || aws.ToString(s3in.Value.S3Uri) != in.InputURI || s3in.Value.S3InputFormat != types.S3InputFormatJsonl:
		t.Errorf("input config %+v", req.InputDataConfig)
	case s3out == nil || aws.ToString(s3out.Value.S3Uri) != in.OutputURI:
		t.Errorf("output config %+v", req.OutputDataConfig)
	case len(req.Tags) != 2 || aws.ToString(req.Tags[0].Key) != "app" || aws.ToString(req.Tags[1].Value) != in.ClientRequestToken:
		t.Errorf("tags %+v, want sorted by key", req.Tags)
	case aws.ToString(req.JobName) != in.JobName || aws.ToString(req.ModelId) != in.ModelID || aws.ToString(req.RoleArn) != in.RoleARN:
		t.Errorf("request %+v", req)
	}
}

func TestStopErrors(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantNil bool
	}{
		{"conflict: already ended", &types.ConflictException{Message: aws.String("job is not running")}, true},
		{"validation naming the state", &types.ValidationException{Message: aws.String("The job is in Completed state and cannot be stopped.")}, true},
		{"validation naming a status word", &types.ValidationException{Message: aws.String("Cannot stop a job with status Expired")}, true},
		{"validation of the identifier", &types.ValidationException{Message: aws.String("1 validation error detected: Value 'x' at 'jobIdentifier' failed to satisfy constraint")}, false},
		{"access denied", &types.AccessDeniedException{Message: aws.String("no")}, false},
		{"internal", &types.InternalServerException{Message: aws.String("oops")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := bedrock.New(&fakeAPI{stopErr: tc.err}, quiet)
			err := c.Stop(context.Background(), "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abcdefabcdef")
			if (err == nil) != tc.wantNil {
				t.Errorf("err = %v, want nil: %v", err, tc.wantNil)
			}
			if err != nil && !errors.Is(err, tc.err) {
				t.Errorf("err %v does not wrap %v", err, tc.err)
			}
		})
	}
}

// The product's Converse encoder and the real SDK against the simulator, the
// submit check that refuses temperature for Sonnet 5 bypassed: the records
// carrying temperature fail with Bedrock's wording, the others succeed.
func TestConverseJobSamplingRefusedBySimulator(t *testing.T) {
	const sonnet5 = "global.anthropic.claude-sonnet-5"
	f := newFixture(t, nil)
	ctx := context.Background()
	id := job.NewID(time.Now())
	temp := 0.4
	var b bytes.Buffer
	for i := range 100 {
		p := job.Params{MaxTokens: 100}
		if i%10 == 0 {
			p.Temperature = &temp
		}
		line, err := bedrock.EncodeRecordAt(i, sonnet5, job.Input{ID: fmt.Sprintf("r%05d", i), Prompt: "q"}, p)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	uri := "s3://bucket/input/" + id + "/records.jsonl"
	if _, err := f.blobs.Put(ctx, uri, &b, "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	in := submitInput(id, uri)
	in.ModelID = sonnet5
	arn, err := f.client.Submit(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.sim.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	objs, err := f.blobs.List(ctx, bedrock.OutputPrefix(in.OutputURI, arn))
	if err != nil {
		t.Fatal(err)
	}
	failed, ok := 0, 0
	for _, o := range objs {
		if !strings.HasSuffix(o.URI, bedrock.OutputSuffix) || strings.HasSuffix(o.URI, bedrock.ManifestName) {
			continue
		}
		r, err := f.blobs.Open(ctx, o.URI, 0)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			rec, err := bedrock.ParseConverseLine(sc.Bytes())
			if err != nil {
				t.Fatalf("parse %s: %v", sc.Bytes(), err)
			}
			var i int
			fmt.Sscanf(rec.ID, "r%05d", &i)
			switch {
			case i%10 == 0 && rec.Status == job.RecordFailed && strings.Contains(rec.ErrorMessage, "`temperature` is deprecated for this model"):
				failed++
			case i%10 != 0 && rec.Status == job.RecordSucceeded:
				ok++
			default:
				t.Errorf("record %s: %s %q", rec.ID, rec.Status, rec.ErrorMessage)
			}
		}
		r.Close()
	}
	if failed != 10 || ok != 90 {
		t.Errorf("%d failed with temperature, %d succeeded; want 10 and 90", failed, ok)
	}
}
