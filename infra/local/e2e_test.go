package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests run what a user runs: the `make dev` binary, driven by the real
// MCP Inspector CLI over Streamable HTTP.

func inspector(t *testing.T) (node, script string) {
	t.Helper()
	tools := os.Getenv("MCPBATCH_TOOLS")
	if tools == "" {
		tools = filepath.Join("..", "..", ".tools")
	}
	node, script = inspectorPaths(tools)
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("MCPBATCH_E2E") == "1" {
				t.Fatalf("%s missing: run bash .ci/tools.sh", p)
			}
			t.Skipf("%s missing (bash .ci/tools.sh installs it)", p)
		}
	}
	return node, script
}

// inspectorPaths are Node 22 and the Inspector CLI's script under tools
// (README.md's inspect() runs the same two).
func inspectorPaths(tools string) (node, script string) {
	return filepath.Join(tools, "bin", "node22"),
		filepath.Join(tools, "inspector", "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
}

// dev is a running `make dev`: its MCP URL and the API key it printed.
type dev struct {
	url, token string
	stateDir   string
}

// buildDir holds the dev binary the package builds itself; TestMain creates and removes it.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpbatch-dev-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// devBinary is the make dev binary: the one make test built before go test
// (MCPBATCH_DEV_BIN), or else built once for the package's tests.
var devBinary = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("MCPBATCH_DEV_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("MCPBATCH_DEV_BIN: %v (make test-binaries builds it)", err)
		}
		return bin, nil
	}
	bin := filepath.Join(buildDir, "mcpbatch-dev")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./infra/local: %v\n%s", err, out)
	}
	return bin, nil
})

func startDev(t *testing.T, extra ...string) dev {
	t.Helper()
	bin, err := devBinary()
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	// The port is picked by listening on :0 and closing; another test process
	// may bind it first, so a start that loses it is tried on another port.
	var addr string
	var logs *syncBuffer
	for attempt := 1; ; attempt++ {
		var exited bool
		addr, logs, exited = launchDev(t, bin, state, extra)
		if !exited {
			break
		}
		if attempt == 5 || !strings.Contains(logs.String(), "address already in use") {
			t.Fatalf("make dev exited at start:\n%s", logs.String())
		}
	}
	// Ready once /healthz answers and the banner's last line ("auth: ...") has come
	// through the output pipe, which lags the server a little.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if !strings.Contains(logs.String(), "  auth: ") {
			continue
		}
		if !strings.Contains(logs.String(), "web console: http://"+addr+"/console") {
			t.Errorf("start-up banner does not print the console URL:\n%s", logs.String())
		}
		if !strings.Contains(logs.String(), "Bedrock batch: SIMULATED") {
			t.Errorf("start-up banner does not say the Bedrock simulator is simulated:\n%s", logs.String())
		}
		if slices.Contains(extra, "none") {
			return dev{url: "http://" + addr + "/mcp", stateDir: state}
		}
		tok, err := os.ReadFile(filepath.Join(state, "dev-token"))
		if err != nil {
			t.Fatalf("make dev wrote no dev-token: %v", err)
		}
		token := strings.TrimSpace(string(tok))
		if !strings.Contains(logs.String(), "Bearer "+token) {
			t.Errorf("start-up banner does not print the key in %s/dev-token:\n%s", state, logs.String())
		}
		return dev{url: "http://" + addr + "/mcp", token: token, stateDir: state}
	}
	t.Fatalf("make dev did not answer:\n%s", logs.String())
	return dev{}
}

// launchDev starts the dev binary on a free loopback port; exited reports that
// it stopped before it was listening (e.g. the port was taken meanwhile).
func launchDev(t *testing.T, bin, state string, extra []string) (addr string, logs *syncBuffer, exited bool) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	logs = &syncBuffer{}
	cmd := exec.Command(bin, append([]string{"-addr", addr, "-dir", state, "-sim-step", "3s", "-sim-fail-every", "10"}, extra...)...)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	// The banner's auth line comes after the listener is bound: until then
	// the port may turn out taken and the process exit.
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(logs.String(), "  auth: ") && time.Now().Before(deadline); {
		select {
		case <-done:
			return addr, logs, true
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		<-done
		if t.Failed() {
			t.Logf("make dev output:\n%s", logs.String())
		}
	})
	return addr, logs, false
}

// syncBuffer is the dev process's output: os/exec writes it from its own
// goroutine while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// inspect runs one Inspector CLI call and decodes its JSON output. The CLI exits
// 5 after printing a result whose isError is true; that is a result, not a failure.
func inspect(t *testing.T, d dev, args ...string) map[string]any {
	t.Helper()
	stdout, stderr, err := runInspector(t, d.url, d.token, args...)
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 5) {
		t.Fatalf("inspector %v: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.NewDecoder(&stdout).Decode(&out); err != nil {
		t.Fatalf("inspector %v: output is not JSON: %v\n%s", args, err, stdout.String())
	}
	return out
}

// runInspector runs the Inspector CLI; token, when set, goes in an Authorization header.
func runInspector(t *testing.T, url, token string, args ...string) (stdout, stderr bytes.Buffer, err error) {
	t.Helper()
	node, script := inspector(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := []string{script, "--cli", url, "--transport", "http"}
	if token != "" {
		argv = append(argv, "--header", "Authorization: Bearer "+token)
	}
	cmd := exec.CommandContext(ctx, node, append(argv, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout, stderr, err
}

func callTool(t *testing.T, d dev, tool string, args map[string]any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(args)
	return inspect(t, d, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", string(raw))
}

func structured(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	if isErr, _ := res["isError"].(bool); isErr {
		t.Fatalf("tool error: %v", res["content"])
	}
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structuredContent in %v", res)
	}
	return sc
}

func TestInspectorEndToEnd(t *testing.T) {
	inspector(t)
	url := startDev(t)

	t.Run("token mode refuses a missing or wrong key", func(t *testing.T) { checkRefused(t, url) })

	list := inspect(t, url, "--method", "tools/list")
	tools, _ := list["tools"].([]any)
	names := map[string]bool{}
	for _, x := range tools {
		tool := x.(map[string]any)
		names[tool["name"].(string)] = true
		for _, k := range []string{"title", "description", "inputSchema", "outputSchema", "annotations"} {
			if tool[k] == nil {
				t.Errorf("tool %s has no %s", tool["name"], k)
			}
		}
	}
	for _, n := range []string{"submit_batch", "get_job", "get_job_results", "cancel_job", "list_jobs"} {
		if !names[n] {
			t.Errorf("tools/list lacks %s", n)
		}
	}

	recs := make([]map[string]any, 150)
	for i := range recs {
		recs[i] = map[string]any{"id": fmt.Sprintf("q%03d", i), "prompt": fmt.Sprintf("Summarise fact #%d", i)}
	}
	h := structured(t, callTool(t, url, "submit_batch", map[string]any{"model": "anthropic.claude-haiku-4-5-20251001-v1:0", "records": recs}))
	jobID, _ := h["job_id"].(string)
	if jobID == "" || h["record_count"].(float64) != 150 {
		t.Fatalf("handle = %v", h)
	}

	seen := map[string]bool{}
	var job map[string]any
	for deadline := time.Now().Add(90 * time.Second); ; {
		job = structured(t, callTool(t, url, "get_job", map[string]any{"job_id": jobID}))
		seen[job["status"].(string)] = true
		if job["terminal"] == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job never finished; saw %v", seen)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if job["status"] != "partially_completed" || job["succeeded"].(float64) != 135 || job["failed"].(float64) != 15 {
		t.Fatalf("final job = %v (statuses seen %v)", job, seen)
	}
	if len(seen) < 2 {
		t.Errorf("get_job showed only %v; want to watch it move", seen)
	}

	ids := map[string]bool{}
	cursor := ""
	for page := 0; page < 10; page++ {
		args := map[string]any{"job_id": jobID, "limit": 60}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res := structured(t, callTool(t, url, "get_job_results", args))
		for _, r := range res["records"].([]any) {
			rec := r.(map[string]any)
			ids[rec["id"].(string)] = true
			if rec["status"] == "failed" && rec["error_message"] == nil {
				t.Errorf("failed record without error: %v", rec)
			}
		}
		cursor, _ = res["next_cursor"].(string)
		if cursor == "" {
			break
		}
	}
	if len(ids) != 150 {
		t.Errorf("read %d distinct results, want 150", len(ids))
	}

	t.Run("every other tool, valid and bad input", func(t *testing.T) { otherTools(t, url, jobID, recs) })
	t.Run("resources", func(t *testing.T) { checkResources(t, url, jobID) })
	t.Run("retry_failed, webhooks, console", func(t *testing.T) { opsEndToEnd(t, url, jobID) })

	t.Run("bad input is a tool error", func(t *testing.T) {
		res := callTool(t, url, "submit_batch", map[string]any{"model": "anthropic.claude-haiku-4-5-20251001-v1:0", "records": recs[:10], "mode": "batch"})
		if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "minimum of 100") {
			t.Errorf("got %v", res)
		}
		res = callTool(t, url, "get_job", map[string]any{"job_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"})
		if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "job not found") {
			t.Errorf("got %v", res)
		}
	})
}

// checkRefused runs the Inspector without a key and with a wrong one: both must
// fail on the server's 401, before any tool runs.
func checkRefused(t *testing.T, d dev) {
	for _, c := range []struct{ name, token string }{{"no key", ""}, {"wrong key", "mcpb_" + strings.Repeat("0", 64)}} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := runInspector(t, d.url, c.token, "--method", "tools/list")
			if err == nil {
				t.Fatalf("tools/list without a valid key succeeded: %s", stdout.String())
			}
			// The Inspector answers a 401 with WWW-Authenticate: Bearer by asking for auth.
			if out := stdout.String() + stderr.String(); !strings.Contains(out, "401") && !strings.Contains(out, "auth_required") {
				t.Errorf("inspector output does not show the 401:\n%s", out)
			}
			req, _ := http.NewRequest(http.MethodPost, d.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("status %d, WWW-Authenticate %q; want 401 and Bearer", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

// otherTools calls each tool not exercised above once with valid input and
// once with bad input, through the Inspector CLI.
func otherTools(t *testing.T, d dev, jobID string, recs []map[string]any) {
	ex := structured(t, callTool(t, d, "export_results", map[string]any{"job_id": jobID, "format": "csv", "status": "failed"}))
	if ex["records"].(float64) != 15 || ex["complete"] != true || !strings.Contains(ex["url"].(string), "/local/objects?") {
		t.Errorf("export_results = %v", ex)
	}
	l := structured(t, callTool(t, d, "list_jobs", map[string]any{"status": "partially_completed"}))
	if jobs, _ := l["jobs"].([]any); len(jobs) != 1 {
		t.Errorf("list_jobs = %v", l)
	}
	c := structured(t, callTool(t, d, "cancel_job", map[string]any{"job_id": jobID}))
	if c["status"] != "partially_completed" {
		t.Errorf("cancel_job of a finished job changed it: %v", c)
	}

	// create_upload, a plain HTTP PUT of a JSONL file, then submit_batch from it.
	up := structured(t, callTool(t, d, "create_upload", map[string]any{}))
	var file strings.Builder
	for _, r := range recs[:120] {
		b, _ := json.Marshal(r)
		file.Write(b)
		file.WriteByte('\n')
	}
	req, _ := http.NewRequest(up["method"].(string), up["url"].(string), strings.NewReader(file.String()))
	for k, v := range up["headers"].(map[string]any) {
		req.Header.Set(k, v.(string))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT to the upload url: %s", resp.Status)
	}
	// The submit answers validating; the validation (on the local bus) counts the
	// records and starts the provider job, the status staying validating (it
	// never moves back) until that job runs.
	h := structured(t, callTool(t, d, "submit_batch", map[string]any{"model": "anthropic.claude-haiku-4-5-20251001-v1:0", "input_upload_id": up["upload_id"]}))
	if h["status"] != "validating" {
		t.Errorf("submit from upload = %v, want status validating", h)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		fj := structured(t, callTool(t, d, "get_job", map[string]any{"job_id": h["job_id"]}))
		if fj["status"] != "validating" || fj["record_count"].(float64) != 0 {
			if fj["record_count"].(float64) != 120 || fj["status"] == "failed" {
				t.Errorf("job from upload after validation = %v", fj)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job from upload still validating: %v", fj)
		}
	}

	for _, bad := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"export_results", map[string]any{"job_id": jobID, "format": "xlsx"}, "format"},
		{"list_jobs", map[string]any{"limit": 501}, "limit"},
		{"cancel_job", map[string]any{"job_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"}, "job not found"},
		{"get_job_results", map[string]any{"job_id": jobID, "limit": 501}, "limit"},
		{"create_upload", map[string]any{"content_type": "not a type"}, "content_type"},
		{"submit_batch", map[string]any{"model": "anthropic.claude-haiku-4-5-20251001-v1:0", "input_upload_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"}, "input_upload_id"},
	} {
		t.Run("bad "+bad.tool, func(t *testing.T) {
			res := callTool(t, d, bad.tool, bad.args)
			if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), bad.want) {
				t.Errorf("got %v, want a tool error naming %q", res, bad.want)
			}
		})
	}
}

func checkResources(t *testing.T, d dev, jobID string) {
	list := inspect(t, d, "--method", "resources/list")
	found := false
	for _, r := range list["resources"].([]any) {
		found = found || r.(map[string]any)["uri"] == "mcpbatch://jobs/"+jobID
	}
	if !found {
		t.Errorf("resources/list lacks the job: %v", list)
	}
	tmpl := inspect(t, d, "--method", "resources/templates/list")
	if n := len(tmpl["resourceTemplates"].([]any)); n != 2 {
		t.Errorf("resources/templates/list = %v", tmpl)
	}
	for _, uri := range []string{"mcpbatch://jobs/" + jobID, "mcpbatch://jobs/" + jobID + "/results"} {
		res := inspect(t, d, "--method", "resources/read", "--uri", uri)
		contents, _ := res["contents"].([]any)
		if len(contents) != 1 || !strings.Contains(contents[0].(map[string]any)["text"].(string), jobID) {
			t.Errorf("resources/read %s = %v", uri, res)
		}
	}
	stdout, stderr, err := runInspector(t, d.url, d.token, "--method", "resources/read", "--uri", "mcpbatch://jobs/01jdz3k6r8x9y2w4v5t7q0m1n3")
	if err == nil || !strings.Contains(strings.ToLower(stdout.String()+stderr.String()), "not found") {
		t.Errorf("reading an unknown job: err %v\n%s%s", err, stdout.String(), stderr.String())
	}
}
