package bedrock_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrock/types"

	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/sim/simtest"
)

const (
	claude   = "anthropic.claude-3-5-haiku-20241022-v1:0"
	roleARN  = "arn:aws:iam::123456789012:role/mcpbatch-bedrock"
	inputURI = "s3://bucket/input/job1/records.jsonl"
	outURI   = "s3://bucket/output/job1"
)

// recorder collects emitted events.
type recorder struct {
	mu     sync.Mutex
	events [][]byte
}

func (r *recorder) emit(_ context.Context, ev []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, bytes.Clone(ev))
}

type event struct {
	ID     string `json:"id"`
	Detail struct {
		BatchJobName   string `json:"batchJobName"`
		Status         string `json:"status"`
		FailureMessage string `json:"failureMessage"`
	} `json:"detail"`
}

func (r *recorder) parsed(t *testing.T) []event {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, b := range r.events {
		var e event
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("event is not JSON: %v: %s", err, b)
		}
		out = append(out, e)
	}
	return out
}

func (r *recorder) statuses(t *testing.T, name string) []string {
	var out []string
	for _, e := range r.parsed(t) {
		if e.Detail.BatchJobName == name {
			out = append(out, e.Detail.Status)
		}
	}
	return out
}

type env struct {
	sim    *simbedrock.BedrockSim
	client *sdk.Client
	blobs  *simtest.MemBlobs
	rec    *recorder
}

func newEnv(t *testing.T, knobs func(*simbedrock.BedrockSim), opts ...func(*sdk.Options)) *env {
	t.Helper()
	e := &env{blobs: simtest.NewMemBlobs(), rec: &recorder{}}
	e.sim = simbedrock.NewBedrockSim(e.blobs, e.rec.emit)
	e.sim.Seed = 7
	e.sim.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if knobs != nil {
		knobs(e.sim)
	}
	srv := httptest.NewServer(e.sim)
	t.Cleanup(func() {
		srv.Close()
		if err := e.sim.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	e.client = simtest.NewBedrockClient(srv.URL, opts...)
	return e
}

// claudeLines makes n valid Claude records r00000...
func claudeLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"recordId":"r%05d","modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tokens":256,"messages":[{"role":"user","content":"Question number %d"}]}}`+"\n", i, i)
	}
	return b.Bytes()
}

func (e *env) put(t *testing.T, uri string, data []byte) {
	t.Helper()
	if _, err := e.blobs.Put(context.Background(), uri, bytes.NewReader(data), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
}

func (e *env) create(t *testing.T, name, token, model string) (string, error) {
	t.Helper()
	out, err := e.client.CreateModelInvocationJob(context.Background(), &sdk.CreateModelInvocationJobInput{
		JobName:            aws.String(name),
		ClientRequestToken: aws.String(token),
		ModelId:            aws.String(model),
		RoleArn:            aws.String(roleARN),
		InputDataConfig: &types.ModelInvocationJobInputDataConfigMemberS3InputDataConfig{
			Value: types.ModelInvocationJobS3InputDataConfig{S3Uri: aws.String(inputURI), S3InputFormat: types.S3InputFormatJsonl},
		},
		OutputDataConfig: &types.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig{
			Value: types.ModelInvocationJobS3OutputDataConfig{S3Uri: aws.String(outURI)},
		},
		TimeoutDurationInHours: aws.Int32(72),
	})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.JobArn), nil
}

func (e *env) get(t *testing.T, arn string) *sdk.GetModelInvocationJobOutput {
	t.Helper()
	out, err := e.client.GetModelInvocationJob(context.Background(), &sdk.GetModelInvocationJobInput{JobIdentifier: aws.String(arn)})
	if err != nil {
		t.Fatalf("get %s: %v", arn, err)
	}
	return out
}

func jobID(arn string) string { return arn[strings.LastIndexByte(arn, '/')+1:] }

type outLine struct {
	RecordID    string          `json:"recordId"`
	ModelInput  json.RawMessage `json:"modelInput"`
	ModelOutput *struct {
		Type    string `json:"type"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"modelOutput"`
	Error *struct {
		ErrorCode    any    `json:"errorCode"`
		ErrorMessage string `json:"errorMessage"`
	} `json:"error"`
}

func (e *env) output(t *testing.T, arn string) ([]outLine, map[string]int64, bool) {
	t.Helper()
	prefix := outURI + "/" + jobID(arn) + "/"
	raw, ok := e.blobs.Bytes(prefix + "records.jsonl.out")
	if !ok {
		return nil, nil, false
	}
	var lines []outLine
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l outLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("output line is not JSON: %v: %s", err, sc.Bytes())
		}
		lines = append(lines, l)
	}
	mraw, ok := e.blobs.Bytes(prefix + "manifest.json.out")
	if !ok {
		t.Fatalf("output without manifest.json.out")
	}
	var m map[string]int64
	if err := json.Unmarshal(mraw, &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return lines, m, true
}

func TestLifecycle(t *testing.T) {
	tests := []struct {
		name       string
		records    int
		knobs      func(*simbedrock.BedrockSim)
		wantStatus []string
		wantTotal  int64
		wantOK     int64
		wantFailed int64
		wantOutput bool
		wantMsg    string
	}{
		{
			name: "completed", records: 150,
			wantStatus: []string{"Submitted", "Validating", "Scheduled", "InProgress", "Completed"},
			wantTotal:  150, wantOK: 150, wantOutput: true,
		},
		{
			name: "failed records still complete", records: 150,
			knobs:      func(s *simbedrock.BedrockSim) { s.FailEvery = 10 },
			wantStatus: []string{"Submitted", "Validating", "Scheduled", "InProgress", "Completed"},
			wantTotal:  150, wantOK: 135, wantFailed: 15, wantOutput: true,
		},
		{
			name: "FailRecord", records: 100,
			knobs: func(s *simbedrock.BedrockSim) {
				s.FailRecord = func(id string) bool { return id == "r00003" || id == "r00004" }
			},
			wantStatus: []string{"Submitted", "Validating", "Scheduled", "InProgress", "Completed"},
			wantTotal:  100, wantOK: 98, wantFailed: 2, wantOutput: true,
		},
		{
			name: "partially completed when time runs out", records: 200,
			knobs:      func(s *simbedrock.BedrockSim) { s.PartialAfter = 120 },
			wantStatus: []string{"Submitted", "Validating", "Scheduled", "InProgress", "PartiallyCompleted"},
			wantTotal:  200, wantOK: 120, wantOutput: true, wantMsg: "Not all records",
		},
		{
			name: "job fails", records: 100,
			knobs: func(s *simbedrock.BedrockSim) {
				s.FailJob = func(string) string { return "simulated internal failure" }
			},
			wantStatus: []string{"Submitted", "Validating", "Scheduled", "InProgress", "Failed"},
			wantTotal:  100, wantMsg: "simulated internal failure",
		},
		{
			name: "expired", records: 100,
			knobs:      func(s *simbedrock.BedrockSim) { s.ExpireJob = func(string) bool { return true } },
			wantStatus: []string{"Submitted", "Validating", "Scheduled", "Expired"},
			wantTotal:  100, wantMsg: "timeout",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.knobs)
			input := claudeLines(tc.records)
			e.put(t, inputURI, input)
			arn, err := e.create(t, "mcpbatch-job1", "job1", claude)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.get(t, arn).Status; got != types.ModelInvocationJobStatusSubmitted {
				t.Fatalf("status after create = %s, want Submitted", got)
			}
			if err := e.sim.Settle(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := e.rec.statuses(t, "mcpbatch-job1"); !slices.Equal(got, tc.wantStatus) {
				t.Errorf("event statuses = %v, want %v", got, tc.wantStatus)
			}
			g := e.get(t, arn)
			if want := tc.wantStatus[len(tc.wantStatus)-1]; string(g.Status) != want {
				t.Errorf("Get status = %s, want %s", g.Status, want)
			}
			if !strings.Contains(aws.ToString(g.Message), tc.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", aws.ToString(g.Message), tc.wantMsg)
			}
			if g.EndTime == nil || g.SubmitTime == nil || g.EndTime.Before(*g.SubmitTime) {
				t.Errorf("times: submit %v end %v", g.SubmitTime, g.EndTime)
			}
			if aws.ToInt64(g.TotalRecordCount) != tc.wantTotal || aws.ToInt64(g.SuccessRecordCount) != tc.wantOK ||
				aws.ToInt64(g.ErrorRecordCount) != tc.wantFailed || aws.ToInt64(g.ProcessedRecordCount) != tc.wantOK+tc.wantFailed {
				t.Errorf("counts total=%d processed=%d ok=%d failed=%d, want %d/%d/%d/%d",
					aws.ToInt64(g.TotalRecordCount), aws.ToInt64(g.ProcessedRecordCount), aws.ToInt64(g.SuccessRecordCount), aws.ToInt64(g.ErrorRecordCount),
					tc.wantTotal, tc.wantOK+tc.wantFailed, tc.wantOK, tc.wantFailed)
			}
			lines, manifest, ok := e.output(t, arn)
			if ok != tc.wantOutput {
				t.Fatalf("output written = %v, want %v", ok, tc.wantOutput)
			}
			if !ok {
				return
			}
			checkOutput(t, lines, manifest, tc.wantTotal, tc.wantOK, tc.wantFailed)
		})
	}
}

func checkOutput(t *testing.T, lines []outLine, manifest map[string]int64, total, ok, failed int64) {
	t.Helper()
	if int64(len(lines)) != ok+failed {
		t.Fatalf("output has %d lines, want %d", len(lines), ok+failed)
	}
	seen := map[string]bool{}
	var ids []string
	var gotOK, gotFailed, in, out int64
	codes := map[string]bool{}
	for _, l := range lines {
		if seen[l.RecordID] {
			t.Errorf("record %s twice", l.RecordID)
		}
		seen[l.RecordID] = true
		ids = append(ids, l.RecordID)
		if len(l.ModelInput) == 0 || l.ModelInput[0] != '{' {
			t.Errorf("record %s: modelInput not echoed", l.RecordID)
		}
		switch {
		case l.Error != nil:
			gotFailed++
			codes[fmt.Sprintf("%T", l.Error.ErrorCode)] = true
			if !strings.HasPrefix(l.Error.ErrorMessage, "[simulated]") {
				t.Errorf("error message %q does not say it is simulated", l.Error.ErrorMessage)
			}
		case l.ModelOutput != nil:
			gotOK++
			mo := l.ModelOutput
			if mo.Type != "message" || len(mo.Content) != 1 || !strings.HasPrefix(mo.Content[0].Text, "[simulated]") {
				t.Errorf("record %s: modelOutput %+v is not a simulated Claude message", l.RecordID, mo)
			}
			if mo.Usage.InputTokens <= 0 || mo.Usage.OutputTokens <= 0 || mo.StopReason == "" {
				t.Errorf("record %s: implausible usage %+v / stop %q", l.RecordID, mo.Usage, mo.StopReason)
			}
			in += mo.Usage.InputTokens
			out += mo.Usage.OutputTokens
		default:
			t.Errorf("record %s has neither modelOutput nor error", l.RecordID)
		}
	}
	if gotOK != ok || gotFailed != failed {
		t.Errorf("lines ok=%d failed=%d, want %d/%d", gotOK, gotFailed, ok, failed)
	}
	if failed >= 4 && len(codes) != 2 {
		t.Errorf("error codes should come as numbers and strings, got %v", codes)
	}
	if sort.StringsAreSorted(ids) {
		t.Errorf("output is in input order; Bedrock's is not")
	}
	want := map[string]int64{
		"totalRecordCount": total, "processedRecordCount": ok + failed, "successRecordCount": ok,
		"errorRecordCount": failed, "inputTokenCount": in, "outputTokenCount": out,
	}
	for k, v := range want {
		if got, present := manifest[k]; !present || got != v {
			t.Errorf("manifest %s = %d (present %v), want %d", k, got, present, v)
		}
	}
}

func TestValidationFailsJob(t *testing.T) {
	valid := string(claudeLines(120))
	tests := []struct {
		name    string
		input   string
		wantMsg string
	}{
		{"too few records", string(claudeLines(99)), "99 records"},
		{"too many records", string(claudeLines(50_001)), "more than 50000 records"},
		{"duplicate recordId", valid + `{"recordId":"r00005","modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tokens":9,"messages":[]}}` + "\n", `"r00005" is not unique`},
		{"missing recordId", valid + `{"modelInput":{}}` + "\n", "line 121: recordId is missing"},
		{"empty recordId", valid + `{"recordId":"","modelInput":{}}` + "\n", "recordId is missing"},
		{"numeric recordId", valid + `{"recordId":7,"modelInput":{}}` + "\n", "recordId is missing or not a non-empty string"},
		{"modelInput not an object", valid + `{"recordId":"z","modelInput":"hello"}` + "\n", "modelInput is missing or not a JSON object"},
		{"line not JSON", valid + `{"recordId":"z",` + "\n", "line 121: each line must be a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.put(t, inputURI, []byte(tc.input))
			arn, err := e.create(t, "mcpbatch-bad", "bad", claude)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.sim.Settle(context.Background()); err != nil {
				t.Fatal(err)
			}
			g := e.get(t, arn)
			if g.Status != types.ModelInvocationJobStatusFailed || !strings.Contains(aws.ToString(g.Message), tc.wantMsg) {
				t.Errorf("status %s message %q, want Failed with %q", g.Status, aws.ToString(g.Message), tc.wantMsg)
			}
			evs := e.rec.parsed(t)
			if last := evs[len(evs)-1]; last.Detail.Status != "Failed" || last.Detail.FailureMessage != aws.ToString(g.Message) {
				t.Errorf("last event %+v, want Failed with the job's message", last.Detail)
			}
			if _, _, ok := e.output(t, arn); ok {
				t.Errorf("a job that failed validation wrote output")
			}
		})
	}
}

func TestMissingInputFailsJob(t *testing.T) {
	e := newEnv(t, nil)
	arn, err := e.create(t, "mcpbatch-none", "none", claude)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sim.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := e.get(t, arn); g.Status != types.ModelInvocationJobStatusFailed || !strings.Contains(aws.ToString(g.Message), "does not exist") {
		t.Errorf("status %s message %q", g.Status, aws.ToString(g.Message))
	}
}

func TestMalformedClaudeRecordFailsOnlyThatRecord(t *testing.T) {
	e := newEnv(t, nil)
	input := append(claudeLines(100), []byte(`{"recordId":"nover","modelInput":{"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}}`+"\n")...)
	e.put(t, inputURI, input)
	arn, err := e.create(t, "mcpbatch-malformed", "malformed", claude)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sim.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := e.get(t, arn)
	if g.Status != types.ModelInvocationJobStatusCompleted || aws.ToInt64(g.ErrorRecordCount) != 1 {
		t.Fatalf("status %s errors %d, want Completed with 1 error", g.Status, aws.ToInt64(g.ErrorRecordCount))
	}
	lines, _, _ := e.output(t, arn)
	for _, l := range lines {
		if l.RecordID == "nover" {
			if l.Error == nil || l.Error.ErrorCode != float64(400) || !strings.Contains(l.Error.ErrorMessage, "anthropic_version") {
				t.Errorf("malformed record line %+v", l.Error)
			}
		}
	}
}

func TestInputPrefixWithSeveralFiles(t *testing.T) {
	e := newEnv(t, nil)
	all := bytes.Split(bytes.TrimSpace(claudeLines(150)), []byte("\n"))
	e.put(t, "s3://bucket/input/multi/a.jsonl", append(bytes.Join(all[:70], []byte("\n")), '\n'))
	e.put(t, "s3://bucket/input/multi/b.jsonl", append(bytes.Join(all[70:], []byte("\n")), '\n'))
	e.put(t, "s3://bucket/input/multi/notes.txt", []byte("not input"))
	out, err := e.client.CreateModelInvocationJob(context.Background(), &sdk.CreateModelInvocationJobInput{
		JobName: aws.String("mcpbatch-multi"), ClientRequestToken: aws.String("multi"), ModelId: aws.String(claude), RoleArn: aws.String(roleARN),
		InputDataConfig: &types.ModelInvocationJobInputDataConfigMemberS3InputDataConfig{
			Value: types.ModelInvocationJobS3InputDataConfig{S3Uri: aws.String("s3://bucket/input/multi/")},
		},
		OutputDataConfig: &types.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig{
			Value: types.ModelInvocationJobS3OutputDataConfig{S3Uri: aws.String(outURI)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sim.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(out.JobArn)
	if g := e.get(t, arn); g.Status != types.ModelInvocationJobStatusCompleted || aws.ToInt64(g.TotalRecordCount) != 150 {
		t.Fatalf("status %s total %d", g.Status, aws.ToInt64(g.TotalRecordCount))
	}
	objs, _ := e.blobs.List(context.Background(), outURI+"/"+jobID(arn)+"/")
	var names []string
	for _, o := range objs {
		names = append(names, o.URI[strings.LastIndexByte(o.URI, '/')+1:])
	}
	if want := []string{"a.jsonl.out", "b.jsonl.out", "manifest.json.out"}; !slices.Equal(names, want) {
		t.Errorf("output files %v, want %v", names, want)
	}
}

func TestStop(t *testing.T) {
	tests := []struct {
		name          string
		stepsBefore   int // steps from Submitted before Stop
		slow          int // SlowJob's records per step (0: not slow)
		wantProcessed int64
		wantOutput    bool
	}{
		{"while submitted", 0, 0, 0, false},
		{"while scheduled", 2, 0, 0, false},
		{"while in progress", 3, 0, 100, true},
		// A slow job bills and writes exactly the records its steps reached.
		{"slow job two steps in", 5, 30, 60, true},
		{"slow job just started", 3, 30, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(s *simbedrock.BedrockSim) {
				if tc.slow > 0 {
					s.SlowJob = func(string) int { return tc.slow }
				}
			})
			e.put(t, inputURI, claudeLines(200))
			arn, err := e.create(t, "mcpbatch-stop", "stop", claude)
			if err != nil {
				t.Fatal(err)
			}
			for range tc.stepsBefore {
				e.sim.Step(context.Background())
			}
			if g := e.get(t, arn); tc.slow > 0 && (g.Status != types.ModelInvocationJobStatusInProgress || aws.ToInt64(g.ProcessedRecordCount) != tc.wantProcessed) {
				t.Fatalf("slow job before the stop: %s, %d processed; want InProgress, %d", g.Status, aws.ToInt64(g.ProcessedRecordCount), tc.wantProcessed)
			}
			ctx := context.Background()
			if _, err := e.client.StopModelInvocationJob(ctx, &sdk.StopModelInvocationJobInput{JobIdentifier: aws.String(arn)}); err != nil {
				t.Fatal(err)
			}
			if g := e.get(t, arn); g.Status != types.ModelInvocationJobStatusStopping {
				t.Fatalf("status after stop = %s", g.Status)
			}
			// A second stop while Stopping is accepted.
			if _, err := e.client.StopModelInvocationJob(ctx, &sdk.StopModelInvocationJobInput{JobIdentifier: aws.String(jobID(arn))}); err != nil {
				t.Fatalf("stop while stopping: %v", err)
			}
			if err := e.sim.Settle(ctx); err != nil {
				t.Fatal(err)
			}
			g := e.get(t, arn)
			if g.Status != types.ModelInvocationJobStatusStopped || aws.ToInt64(g.ProcessedRecordCount) != tc.wantProcessed {
				t.Errorf("status %s processed %d, want Stopped %d", g.Status, aws.ToInt64(g.ProcessedRecordCount), tc.wantProcessed)
			}
			lines, m, ok := e.output(t, arn)
			if ok != tc.wantOutput {
				t.Fatalf("output %v, want %v", ok, tc.wantOutput)
			}
			if ok {
				checkOutput(t, lines, m, 200, tc.wantProcessed, 0)
			}
			statuses := e.rec.statuses(t, "mcpbatch-stop")
			if got := statuses[len(statuses)-2:]; !slices.Equal(got, []string{"Stopping", "Stopped"}) {
				t.Errorf("last events %v", statuses)
			}
			// Stopping an ended job is a ValidationException naming its state.
			_, err = e.client.StopModelInvocationJob(ctx, &sdk.StopModelInvocationJobInput{JobIdentifier: aws.String(arn)})
			var ve *types.ValidationException
			if !errors.As(err, &ve) || !strings.Contains(ve.ErrorMessage(), "Stopped state") {
				t.Errorf("stop of a stopped job: %v, want ValidationException about its state", err)
			}
		})
	}
}

func TestIdempotentClientRequestToken(t *testing.T) {
	e := newEnv(t, nil)
	e.put(t, inputURI, claudeLines(100))
	first, err := e.create(t, "mcpbatch-idem", "idem", claude)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.create(t, "mcpbatch-idem", "idem", claude)
	if err != nil || again != first {
		t.Fatalf("retry with the same token: %s, %v; want %s", again, err, first)
	}
	out, err := e.client.ListModelInvocationJobs(context.Background(), &sdk.ListModelInvocationJobsInput{})
	if err != nil || len(out.InvocationJobSummaries) != 1 {
		t.Fatalf("list after retry: %d jobs, %v", len(out.InvocationJobSummaries), err)
	}
	if got := e.rec.statuses(t, "mcpbatch-idem"); len(got) != 0 {
		t.Errorf("events before any step: %v", got) // queued, sent on the next step
	}
	e.sim.Step(context.Background())
	if got := e.rec.statuses(t, "mcpbatch-idem"); !slices.Equal(got, []string{"Submitted", "Validating"}) {
		t.Errorf("events = %v, want one Submitted then Validating", got)
	}

	tests := []struct {
		name, jobName, token string
	}{
		{"same token, other name", "mcpbatch-other", "idem"},
		{"same name, other token", "mcpbatch-idem", "other"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.create(t, tc.jobName, tc.token, claude)
			var ce *types.ConflictException
			if !errors.As(err, &ce) {
				t.Errorf("err = %v, want ConflictException", err)
			}
		})
	}
}

func TestAPIErrors(t *testing.T) {
	e := newEnv(t, func(s *simbedrock.BedrockSim) { s.MaxJobsPerModel = 2 })
	e.put(t, inputURI, claudeLines(100))
	for i := range 2 {
		if _, err := e.create(t, fmt.Sprintf("mcpbatch-q%d", i), fmt.Sprintf("q%d", i), claude); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
		want any
	}{
		{"quota per base model", func() error { _, err := e.create(t, "mcpbatch-q2", "q2", claude); return err }, &types.ServiceQuotaExceededException{}},
		{"inference profile counts against its base model", func() error {
			_, err := e.create(t, "mcpbatch-q3", "q3", "us."+claude)
			return err
		}, &types.ServiceQuotaExceededException{}},
		{"unknown job", func() error {
			_, err := e.client.GetModelInvocationJob(ctx, &sdk.GetModelInvocationJobInput{JobIdentifier: aws.String("zzzzzzzzzzzz")})
			return err
		}, &types.ResourceNotFoundException{}},
		{"unknown job ARN on stop", func() error {
			_, err := e.client.StopModelInvocationJob(ctx, &sdk.StopModelInvocationJobInput{
				JobIdentifier: aws.String("arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/zzzzzzzzzzzz")})
			return err
		}, &types.ResourceNotFoundException{}},
		{"job name is not an identifier", func() error {
			_, err := e.client.GetModelInvocationJob(ctx, &sdk.GetModelInvocationJobInput{JobIdentifier: aws.String("mcpbatch-q0")})
			return err
		}, &types.ValidationException{}},
		{"timeout out of range", func() error {
			_, err := e.client.CreateModelInvocationJob(ctx, &sdk.CreateModelInvocationJobInput{
				JobName: aws.String("mcpbatch-t"), ClientRequestToken: aws.String("t"), ModelId: aws.String("amazon.nova-lite-v1:0"), RoleArn: aws.String(roleARN),
				InputDataConfig: &types.ModelInvocationJobInputDataConfigMemberS3InputDataConfig{
					Value: types.ModelInvocationJobS3InputDataConfig{S3Uri: aws.String(inputURI)}},
				OutputDataConfig: &types.ModelInvocationJobOutputDataConfigMemberS3OutputDataConfig{
					Value: types.ModelInvocationJobS3OutputDataConfig{S3Uri: aws.String(outURI)}},
				TimeoutDurationInHours: aws.Int32(12),
			})
			return err
		}, &types.ValidationException{}},
		{"bad job name", func() error { _, err := e.create(t, "-bad name", "bn", "amazon.nova-lite-v1:0"); return err }, &types.ValidationException{}},
		{"bad list token", func() error {
			_, err := e.client.ListModelInvocationJobs(ctx, &sdk.ListModelInvocationJobsInput{NextToken: aws.String("!!")})
			return err
		}, &types.ValidationException{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil {
				t.Fatalf("no error, want %T", tc.want)
			}
			switch tc.want.(type) {
			case *types.ServiceQuotaExceededException:
				var target *types.ServiceQuotaExceededException
				if !errors.As(err, &target) {
					t.Errorf("err = %v, want %T", err, tc.want)
				}
			case *types.ResourceNotFoundException:
				var target *types.ResourceNotFoundException
				if !errors.As(err, &target) {
					t.Errorf("err = %v, want %T", err, tc.want)
				}
			case *types.ValidationException:
				var target *types.ValidationException
				if !errors.As(err, &target) {
					t.Errorf("err = %v, want %T", err, tc.want)
				}
			}
		})
	}

	t.Run("quota frees up when a job ends", func(t *testing.T) {
		if err := e.sim.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.create(t, "mcpbatch-q2", "q2", claude); err != nil {
			t.Errorf("create after jobs ended: %v", err)
		}
	})
}

func TestThrottling(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	throttleFirst := func(op string) bool {
		mu.Lock()
		defer mu.Unlock()
		calls[op]++
		return op == "GetModelInvocationJob" || calls[op] == 1
	}
	e := newEnv(t, func(s *simbedrock.BedrockSim) { s.ThrottleAPI = throttleFirst }, func(o *sdk.Options) { o.RetryMaxAttempts = 3 })
	e.put(t, inputURI, claudeLines(100))
	arn, err := e.create(t, "mcpbatch-throttle", "throttle", claude)
	if err != nil {
		t.Fatalf("create should succeed on the SDK's retry: %v", err)
	}
	_, err = e.client.GetModelInvocationJob(context.Background(), &sdk.GetModelInvocationJobInput{JobIdentifier: aws.String(arn)})
	var te *types.ThrottlingException
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want ThrottlingException", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["CreateModelInvocationJob"] != 2 || calls["GetModelInvocationJob"] != 3 {
		t.Errorf("calls = %v, want 2 creates (1 retry) and 3 gets (all retries)", calls)
	}
}

func TestListPagesAndFilters(t *testing.T) {
	e := newEnv(t, nil)
	e.put(t, inputURI, claudeLines(100))
	var arns []string
	for i := range 5 {
		arn, err := e.create(t, fmt.Sprintf("mcpbatch-list%d", i), fmt.Sprintf("list%d", i), claude)
		if err != nil {
			t.Fatal(err)
		}
		arns = append(arns, arn)
	}
	if _, err := e.create(t, "other-job", "otherjob", "amazon.nova-lite-v1:0"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		in    sdk.ListModelInvocationJobsInput
		want  int
		first string
	}{
		{"all, newest first, pages of 2", sdk.ListModelInvocationJobsInput{MaxResults: aws.Int32(2)}, 6, "other-job"},
		{"name contains", sdk.ListModelInvocationJobsInput{MaxResults: aws.Int32(2), NameContains: aws.String("mcpbatch-")}, 5, "mcpbatch-list4"},
		{"ascending", sdk.ListModelInvocationJobsInput{NameContains: aws.String("list"), SortOrder: types.SortOrderAscending}, 5, "mcpbatch-list0"},
		{"status", sdk.ListModelInvocationJobsInput{StatusEquals: types.ModelInvocationJobStatusCompleted}, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := sdk.NewListModelInvocationJobsPaginator(e.client, &tc.in)
			var names []string
			for p.HasMorePages() {
				page, err := p.NextPage(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range page.InvocationJobSummaries {
					names = append(names, aws.ToString(s.JobName))
					if s.SubmitTime == nil || s.Status == "" || s.JobArn == nil {
						t.Errorf("summary lacks fields: %+v", s)
					}
				}
			}
			if len(names) != tc.want || (tc.want > 0 && names[0] != tc.first) {
				t.Errorf("names = %v, want %d starting with %s", names, tc.want, tc.first)
			}
		})
	}
}

func TestEventsAndKnobs(t *testing.T) {
	e := newEnv(t, func(s *simbedrock.BedrockSim) {
		s.DropEvent = func(st string) bool { return st == "Validating" }
		s.DuplicateEvent = func(st string) bool { return st == "Completed" }
	})
	e.put(t, inputURI, claudeLines(100))
	if _, err := e.create(t, "mcpbatch-ev", "ev", claude); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := e.rec.parsed(t)
	var statuses []string
	for _, ev := range evs {
		statuses = append(statuses, ev.Detail.Status)
	}
	if want := []string{"Submitted", "Scheduled", "InProgress", "Completed", "Completed"}; !slices.Equal(statuses, want) {
		t.Fatalf("statuses = %v, want %v", statuses, want)
	}
	if evs[3].ID != evs[4].ID {
		t.Errorf("a duplicated delivery keeps the event id: %s vs %s", evs[3].ID, evs[4].ID)
	}
	if evs[0].ID == evs[1].ID {
		t.Errorf("distinct events share an id")
	}
}

// TestEventsMatchSamples checks the simulator emits events with exactly the keys of
// the samples in events/bedrock, for every one of Bedrock's ten statuses.
func TestEventsMatchSamples(t *testing.T) {
	e := newEnv(t, func(s *simbedrock.BedrockSim) {
		s.FailJob = func(name string) string {
			if name == "mcpbatch-f" {
				return "simulated failure"
			}
			return ""
		}
		s.ExpireJob = func(name string) bool { return name == "mcpbatch-x" }
	})
	e.put(t, inputURI, claudeLines(100))
	ctx := context.Background()
	for _, n := range []string{"mcpbatch-c", "mcpbatch-f", "mcpbatch-x", "mcpbatch-s"} {
		if _, err := e.create(t, n, strings.TrimPrefix(n, "mcpbatch-"), claude); err != nil {
			t.Fatal(err)
		}
	}
	e.sim.Step(ctx)
	e.sim.Step(ctx)
	e.sim.Step(ctx) // all InProgress but the expired one
	out, err := e.client.ListModelInvocationJobs(ctx, &sdk.ListModelInvocationJobsInput{NameContains: aws.String("mcpbatch-s")})
	if err != nil || len(out.InvocationJobSummaries) != 1 {
		t.Fatal(err)
	}
	stopArn := aws.ToString(out.InvocationJobSummaries[0].JobArn)
	if _, err := e.client.StopModelInvocationJob(ctx, &sdk.StopModelInvocationJobInput{JobIdentifier: aws.String(stopArn)}); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	// PartiallyCompleted needs its own simulator knob.
	p := newEnv(t, func(s *simbedrock.BedrockSim) { s.PartialAfter = 50 })
	p.put(t, inputURI, claudeLines(100))
	if _, err := p.create(t, "mcpbatch-p", "p", claude); err != nil {
		t.Fatal(err)
	}
	if err := p.sim.Settle(ctx); err != nil {
		t.Fatal(err)
	}

	emitted := map[string][]byte{}
	for _, r := range []*recorder{e.rec, p.rec} {
		for _, ev := range r.events {
			var probe event
			_ = json.Unmarshal(ev, &probe)
			emitted[probe.Detail.Status] = ev
		}
	}
	samples, err := filepath.Glob("../../../events/bedrock/*.json")
	if err != nil || len(samples) != 10 {
		t.Fatalf("want 10 samples in events/bedrock, got %d (%v)", len(samples), err)
	}
	for _, path := range samples {
		status := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(status, func(t *testing.T) {
			sample, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := emitted[status]
			if !ok {
				t.Fatalf("the simulator emitted no %s event", status)
			}
			sk, sd := keys(t, sample)
			gk, gd := keys(t, got)
			if !slices.Equal(sk, gk) || !slices.Equal(sd, gd) {
				t.Errorf("keys differ:\nsample   %v %v\nemitted  %v %v", sk, sd, gk, gd)
			}
			var s, g map[string]any
			_ = json.Unmarshal(sample, &s)
			_ = json.Unmarshal(got, &g)
			for _, k := range []string{"version", "detail-type", "source"} {
				if s[k] != g[k] {
					t.Errorf("%s: sample %v, emitted %v", k, s[k], g[k])
				}
			}
			if sd, gd := s["detail"].(map[string]any), g["detail"].(map[string]any); sd["status"] != status || gd["status"] != status || sd["version"] != gd["version"] {
				t.Errorf("detail status/version: sample %v/%v emitted %v/%v", sd["status"], sd["version"], gd["status"], gd["version"])
			}
			if _, err := time.Parse(time.RFC3339, g["time"].(string)); err != nil {
				t.Errorf("envelope time: %v", err)
			}
		})
	}
}

func keys(t *testing.T, b []byte) (envelope, detail []string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v", err)
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(m["detail"], &d); err != nil {
		t.Fatalf("detail: %v", err)
	}
	for k := range m {
		envelope = append(envelope, k)
	}
	for k := range d {
		detail = append(detail, k)
	}
	sort.Strings(envelope)
	sort.Strings(detail)
	return envelope, detail
}

func TestSeedMakesRunsReproducible(t *testing.T) {
	run := func() (string, []byte) {
		e := newEnv(t, nil)
		e.put(t, inputURI, claudeLines(300))
		arn, err := e.create(t, "mcpbatch-seed", "seed", claude)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.sim.Settle(context.Background()); err != nil {
			t.Fatal(err)
		}
		out, _ := e.blobs.Bytes(outURI + "/" + jobID(arn) + "/records.jsonl.out")
		return arn, out
	}
	a1, o1 := run()
	a2, o2 := run()
	if a1 != a2 || !bytes.Equal(o1, o2) {
		t.Errorf("same seed, different runs: %s vs %s, outputs equal %v", a1, a2, bytes.Equal(o1, o2))
	}
	if !strings.HasPrefix(a1, "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/") || len(jobID(a1)) != 12 {
		t.Errorf("arn %s", a1)
	}
}

func TestStepDelayRunsOnItsOwn(t *testing.T) {
	e := newEnv(t, func(s *simbedrock.BedrockSim) { s.StepDelay = 2 * time.Millisecond })
	e.put(t, inputURI, claudeLines(100))
	arn, err := e.create(t, "mcpbatch-auto", "auto", claude)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := e.get(t, arn)
		if g.Status == types.ModelInvocationJobStatusCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s after 10s", g.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := e.rec.statuses(t, "mcpbatch-auto"); len(got) != 5 {
		t.Errorf("events %v", got)
	}
}

func TestListen(t *testing.T) {
	s := simbedrock.NewBedrockSim(simtest.NewMemBlobs(), nil)
	s.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := simtest.NewBedrockClient(url)
	if _, err := c.ListModelInvocationJobs(context.Background(), &sdk.ListModelInvocationJobsInput{}); err != nil {
		t.Errorf("list through Listen: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := c.ListModelInvocationJobs(context.Background(), &sdk.ListModelInvocationJobsInput{}); err == nil {
		t.Errorf("the listener still answers after Close")
	}
}

func TestConcurrentUse(t *testing.T) {
	e := newEnv(t, nil)
	e.put(t, inputURI, claudeLines(100))
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arn, err := e.create(t, fmt.Sprintf("mcpbatch-c%d", i), fmt.Sprintf("c%d", i), claude)
			if err != nil {
				t.Error(err)
				return
			}
			for range 5 {
				e.sim.Step(ctx)
				if _, err := e.client.GetModelInvocationJob(ctx, &sdk.GetModelInvocationJobInput{JobIdentifier: aws.String(arn)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := e.sim.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	for name, st := range e.sim.Statuses() {
		if st != "Completed" {
			t.Errorf("%s ended %s", name, st)
		}
	}
}
