package local_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The tasks extension (io.modelcontextprotocol/tasks) over the wire as a
// 2026-07-28 client sends it: the per-request _meta envelope, the Mcp-Method
// and Mcp-Name headers, the extension declared in the client capabilities.

type rpcReply struct {
	status int
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpc2026 posts one request; name is the Mcp-Name header ("" for none).
func (s *suite) rpc2026(owner, method, name string, params map[string]any, tasks bool) rpcReply {
	s.t.Helper()
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 9})
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	req.Header.Set("X-Test-Owner", owner)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out rpcReply
	out.status = resp.StatusCode
	data := []byte{}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
				data = bytes.Clone(d)
			}
		}
	} else {
		buf := new(bytes.Buffer)
		_, _ = buf.ReadFrom(resp.Body)
		data = buf.Bytes()
	}
	if err := json.Unmarshal(data, &out); err != nil {
		s.t.Fatalf("%s: reply %q: %v", method, data, err)
	}
	return out
}

func (s *suite) submitAsTask(owner string, n int, tasks bool) rpcReply {
	s.t.Helper()
	return s.rpc2026(owner, "tools/call", "submit_batch", map[string]any{"name": "submit_batch",
		"arguments": map[string]any{"model": haiku, "records": records(n)}}, tasks)
}

func TestTasks(t *testing.T) {
	s := newSuite(t)

	// A client without the extension keeps the handle.
	plain := s.submitAsTask("alice", 100, false)
	if plain.Result["resultType"] != "complete" || plain.Result["structuredContent"] == nil {
		t.Fatalf("no extension: want the tool's own result, got %v", plain)
	}

	// Create: the answer is a task backed by the stored job.
	created := s.submitAsTask("alice", 100, true)
	r := created.Result
	id, _ := r["taskId"].(string)
	if r["resultType"] != "task" || r["status"] != "working" || id == "" || r["createdAt"] == nil || r["pollIntervalMs"] == nil {
		t.Fatalf("create: %v", created)
	}
	job := call[map[string]any](t, s.client("alice"), "get_job", map[string]any{"job_id": id})
	if job["job_id"] != id {
		t.Fatalf("the task id %s is not the stored job: %v", id, job)
	}

	// Get while working: status and a message with counts and cost.
	got := s.rpc2026("alice", "tasks/get", id, map[string]any{"taskId": id}, true)
	msg, _ := got.Result["statusMessage"].(string)
	if got.Result["status"] != "working" || got.Result["resultType"] != "complete" || !strings.Contains(msg, "/100 records done") || !strings.Contains(msg, "$") {
		t.Fatalf("tasks/get while working: %v", got)
	}
	if got.Result["result"] != nil {
		t.Fatalf("a working task carries no result: %v", got.Result)
	}

	// Another owner's task id and an unknown id get the same "not found".
	for _, tc := range []struct{ owner, id string }{{"bob", id}, {"alice", "no-such-task"}} {
		nf := s.rpc2026(tc.owner, "tasks/get", tc.id, map[string]any{"taskId": tc.id}, true)
		if nf.Error == nil || nf.Error.Code != -32602 || !strings.Contains(nf.Error.Message, "task not found") {
			t.Errorf("%s getting %s: %+v, want -32602 task not found", tc.owner, tc.id, nf)
		}
		nc := s.rpc2026(tc.owner, "tasks/cancel", tc.id, map[string]any{"taskId": tc.id}, true)
		if nc.Error == nil || nc.Error.Code != -32602 {
			t.Errorf("%s cancelling %s: %+v, want -32602", tc.owner, tc.id, nc)
		}
	}

	// Mcp-Name must carry params.taskId.
	bad := s.rpc2026("alice", "tasks/get", "other", map[string]any{"taskId": id}, true)
	if bad.status != http.StatusBadRequest || bad.Error == nil || bad.Error.Code != -32020 {
		t.Errorf("Mcp-Name mismatch: %+v, want HTTP 400 and -32020", bad)
	}

	// Cancel one task; the other runs to its end with the result inline.
	toCancel := s.submitAsTask("alice", 100, true).Result["taskId"].(string)
	if c := s.rpc2026("alice", "tasks/cancel", toCancel, map[string]any{"taskId": toCancel}, true); c.Error != nil || c.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %+v", c)
	}
	s.settle()
	if c := s.rpc2026("alice", "tasks/get", toCancel, map[string]any{"taskId": toCancel}, true); c.Result["status"] != "cancelled" {
		t.Errorf("after cancel: %v", c.Result)
	}
	done := s.rpc2026("alice", "tasks/get", id, map[string]any{"taskId": id}, true).Result
	res, _ := done["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if done["status"] != "completed" || sc["job_id"] != id || sc["terminal"] != true || res["resultType"] != "complete" {
		t.Fatalf("terminal tasks/get: want the result inline, got %v", done)
	}
	if sc["status"] != "partially_completed" || !strings.Contains(done["statusMessage"].(string), "100/100 records done (90 succeeded, 10 failed)") {
		t.Errorf("terminal status %v, message %q", sc["status"], done["statusMessage"])
	}
	if _, ok := done["pollIntervalMs"]; ok {
		t.Errorf("a terminal task suggests no poll interval: %v", done)
	}
}
