package mcpserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWriteTooBig(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		wantStatus  int
		wantToolErr bool
		wantID      string
	}{
		{"tools/call cut mid-arguments", `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"submit_batch","arguments":{"records":[{"prompt":"xxxx`, 200, true, "42"},
		{"string id", `{"id":"abc","jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"records":[`, 200, true, `"abc"`},
		{"not a tool call", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"yyyy`, 413, false, "1"},
		{"method after params is unreadable", `{"jsonrpc":"2.0","id":3,"params":{"arguments":{"records":[`, 413, false, "3"},
		{"garbage", `xxxxxxxx`, 413, false, "null"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			writeTooBig(w, []byte(tc.body))
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d", w.Code, tc.wantStatus)
			}
			var reply struct {
				ID     json.RawMessage `json:"id"`
				Result *struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
				Error *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &reply); err != nil {
				t.Fatalf("reply %q: %v", w.Body.String(), err)
			}
			if string(reply.ID) != tc.wantID {
				t.Errorf("id %s, want %s", reply.ID, tc.wantID)
			}
			var msg string
			if tc.wantToolErr {
				if reply.Result == nil || !reply.Result.IsError || len(reply.Result.Content) == 0 {
					t.Fatalf("want a tool error, got %s", w.Body.String())
				}
				msg = reply.Result.Content[0].Text
			} else {
				if reply.Error == nil || reply.Error.Code != -32600 {
					t.Fatalf("want a JSON-RPC error, got %s", w.Body.String())
				}
				msg = reply.Error.Message
			}
			for _, want := range []string{"6 MB", "records", "split"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestReadLimited(t *testing.T) {
	for _, tc := range []struct {
		n      int
		tooBig bool
	}{{0, false}, {10, false}, {11, true}, {1000, true}} {
		body, tooBig, err := readLimited(strings.NewReader(strings.Repeat("a", tc.n)), 10)
		if err != nil || tooBig != tc.tooBig || (!tooBig && len(body) != tc.n) {
			t.Errorf("n=%d: len %d tooBig %v err %v", tc.n, len(body), tooBig, err)
		}
	}
}

// The console's static files are served without a key; everything else still
// needs one.
func TestHandlerServesConsoleWithoutAuth(t *testing.T) {
	asked := 0
	h := (&Server{}).Handler(func(*http.Request) (string, error) { asked++; return "", errors.New("no key") })
	for _, tc := range []struct {
		path   string
		status int
		ctype  string
	}{
		{"/console", 200, "text/html; charset=utf-8"},
		{"/console/app.js", 200, "text/javascript; charset=utf-8"},
		{"/console/app.css", 200, "text/css; charset=utf-8"},
		{"/console/nope", 404, "text/plain; charset=utf-8"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tc.path, nil))
		if w.Code != tc.status || w.Header().Get("Content-Type") != tc.ctype || !strings.HasPrefix(w.Header().Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("GET %s: %d %q CSP %q", tc.path, w.Code, w.Header().Get("Content-Type"), w.Header().Get("Content-Security-Policy"))
		}
	}
	if asked != 0 {
		t.Fatalf("the console asked for a key %d times", asked)
	}
	for _, path := range []string{"/mcp", "/consoles", "/"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", path, strings.NewReader(`{}`)))
		if w.Code != http.StatusUnauthorized {
			t.Errorf("POST %s without a key: %d, want 401", path, w.Code)
		}
	}
}
