//go:build linux

// Package functions_test is the outermost test layer: every Lambda bootstrap,
// built exactly as `make build` builds it (for the host architecture), runs
// under the AWS Lambda Runtime Interface Emulator against moto_server and is
// invoked with the sample events in events/.
package functions_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

// functions are the Lambdas under functions/, as the Makefile's FUNCTIONS lists them.
var functions = []string{"mcp", "bedrock-events", "ingest", "sagemaker-events", "nightly-report", "ondemand", "reconciler", "validate", "providers"}

// maxBootstrapBytes bounds every stripped bootstrap, linux/arm64 (what
// ships) and linux/amd64 alike: a jump in size usually means a heavy
// dependency slipped into a Lambda, and costs cold-start time. What keeps a
// bootstrap small: prompts run without text/template's executor
// (shared/pipeline/prompt), the AWS config is read without
// config.LoadDefaultConfig's SSO/STS chain (shared/app/lambdaenv), provider
// wiring lives in packages of its own (anthropicsdk,
// sagemakerapp, vectorsapp) so only the functions that call an API link its
// SDK, and mcp reaches the two heaviest (the Anthropic SDK, the SageMaker
// control plane) through the providers function (shared/remote), and the
// Parquet writer (shared/parquetout) is linked by mcp alone, which exports.
// 22 MB since the reconciler reads the AWS Price List and every function
// validates structured outputs (JSON Schema): linux/amd64 reconciler 19.9 →
// 21.0 MB, 2026-12-03; mcp's own bound adds Parquet's 3.4 MB.
const maxBootstrapBytes = 22_000_000

// maxBootstrapBytesFor is fn's bound: maxBootstrapBytes, or mcp's with the
// Parquet writer for export_results format=parquet (24.6 MB on linux/amd64).
func maxBootstrapBytesFor(fn string) int64 {
	if fn == "mcp" {
		return 25_500_000
	}
	return maxBootstrapBytes
}

// timeouts are the function timeouts infra/functions.go gives each Lambda, in
// seconds: the handlers plan with the deadline (ingest keeps 30 s back).
var timeouts = map[string]string{"mcp": "60", "bedrock-events": "30", "ingest": "900", "sagemaker-events": "60", "nightly-report": "900", "ondemand": "900", "reconciler": "300", "validate": "900", "providers": "60"}

// wantTools are the five tools shared/mcpserver registers.
var wantTools = []string{"submit_batch", "get_job", "get_job_results", "cancel_job", "list_jobs"}

const (
	region        = "us-east-1"
	jobPrefix     = "mcpbatch"
	bedrockRole   = "arn:aws:iam::123456789012:role/mcpbatch-bedrock"
	rieInstallMsg = "install it with `make tools` (bash .ci/tools.sh puts it in .tools/bin) and set MCPBATCH_TOOLS, or put aws-lambda-rie on PATH"
)

var (
	// buildDir holds the bootstraps the tests build themselves; TestMain
	// creates and removes it.
	buildDir string

	// builds are the bootstraps per GOARCH, each set built (or found) once.
	buildsMu sync.Mutex
	builds   = map[string]*archBuild{}

	moto struct {
		once sync.Once
		srv  *motoserver.Server
		err  error
	}

	seq atomic.Int64
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpbatch-rie-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	// moto_server starts on first use (a size-only run needs none) but once for
	// the whole package; it stops here, after every test and benchmark.
	moto.srv.Stop()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// missing skips when an external tool is absent, unless MCPBATCH_E2E=1 (make
// test) demands the whole layer run.
func missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("MCPBATCH_E2E") == "1" {
		tb.Fatalf("MCPBATCH_E2E=1 but %s", msg)
	}
	tb.Skip(msg)
}

// rieBinary finds aws-lambda-rie in $MCPBATCH_TOOLS/bin, then on PATH.
func rieBinary(tb testing.TB) string {
	tb.Helper()
	if tools := os.Getenv("MCPBATCH_TOOLS"); tools != "" {
		p := filepath.Join(tools, "bin", "aws-lambda-rie")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	p, err := exec.LookPath("aws-lambda-rie")
	if err != nil {
		missing(tb, "aws-lambda-rie is not in $MCPBATCH_TOOLS/bin (MCPBATCH_TOOLS=%q) nor on PATH: %s",
			os.Getenv("MCPBATCH_TOOLS"), rieInstallMsg)
	}
	return p
}

// archBuild is every function's bootstrap for one GOARCH.
type archBuild struct {
	once  sync.Once
	paths map[string]string
	err   error
}

// bootstrap returns the path of fn's bootstrap for the host architecture (so
// RIE can run it), building all of them on first use.
func bootstrap(tb testing.TB, fn string) string {
	tb.Helper()
	return bootstrapFor(tb, runtime.GOARCH, fn)
}

// bootstrapFor returns the path of fn's linux/arch bootstrap. make test builds
// every one once per run before go test (make test-binaries) and names the
// folder in MCPBATCH_BOOTSTRAPS: <dir>/linux_<arch>/<fn>/bootstrap. Without
// it the package builds its own, once per arch.
func bootstrapFor(tb testing.TB, arch, fn string) string {
	tb.Helper()
	buildsMu.Lock()
	b, ok := builds[arch]
	if !ok {
		b = &archBuild{}
		builds[arch] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() {
		if dir := os.Getenv("MCPBATCH_BOOTSTRAPS"); dir != "" {
			b.paths, b.err = prebuilt(filepath.Join(dir, "linux_"+arch))
			return
		}
		b.paths, b.err = buildAll(arch, filepath.Join(buildDir, "linux_"+arch))
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.paths[fn]
}

// prebuilt finds every function's bootstrap under dir.
func prebuilt(dir string) (map[string]string, error) {
	paths := map[string]string{}
	for _, fn := range functions {
		p := filepath.Join(dir, fn, "bootstrap")
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("MCPBATCH_BOOTSTRAPS: %v (make test-binaries builds them)", err)
		}
		paths[fn] = p
	}
	return paths, nil
}

// buildAll builds every function for linux/arch with the Makefile's flags, in
// one go build (as make build does): the packages the functions share, the
// AWS and Anthropic SDKs among them, compile once, not once per function.
func buildAll(arch, dir string) (map[string]string, error) {
	tmp := filepath.Join(dir, ".build")
	args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", tmp + "/"}
	for _, fn := range functions {
		args = append(args, "./functions/"+fn)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".." // the module root: go test runs in functions/
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./functions/... for linux/%s: %v\n%s", arch, err, b)
	}
	// go build -o dir/ names each binary after its folder; Lambda runs "bootstrap".
	paths := map[string]string{}
	for _, fn := range functions {
		p := filepath.Join(dir, fn, "bootstrap")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.Rename(filepath.Join(tmp, fn), p); err != nil {
			return nil, err
		}
		paths[fn] = p
	}
	return paths, os.Remove(tmp)
}

// TestBootstrapSize holds every function's bootstrap, built for linux/arm64
// and linux/amd64 as make build does, to its limit.
func TestBootstrapSize(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		for _, fn := range functions {
			t.Run(arch+"/"+fn, func(t *testing.T) {
				path := bootstrapFor(t, arch, fn)
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s bootstrap (linux/%s, stripped): %d bytes (%.2f MB)", fn, arch, fi.Size(), float64(fi.Size())/1e6)
				if limit := maxBootstrapBytesFor(fn); fi.Size() > limit {
					t.Errorf("%s bootstrap (linux/%s) is %d bytes, want at most %d", fn, arch, fi.Size(), limit)
				}
			})
		}
	}
}

// motoEndpoint starts moto_server once for the package and returns its URL.
func motoEndpoint(tb testing.TB) string {
	tb.Helper()
	moto.once.Do(func() { moto.srv, moto.err = motoserver.Start() })
	if moto.err != nil {
		if _, err := exec.LookPath("moto_server"); err != nil {
			missing(tb, "moto_server is not on PATH (pip install 'moto[server]'; make tools installs it)")
		}
		tb.Fatal(moto.err)
	}
	return moto.srv.Endpoint
}

// stack is one copy of the stack's stateful resources in moto, named apart so
// tests do not see each other's jobs.
type stack struct {
	endpoint, table, bucket, bus string
	s3                           *s3.Client
	store                        *dynamostore.Store
	// extraEnv is added to every function's environment (e.g. the auth mode).
	extraEnv []string
	// providers is the Lambda endpoint mcp invokes the providers function at
	// (a providers RIE); unset, a closed port: calls that need it fail.
	providers string
}

func newStack(tb testing.TB) *stack {
	tb.Helper()
	rieBinary(tb) // skip before starting moto when RIE is missing
	endpoint := motoEndpoint(tb)
	n := seq.Add(1)
	st := &stack{
		endpoint: endpoint,
		table:    fmt.Sprintf("mcpbatch-rie-%d-%d", os.Getpid(), n),
		bucket:   fmt.Sprintf("mcpbatch-rie-%d-%d", os.Getpid(), n),
		bus:      fmt.Sprintf("mcpbatch-rie-%d-%d", os.Getpid(), n),
	}
	cfg := aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider("testing", "testing", ""),
		BaseEndpoint: aws.String(endpoint),
	}
	ctx := context.Background()
	ddb := dynamodb.NewFromConfig(cfg)
	if err := dynamostore.CreateTable(ctx, ddb, st.table); err != nil {
		tb.Fatal(err)
	}
	st.store = dynamostore.New(ddb, st.table)
	st.s3 = s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := st.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(st.bucket)}); err != nil {
		tb.Fatalf("create bucket: %v", err)
	}
	eb := eventbridge.NewFromConfig(cfg)
	if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(st.bus)}); err != nil {
		tb.Fatalf("create event bus: %v", err)
	}
	return st
}

// env is the whole environment of RIE and so of the bootstrap (RIE passes its
// own on): nothing from the host, so no stray AWS_PROFILE reaches real AWS.
func (st *stack) env(fn, home string) []string {
	return append(append([]string{
		"PATH=/usr/bin:/bin",
		"HOME=" + home,
		"AWS_ENDPOINT_URL=" + st.endpoint, // the SDK v2 sends every client there
		"AWS_REGION=" + region,
		"AWS_ACCESS_KEY_ID=testing",
		"AWS_SECRET_ACCESS_KEY=testing",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_LAMBDA_FUNCTION_NAME=mcpbatch-" + fn,
		"AWS_LAMBDA_FUNCTION_TIMEOUT=" + timeouts[fn],
		"MCPBATCH_TABLE=" + st.table,
		"MCPBATCH_BUCKET=" + st.bucket,
		"MCPBATCH_BUS=" + st.bus,
		"MCPBATCH_BEDROCK_ROLE_ARN=" + bedrockRole,
		"MCPBATCH_JOB_PREFIX=" + jobPrefix,
		"MCPBATCH_LOG_LEVEL=DEBUG",
	}, st.providersEnv(fn)...), st.extraEnv...)
}

// providersEnv points mcp at the providers function: RIE serves any one
// function as "function".
func (st *stack) providersEnv(fn string) []string {
	if fn != "mcp" {
		return nil
	}
	ep := st.providers
	if ep == "" {
		ep = "http://127.0.0.1:9"
	}
	return []string{"MCPBATCH_PROVIDERS_FUNCTION=function", "AWS_ENDPOINT_URL_LAMBDA=" + ep}
}

// lambdaProc is one RIE process serving one bootstrap.
type lambdaProc struct {
	fn      string
	url     string
	cmd     *exec.Cmd
	out     *syncBuffer
	started time.Time
	stopped sync.Once
}

// startLambda runs fn's bootstrap under RIE on free loopback ports, with
// extra added to its environment, and waits until RIE accepts connections.
// RIE starts the bootstrap on the first invoke.
func startLambda(tb testing.TB, fn string, st *stack, extra ...string) *lambdaProc {
	tb.Helper()
	rie := rieBinary(tb)
	bin := bootstrap(tb, fn)
	invokeAddr, err := freeAddr()
	if err != nil {
		tb.Fatal(err)
	}
	apiAddr, err := freeAddr()
	if err != nil {
		tb.Fatal(err)
	}
	p := &lambdaProc{fn: fn, url: "http://" + invokeAddr + "/2015-03-31/functions/function/invocations", out: &syncBuffer{}}
	p.cmd = exec.Command(rie, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", apiAddr, bin)
	p.cmd.Dir = filepath.Dir(bin)
	p.cmd.Env = append(st.env(fn, tb.TempDir()), extra...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	// Own process group so cleanup can kill it whole; die with the test binary.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("start RIE for %s: %v", fn, err)
	}
	tb.Cleanup(func() {
		p.stop()
		if tb.Failed() {
			tb.Logf("RIE and %s output:\n%s", fn, p.out.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", invokeAddr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			tb.Fatalf("RIE for %s did not accept on %s within 10s:\n%s", fn, invokeAddr, p.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stop kills RIE and the bootstrap. RIE starts the bootstrap in a process group
// of its own, so RIE's group alone would not include it: both groups are killed.
func (p *lambdaProc) stop() {
	p.stopped.Do(func() {
		pid := p.cmd.Process.Pid
		for _, child := range descendants(pid) {
			killGroup(child)
		}
		killGroup(pid)
		_ = p.cmd.Wait()
	})
}

// invokeClient talks to RIE; no keep-alive, so nothing lingers once RIE is killed.
var invokeClient = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// invoke sends payload as the function's event and returns the raw response.
// A function error (RIE answers {"errorType","errorMessage"}) fails the test.
func (p *lambdaProc) invoke(tb testing.TB, payload []byte) []byte {
	tb.Helper()
	resp, err := invokeClient.Post(p.url, "application/json", bytes.NewReader(payload))
	if err != nil {
		tb.Fatalf("invoke %s: %v", p.fn, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("invoke %s: read response: %v", p.fn, err)
	}
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("invoke %s: RIE answered %s: %s", p.fn, resp.Status, body)
	}
	var fnErr struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	if json.Unmarshal(body, &fnErr) == nil && (fnErr.Type != "" || fnErr.Message != "") {
		tb.Fatalf("invoke %s: function error %s: %s", p.fn, fnErr.Type, fnErr.Message)
	}
	return body
}

var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// initMS is the runtime init time RIE measured (bootstrap start to its first
// /next). The REPORT line's "Init Duration" is useless under RIE: it times only
// the asynchronous start request.
func (p *lambdaProc) initMS(tb testing.TB) float64 {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		if m := initReport.FindStringSubmatch(p.out.String()); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			return v
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no INIT REPORT in RIE output of %s:\n%s", p.fn, p.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// acknowledged fails unless the handler returned no error and no value: the
// event was taken, so EventBridge will not retry it.
func acknowledged(t *testing.T, body []byte) {
	t.Helper()
	if got := string(bytes.TrimSpace(body)); got != "null" {
		t.Errorf("response %q, want null (acknowledged)", got)
	}
}

// bedrockSample is the part of a "Batch Inference Job State Change" sample the tests use.
type bedrockSample struct {
	raw    []byte
	name   string // batchJobName
	arn    string // batchJobArn
	status string
}

func readBedrockSample(t testing.TB, path string) bedrockSample {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Detail struct {
			Name   string `json:"batchJobName"`
			ARN    string `json:"batchJobArn"`
			Status string `json:"status"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return bedrockSample{raw: raw, name: ev.Detail.Name, arn: ev.Detail.ARN, status: ev.Detail.Status}
}

// jobID is the job a sample names: its batchJobName without the stack prefix.
func (s bedrockSample) jobID(t testing.TB) string {
	t.Helper()
	id, ok := strings.CutPrefix(s.name, jobPrefix+"-")
	if !ok || !job.ValidID(id) {
		t.Fatalf("sample batchJobName %q is not %s-<job id>", s.name, jobPrefix)
	}
	return id
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every Bedrock sample names a job this stack's table does not hold: the
// function must acknowledge it (no error, so no retry storm) and store nothing.
func TestBedrockEventsUnknownJob(t *testing.T) {
	samples, _ := filepath.Glob("../events/bedrock/*.json")
	if len(samples) == 0 {
		t.Fatal("no samples in events/bedrock")
	}
	st := newStack(t)
	fn := startLambda(t, "bedrock-events", st)
	for _, path := range samples {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			s := readBedrockSample(t, path)
			acknowledged(t, fn.invoke(t, s.raw))
			if _, err := st.store.GetJob(t.Context(), s.jobID(t)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("GetJob after an event for an unknown job: %v, want ErrNotFound", err)
			}
		})
	}
}

func TestIngestUnknownJob(t *testing.T) {
	ready := readFile(t, "../events/project/job-output-ready.json")
	var noJobID map[string]any
	if err := json.Unmarshal(ready, &noJobID); err != nil {
		t.Fatal(err)
	}
	noJobID["detail"] = map[string]any{"provider": "bedrock"}
	malformed, _ := json.Marshal(noJobID)

	st := newStack(t)
	fn := startLambda(t, "ingest", st)
	for _, c := range []struct {
		name    string
		payload []byte
	}{
		{"job-output-ready", ready},
		// A detail without jobId can never succeed: retrying it would only loop.
		{"detail without jobId", malformed},
	} {
		t.Run(c.name, func(t *testing.T) { acknowledged(t, fn.invoke(t, c.payload)) })
	}
}

// TestJobLifecycle drives one known job through both event functions, in order,
// as EventBridge would: each step is one invocation and the job read back from
// DynamoDB. Later steps build on earlier ones.
func TestJobLifecycle(t *testing.T) {
	sample := func(name string) bedrockSample { return readBedrockSample(t, "../events/bedrock/"+name+".json") }
	inProgress := sample("InProgress")
	id := inProgress.jobID(t)
	ready := readFile(t, "../events/project/job-output-ready.json")
	var readyEv struct {
		Detail struct {
			JobID string `json:"jobId"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(ready, &readyEv); err != nil || readyEv.Detail.JobID != id {
		t.Fatalf("events/project/job-output-ready.json names job %q (%v), want the Bedrock samples' %q", readyEv.Detail.JobID, err, id)
	}

	st := newStack(t)
	events := startLambda(t, "bedrock-events", st)
	ingest := startLambda(t, "ingest", st)

	// The job as Submit leaves it: one part, submitted, named like the samples.
	bucket := "s3://" + st.bucket
	inputURI := bucket + "/input/" + id
	outputURI := bucket + "/output/" + id
	now := time.Now()
	err := st.store.CreateJob(t.Context(), &job.Job{
		ID: id, Owner: "arn:aws:iam::123456789012:user/alice", Provider: job.ProviderBedrock,
		Model: "anthropic.claude-haiku-4-5-20251001-v1:0", Status: job.StatusSubmitted,
		InputURI: inputURI, OutputURI: outputURI, RecordCount: 2, Shards: 1, TTLDays: 7,
		ExpiresAt: job.ExpiresAt(now, 7), SubmittedAt: now,
		Parts: []job.Part{{
			Index: 0, Name: inProgress.name, Status: job.StatusSubmitted, RecordCount: 2,
			InputURI: inputURI + "/part-1/records.jsonl", OutputURI: outputURI + "/part-1/",
		}},
	})
	if err != nil {
		t.Fatal(err)
	}

	// What Bedrock writes for this part: <output>/<ARN's job id>/<input name>.out,
	// one success and one failure.
	putOutput := func(t *testing.T) {
		jobDir := inProgress.arn[strings.LastIndexByte(inProgress.arn, '/')+1:]
		for key, body := range map[string]string{
			"input/" + id + "/ids.txt": "r1\nr2\n",
			"output/" + id + "/part-1/" + jobDir + "/records.jsonl.out": `{"recordId":"r1","modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"Say hi"}]},"modelOutput":{"id":"msg_bdrk_1","type":"message","role":"assistant","model":"claude-3-5-haiku-20241022","content":[{"type":"text","text":"Hi!"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":3}}}` + "\n" +
				`{"recordId":"r2","modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"Say bye"}]},"error":{"errorCode":400,"errorMessage":"Malformed input request"}}` + "\n",
		} {
			_, err := st.s3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key), Body: strings.NewReader(body)})
			if err != nil {
				t.Fatalf("put s3://%s/%s: %v", st.bucket, key, err)
			}
		}
	}

	steps := []struct {
		name         string
		fn           *lambdaProc
		event        []byte
		before       func(*testing.T)
		wantStatus   job.Status
		wantProvider string
		check        func(*testing.T, *job.Job)
	}{
		{name: "Submitted records the job ARN", fn: events, event: sample("Submitted").raw,
			wantStatus: job.StatusSubmitted, wantProvider: bedrock.StatusSubmitted,
			check: func(t *testing.T, j *job.Job) {
				if j.Parts[0].Ref != inProgress.arn {
					t.Errorf("part ref %q, want %q", j.Parts[0].Ref, inProgress.arn)
				}
			}},
		{name: "Validating", fn: events, event: sample("Validating").raw,
			wantStatus: job.StatusValidating, wantProvider: bedrock.StatusValidating},
		// Scheduled (waiting for capacity, possibly for hours) maps to validating;
		// shared/job says the raw word stays visible as provider_status.
		{name: "Scheduled shows as provider status", fn: events, event: sample("Scheduled").raw,
			wantStatus: job.StatusValidating, wantProvider: bedrock.StatusScheduled},
		{name: "InProgress", fn: events, event: inProgress.raw,
			wantStatus: job.StatusInProgress, wantProvider: bedrock.StatusInProgress},
		// EventBridge does not keep order: a late event must not move the job back.
		{name: "late Validating changes nothing", fn: events, event: sample("Validating").raw,
			wantStatus: job.StatusInProgress, wantProvider: bedrock.StatusInProgress},
		{name: "Completed waits for ingest", fn: events, event: sample("Completed").raw,
			wantStatus: job.StatusIngesting, wantProvider: bedrock.StatusCompleted,
			check: func(t *testing.T, j *job.Job) {
				// Set only after PutEvents to the project bus (in moto) succeeded.
				if !j.OutputReadyPublished {
					t.Error("Job Output Ready not recorded as published")
				}
				if j.FinalStatus != job.StatusCompleted {
					t.Errorf("final status %q, want %q", j.FinalStatus, job.StatusCompleted)
				}
			}},
		{name: "Job Output Ready ingests the output", fn: ingest, event: ready, before: putOutput,
			wantStatus: job.StatusPartiallyCompleted, wantProvider: bedrock.StatusCompleted,
			check: func(t *testing.T, j *job.Job) {
				if j.Succeeded != 1 || j.Failed != 1 || j.InputTokens != 10 || j.OutputTokens != 3 {
					t.Errorf("succeeded %d failed %d tokens %d/%d, want 1 1 10/3", j.Succeeded, j.Failed, j.InputTokens, j.OutputTokens)
				}
				recs, _, err := st.store.ListRecords(t.Context(), j.RecordSet(), store.RecordQuery{})
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]job.RecordStatus{}
				for _, r := range recs {
					got[r.ID] = r.Status
				}
				if len(recs) != 2 || got["r1"] != job.RecordSucceeded || got["r2"] != job.RecordFailed {
					t.Errorf("records %+v, want r1 succeeded and r2 failed", recs)
				}
			}},
		{name: "duplicate Completed after ingest changes nothing", fn: events, event: sample("Completed").raw,
			wantStatus: job.StatusPartiallyCompleted, wantProvider: bedrock.StatusCompleted},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.before != nil {
				s.before(t)
			}
			acknowledged(t, s.fn.invoke(t, s.event))
			j, err := st.store.GetJob(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if j.Status != s.wantStatus || j.ProviderStatus != s.wantProvider {
				t.Errorf("job %s/%s, want %s/%s", j.Status, j.ProviderStatus, s.wantStatus, s.wantProvider)
			}
			if s.check != nil {
				s.check(t, j)
			}
		})
	}
}

// functionURLEvent is the Function URL request of a signed MCP tools/list.
func functionURLEvent(t testing.TB, withIAM bool) []byte {
	t.Helper()
	raw := readFile(t, "testdata/function-url-tools-list.json")
	if withIAM {
		return raw
	}
	// Edit the JSON as a map so nothing else in the event changes.
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	delete(ev["requestContext"].(map[string]any), "authorizer")
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// streamed splits a RESPONSE_STREAM answer as RIE returns it: the
// http-integration-response prelude JSON, eight NUL bytes, then the body.
func streamed(t testing.TB, raw []byte) (status int, headers map[string]string, body []byte) {
	t.Helper()
	prelude, body, ok := bytes.Cut(raw, make([]byte, 8))
	if !ok {
		t.Fatalf("no 8-NUL separator in the streamed response: %q", raw)
	}
	var p struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(prelude, &p); err != nil {
		t.Fatalf("prelude %q: %v", prelude, err)
	}
	return p.StatusCode, p.Headers, body
}

// jsonRPCResult takes the JSON-RPC message out of a Streamable HTTP body,
// which is an SSE stream or plain JSON.
func jsonRPCResult(t testing.TB, body []byte) json.RawMessage {
	t.Helper()
	msg := bytes.TrimSpace(body)
	if !bytes.HasPrefix(msg, []byte("{")) {
		msg = nil
		sc := bufio.NewScanner(bytes.NewReader(body))
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				msg = append(msg, strings.TrimSpace(data)...)
			}
		}
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &resp); err != nil {
		t.Fatalf("body %q is not a JSON-RPC response: %v", body, err)
	}
	if resp.Error != nil {
		t.Fatalf("JSON-RPC error %d: %s", resp.Error.Code, resp.Error.Message)
	}
	return resp.Result
}

func TestMCPFunctionURL(t *testing.T) {
	st := newStack(t)
	fn := startLambda(t, "mcp", st)
	for _, c := range []struct {
		name       string
		withIAM    bool
		wantStatus int
	}{
		{"IAM caller lists the tools", true, http.StatusOK},
		// AWS_IAM auth always sets the authorizer; without it nobody owns the request.
		{"no IAM authorizer", false, http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, headers, body := streamed(t, fn.invoke(t, functionURLEvent(t, c.withIAM)))
			if status != c.wantStatus {
				t.Fatalf("status %d, want %d; headers %v; body %q", status, c.wantStatus, headers, body)
			}
			if status != http.StatusOK {
				return
			}
			var list struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(jsonRPCResult(t, body), &list); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			for _, want := range wantTools {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list has %v, want %s among them", names, want)
				}
			}
		})
	}
}

// BenchmarkColdStart starts RIE and a fresh bootstrap per iteration and reports
// init-ms (runtime init as RIE measures it; mean and median), cold-ms (RIE
// process start to the end of the first invocation) and warm-ms (the second
// invocation).
//
//	go test ./functions/ -run '^$' -bench ColdStart -benchtime 5x
func BenchmarkColdStart(b *testing.B) {
	st := newStack(b)
	for _, c := range []struct {
		fn    string
		event func(testing.TB) []byte
	}{
		{"mcp", func(tb testing.TB) []byte { return functionURLEvent(tb, true) }},
		{"bedrock-events", func(tb testing.TB) []byte { return readFile(tb, "../events/bedrock/InProgress.json") }},
		{"ingest", func(tb testing.TB) []byte { return readFile(tb, "../events/project/job-output-ready.json") }},
		{"ondemand", func(tb testing.TB) []byte { return readFile(tb, "../events/project/on-demand-run-requested.json") }},
		{"sagemaker-events", func(tb testing.TB) []byte { return readFile(tb, "../events/sagemaker/test-notification.json") }},
		{"providers", func(tb testing.TB) []byte { return readFile(tb, "../events/providers/count-tokens.json") }},
	} {
		b.Run(c.fn, func(b *testing.B) {
			payload := c.event(b)
			fi, err := os.Stat(bootstrap(b, c.fn))
			if err != nil {
				b.Fatal(err)
			}
			var initMS, coldMS, warmMS float64
			var inits []float64
			n := 0
			for b.Loop() {
				p := startLambda(b, c.fn, st)
				p.invoke(b, payload)
				coldMS += ms(time.Since(p.started))
				inits = append(inits, p.initMS(b))
				initMS += inits[len(inits)-1]
				t := time.Now()
				p.invoke(b, payload)
				warmMS += ms(time.Since(t))
				p.stop()
				n++
			}
			// After the loop: b.Loop resets the timer, which drops metrics reported before it.
			b.ReportMetric(float64(fi.Size())/1e6, "bootstrap-MB")
			b.ReportMetric(initMS/float64(n), "init-ms")
			slices.Sort(inits)
			b.ReportMetric(inits[n/2], "init-ms-p50") // steadier than the mean on a shared machine
			b.ReportMetric(coldMS/float64(n), "cold-ms")
			b.ReportMetric(warmMS/float64(n), "warm-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// freeAddr picks a free loopback address (RIE takes addresses, not listeners).
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// killGroup SIGKILLs the process group led by pid, and pid itself should it
// lead none (every process here is started with Setpgid).
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// descendants lists the processes under pid, read from /proc.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name: state, ppid, ...
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}

// syncBuffer collects RIE's stdout and stderr, written from two goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
