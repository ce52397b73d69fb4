package mcptasks

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden exchanges in testdata")

// fakeJobs holds tasks by owner, as the job service scopes jobs.
type fakeJobs struct {
	states    map[string]State // "owner/id"
	cancelled []string
}

func (f *fakeJobs) TaskState(_ context.Context, owner, id string) (State, error) {
	st, ok := f.states[owner+"/"+id]
	if !ok {
		return State{}, ErrNotFound
	}
	return st, nil
}

func (f *fakeJobs) CancelTask(_ context.Context, owner, id string) error {
	if _, ok := f.states[owner+"/"+id]; !ok {
		return ErrNotFound
	}
	f.cancelled = append(f.cancelled, id)
	return nil
}

type ownerKey struct{}

var (
	t0      = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	expires = t0.Add(30 * 24 * time.Hour)
)

func newLayer() (*Layer, *fakeJobs, *[]string) {
	jobs := &fakeJobs{states: map[string]State{
		"alice/job-working": {Status: "working", Message: "in_progress: 40/100 records done (38 succeeded, 2 failed), 1200 input + 3400 output tokens, $0.0123",
			CreatedAt: t0, UpdatedAt: t0.Add(time.Minute), ExpiresAt: expires, Poll: 30 * time.Second},
		"alice/job-done": {Status: "completed", Message: "partially_completed: 100/100 records done (90 succeeded, 10 failed), 3000 input + 9000 output tokens, $0.0420",
			CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), ExpiresAt: expires, Poll: 30 * time.Second,
			Result: map[string]any{"content": []any{map[string]any{"type": "text", "text": "Job job-done is partially_completed: 100 records, 90 succeeded, 10 failed."}},
				"structuredContent": map[string]any{"job_id": "job-done", "status": "partially_completed", "terminal": true}, "resultType": "complete"}},
		"alice/job-failed": {Status: "failed", Message: "failed: 0/100 records done", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), ExpiresAt: expires,
			ErrMessage: "job job-failed failed: ValidationException: bad input", ErrData: map[string]any{"job_id": "job-failed", "status": "failed"}},
	}}
	var toolCalls []string
	l := &Layer{Jobs: jobs, Tools: map[string]bool{"submit_batch": true, "broken": true},
		Owner: func(ctx context.Context) string { o, _ := ctx.Value(ownerKey{}).(string); return o },
		Now:   func() time.Time { return t0.Add(2 * time.Minute) }}
	return l, jobs, &toolCalls
}

// exchange is one golden file: a request as a 2026-07-28 client sends it and
// the layer's answer.
type exchange struct {
	Owner    string            `json:"owner"`
	Headers  map[string]string `json:"headers"`
	Request  json.RawMessage   `json:"request"`
	Status   int               `json:"status"`
	Response json.RawMessage   `json:"response"`
}

func TestExchanges(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	if len(files) < 15 {
		t.Fatalf("%d golden exchanges, want the 15 flows", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ex exchange
			if err := json.Unmarshal(raw, &ex); err != nil {
				t.Fatal(err)
			}
			l, jobs, calls := newLayer()
			h := l.Wrap(sdkStandIn(calls))
			req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(ex.Request))
			for k, v := range ex.Headers {
				req.Header.Set(k, v)
			}
			req = req.WithContext(context.WithValue(req.Context(), ownerKey{}, ex.Owner))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			got := normalise(t, w.Body.Bytes())
			if *update {
				ex.Status, ex.Response = w.Code, got
				out, _ := json.MarshalIndent(ex, "", "  ")
				if err := os.WriteFile(f, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if w.Code != ex.Status || !bytes.Equal(got, normalise(t, ex.Response)) {
				t.Errorf("status %d, answer\n%s\nwant status %d, answer\n%s", w.Code, got, ex.Status, normalise(t, ex.Response))
			}
			if strings.Contains(f, "cancel") && ex.Owner == "alice" && len(jobs.cancelled) != 1 {
				t.Errorf("cancelled %v, want the one job", jobs.cancelled)
			}
		})
	}
}

// sdkStandIn answers a tools/call as the Go SDK's stateless handler does (one
// SSE event): a job handle for submit_batch, a tool error for "broken"; it
// notes each call.
func sdkStandIn(calls *[]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		*calls = append(*calls, req.Method+" "+req.Params.Name)
		result := `{"content":[{"type":"text","text":"Job job-working submitted."}],"structuredContent":{"job_id":"job-working","status":"submitted"},"resultType":"complete"}`
		if req.Method != "tools/call" {
			result = `{"answeredBy":"the SDK","resultType":"complete"}`
		}
		if req.Params.Name == "broken" {
			result = `{"content":[{"type":"text","text":"invalid input: model"}],"isError":true,"resultType":"complete"}`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", req.ID, result)
	})
}

// normalise turns an answer (JSON, or the data of an SSE event) into indented JSON.
func normalise(t *testing.T, b []byte) json.RawMessage {
	t.Helper()
	if i := bytes.Index(b, []byte("data: ")); i >= 0 {
		b = bytes.TrimSpace(b[i+6:])
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return out
}
