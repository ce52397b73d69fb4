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
	"strings"
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
	node = filepath.Join(tools, "bin", "node22")
	script = filepath.Join(tools, "inspector", "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
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

func startDev(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpbatch-dev")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-addr", addr, "-dir", filepath.Join(dir, "state"), "-sim-step", "1s", "-sim-fail-every", "10")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("make dev output:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if !strings.Contains(logs.String(), "SIMULATED") {
				t.Errorf("start-up banner does not say the Bedrock simulator is simulated:\n%s", logs.String())
			}
			return "http://" + addr + "/mcp"
		}
	}
	t.Fatalf("make dev did not answer:\n%s", logs.String())
	return ""
}

// inspect runs one Inspector CLI call and decodes its JSON output. The CLI exits
// 5 after printing a result whose isError is true; that is a result, not a failure.
func inspect(t *testing.T, url string, args ...string) map[string]any {
	t.Helper()
	node, script := inspector(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script, "--cli", url, "--transport", "http"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
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

func callTool(t *testing.T, url, tool string, args map[string]any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(args)
	return inspect(t, url, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", string(raw))
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
	h := structured(t, callTool(t, url, "submit_batch", map[string]any{"model": "anthropic.claude-3-5-haiku-20241022-v1:0", "records": recs}))
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

	t.Run("bad input is a tool error", func(t *testing.T) {
		res := callTool(t, url, "submit_batch", map[string]any{"model": "anthropic.claude-3-5-haiku-20241022-v1:0", "records": recs[:10]})
		if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "minimum of 100") {
			t.Errorf("got %v", res)
		}
		res = callTool(t, url, "get_job", map[string]any{"job_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"})
		if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "job not found") {
			t.Errorf("got %v", res)
		}
	})
}
