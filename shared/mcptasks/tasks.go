// Package mcptasks serves the MCP tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663, protocol 2026-07-28) in front of the official Go MCP SDK, which
// (v1.8.0) has no tasks and refuses tasks/* methods before any middleware runs.
// It is a thin HTTP layer: drop it, and the one line that installs it in
// mcpserver.Handler, when the SDK serves tasks itself.
//
// Wire format, from the extension's official TypeScript client
// (@modelcontextprotocol/ext-tasks 0.2.2, core/v2/schemas.js, as of 2026-12-01):
//   - a client declares the extension per request in
//     params._meta["io.modelcontextprotocol/clientCapabilities"].extensions["io.modelcontextprotocol/tasks"] = {};
//   - a task-capable tools/call is answered with a CreateTaskResult:
//     {taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs, resultType: "task"};
//   - tasks/get {taskId} answers the task with resultType "complete" and, once
//     terminal, the tool's result inline (completed) or an error (failed);
//   - tasks/cancel {taskId} answers {resultType: "complete"};
//   - over Streamable HTTP the Mcp-Name header carries params.taskId;
//   - a client that does not declare the extension gets -32021 (missing
//     required client capability) for tasks/* and for task notifications
//     asked on subscriptions/listen.
//
// The rules are those of SEP-2663 (modelcontextprotocol/modelcontextprotocol,
// seps/2663-tasks-extension.md, as of 2026-12-01).
//
// A task here is a job: the tools that start one (Tools) store the job before
// they answer, and the task id is the job id, so a task survives any number of
// stateless invocations and is scoped by the job's owner: another owner's task
// id is "not found". A client that does not declare the extension, or speaks
// an earlier protocol, gets the tools' usual results and polls get_job.
package mcptasks

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// ExtensionID names the extension in capabilities.
const ExtensionID = "io.modelcontextprotocol/tasks"

// minVersion is the first protocol revision with the extension.
const minVersion = "2026-07-28"

// ErrNotFound is what Jobs returns for a task the caller does not own or that
// does not exist: both get the same answer.
var ErrNotFound = errors.New("task not found")

// State is a task's current state, read from its job.
type State struct {
	Status    string // working, completed, failed or cancelled
	Message   string // counts and cost, for people
	CreatedAt time.Time
	UpdatedAt time.Time
	ExpiresAt time.Time     // when the job's records are deleted (zero: unknown)
	Poll      time.Duration // suggested interval between tasks/get
	// Result is the tool result once completed (a CallToolResult).
	Result map[string]any
	// ErrMessage and ErrData describe a failed task: one whose request failed
	// with a JSON-RPC error. A tool error (isError) is a completed task.
	ErrMessage string
	ErrData    any
}

// Jobs is what the layer needs from the job service.
type Jobs interface {
	TaskState(ctx context.Context, owner, taskID string) (State, error)
	CancelTask(ctx context.Context, owner, taskID string) error
}

// Layer answers tasks/* and turns the answer of a task-capable tools/call into
// a task for clients that declare the extension.
type Layer struct {
	Jobs Jobs
	// Owner is the authenticated caller of a request (set by the auth in front).
	Owner func(context.Context) string
	// Tools start jobs and may answer with a task.
	Tools map[string]bool
	Log   *slog.Logger
	// Now is the clock for ttlMs (nil: time.Now).
	Now func() time.Time
}

func (l *Layer) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Wrap puts the layer in front of the SDK's handler.
func (l *Layer) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Header.Get("Mcp-Method")
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Protocol-Version") < minVersion ||
			!(strings.HasPrefix(method, "tasks/") || method == "subscriptions/listen" || method == "tools/call" && l.Tools[r.Header.Get("Mcp-Name")]) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body) // bounded by the size guard in front
		if err != nil {
			http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		var req request
		if err := json.Unmarshal(body, &req); err != nil || req.Method != method {
			// Malformed or inconsistent: the SDK gives the standard answer.
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
			return
		}
		declared := req.Params.Meta.ClientCapabilities.declares()
		switch {
		case method == "subscriptions/listen" && req.Params.Notifications.TaskIDs != nil && !declared,
			strings.HasPrefix(method, "tasks/") && !declared:
			writeMissingCapability(w, req.ID)
		case method == "tools/call" && declared:
			l.callAsTask(w, r, next, body, req)
		case strings.HasPrefix(method, "tasks/"):
			l.serveTaskMethod(w, r, req)
		default:
			// No task notifications are sent (a subscriptions/listen acknowledges
			// no task ids): the SDK answers the rest.
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		}
	})
}

// request is the part of a JSON-RPC request the layer reads.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		TaskID        string `json:"taskId"`
		Name          string `json:"name"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		Meta struct {
			ClientCapabilities capabilities `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

type capabilities struct {
	Extensions map[string]json.RawMessage `json:"extensions"`
}

func (c capabilities) declares() bool { _, ok := c.Extensions[ExtensionID]; return ok }

// JSON-RPC error codes: invalid params for an unknown task (as the 2025-11-25
// tasks spec says for a nonexistent taskId), and the 2026-07-28 HTTP binding's
// header mismatch (the Go SDK's own code for Mcp-Name mismatches).
const (
	codeInvalidParams  = -32602
	codeMethodNotFound = -32601
	codeHeaderMismatch = -32020
	codeMissingCap     = -32021
	codeTaskFailed     = -32000
)

func (l *Layer) serveTaskMethod(w http.ResponseWriter, r *http.Request, req request) {
	if req.Params.TaskID == "" {
		writeError(w, http.StatusOK, req.ID, codeInvalidParams, "params.taskId is required")
		return
	}
	if name := r.Header.Get("Mcp-Name"); name != req.Params.TaskID {
		writeError(w, http.StatusBadRequest, req.ID, codeHeaderMismatch,
			"header mismatch: Mcp-Name header value '"+name+"' does not match params.taskId '"+req.Params.TaskID+"'")
		return
	}
	owner := l.Owner(r.Context())
	ctx := r.Context()
	switch req.Method {
	case "tasks/get":
		st, err := l.Jobs.TaskState(ctx, owner, req.Params.TaskID)
		if err != nil {
			l.writeLookupError(w, r, req, err)
			return
		}
		res := taskObject(req.Params.TaskID, st, l.now())
		res["resultType"] = "complete"
		switch st.Status {
		case "completed":
			res["result"] = st.Result
		case "failed":
			e := map[string]any{"code": codeTaskFailed, "message": st.ErrMessage}
			if st.ErrData != nil {
				e["data"] = st.ErrData
			}
			res["error"] = e
		}
		writeResult(w, req.ID, res)
	case "tasks/cancel":
		if err := l.Jobs.CancelTask(ctx, owner, req.Params.TaskID); err != nil {
			l.writeLookupError(w, r, req, err)
			return
		}
		writeResult(w, req.ID, map[string]any{"resultType": "complete"})
	case "tasks/update":
		// The jobs never ask the client for input, so there is nothing to update.
		if _, err := l.Jobs.TaskState(ctx, owner, req.Params.TaskID); err != nil {
			l.writeLookupError(w, r, req, err)
			return
		}
		writeError(w, http.StatusOK, req.ID, codeInvalidParams, "task "+req.Params.TaskID+" is not waiting for input (status comes from tasks/get)")
	default:
		writeError(w, http.StatusOK, req.ID, codeMethodNotFound, "method not found: "+req.Method)
	}
}

func (l *Layer) writeLookupError(w http.ResponseWriter, r *http.Request, req request, err error) {
	if errors.Is(err, ErrNotFound) {
		writeError(w, http.StatusOK, req.ID, codeInvalidParams, "task not found: "+req.Params.TaskID)
		return
	}
	l.log().ErrorContext(r.Context(), "task method failed", "method", req.Method, "task_id", req.Params.TaskID, "error", err)
	writeError(w, http.StatusOK, req.ID, -32603, req.Method+" failed on the server side; retry shortly")
}

// callAsTask runs the tool through the SDK and, when it started a job, answers
// with the task instead of the tool's result. A tool error stays a tool error.
func (l *Layer) callAsTask(w http.ResponseWriter, r *http.Request, next http.Handler, body []byte, req request) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	next.ServeHTTP(rec, r)
	msg, ok := responseOf(rec, req.ID)
	var res struct {
		IsError    bool `json:"isError"`
		Structured struct {
			JobID string `json:"job_id"`
		} `json:"structuredContent"`
	}
	if !ok || json.Unmarshal(msg.Result, &res) != nil || res.IsError || res.Structured.JobID == "" {
		copyRecorded(w, rec)
		return
	}
	st, err := l.Jobs.TaskState(r.Context(), l.Owner(r.Context()), res.Structured.JobID)
	if err != nil {
		// The job was stored but cannot be read back as a task (e.g. a
		// pipeline run another owner started): the tool's own answer stands.
		l.log().WarnContext(r.Context(), "tool result not offered as a task", "job_id", res.Structured.JobID, "error", err)
		copyRecorded(w, rec)
		return
	}
	out := taskObject(res.Structured.JobID, st, l.now())
	out["resultType"] = "task"
	writeResult(w, req.ID, out)
}

// taskObject is the Task shape shared by CreateTaskResult and tasks/get.
func taskObject(id string, st State, now time.Time) map[string]any {
	t := map[string]any{
		"taskId":        id,
		"status":        st.Status,
		"createdAt":     st.CreatedAt.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": st.UpdatedAt.UTC().Format(time.RFC3339Nano),
		"ttlMs":         nil,
	}
	if st.Message != "" {
		t["statusMessage"] = st.Message
	}
	if !st.ExpiresAt.IsZero() {
		t["ttlMs"] = max(st.ExpiresAt.Sub(now).Milliseconds(), 0)
	}
	if st.Poll > 0 && st.Status == "working" {
		t["pollIntervalMs"] = st.Poll.Milliseconds()
	}
	return t
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
}

// responseOf finds the JSON-RPC response to id in a recorded SDK answer, sent
// as JSON or as a server-sent event stream.
func responseOf(rec *recorder, id json.RawMessage) (rpcMessage, bool) {
	if rec.code != http.StatusOK {
		return rpcMessage{}, false
	}
	var candidates [][]byte
	if strings.HasPrefix(rec.header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(rec.body.Bytes()))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
				candidates = append(candidates, bytes.Clone(bytes.TrimSpace(data)))
			}
		}
	} else {
		candidates = append(candidates, rec.body.Bytes())
	}
	for _, c := range candidates {
		var m rpcMessage
		if json.Unmarshal(c, &m) == nil && bytes.Equal(m.ID, id) && len(m.Result) > 0 {
			return m, true
		}
	}
	return rpcMessage{}, false
}

// recorder keeps the SDK's answer to a task-capable tools/call, to be sent on
// as it is or replaced by the task.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) Flush()                      {} // the SDK flushes its event stream; here it is kept whole

func copyRecorded(w http.ResponseWriter, rec *recorder) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.code)
	_, _ = w.Write(rec.body.Bytes())
}

// writeMissingCapability is the -32021 answer naming the extension to declare,
// with HTTP 400 as the official TypeScript server gives it (its ladder of
// HTTP statuses, @modelcontextprotocol/client 2.4.0, as of 2026-12-01).
func writeMissingCapability(w http.ResponseWriter, id json.RawMessage) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
		"code": codeMissingCap, "message": "Missing required client capability: declare the " + ExtensionID + " extension in the request's client capabilities",
		"data": map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionID: map[string]any{}}}},
	}})
}

func writeResult(w http.ResponseWriter, id json.RawMessage, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func writeError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

func (l *Layer) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.Default()
}
