package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// bigBody wraps filler of over 6 MB between head and tail, inside a string
// that holds the characters a naive scanner trips on.
func bigBody(head, tail string) string {
	filler := strings.Repeat(`x\\\"}{,id:[`, MaxRequestBytes/10+1)
	return head + filler + tail
}

func TestOversizedRequestReply(t *testing.T) {
	const params = `"params":{"name":"submit_batch","arguments":{"records":[{"id":"r1","nested":{"id":99},"prompt":"`
	tests := []struct {
		name        string
		body        string
		wantStatus  int
		wantToolErr bool
		wantID      string
	}{
		{"id first", bigBody(`{"jsonrpc":"2.0","id":42,"method":"tools/call",`+params, `"}]}}}`), 200, true, "42"},
		// Both official SDKs serialise {jsonrpc, method, params, id}.
		{"id last, as the official SDKs write it", bigBody(`{"jsonrpc":"2.0","method":"tools/call",`+params, `"}]}},"id":7}`), 200, true, "7"},
		{"string id last, spaced", bigBody(`{ "method" : "tools/call" , `+params, `"}]}} ,  "id" : "abc-1" }`), 200, true, `"abc-1"`},
		{"method last", bigBody(`{"id":3,`+params, `"}]}},"method":"tools/call"}`), 200, true, "3"},
		{"not a tool call", bigBody(`{"jsonrpc":"2.0","method":"initialize","params":{"x":"`, `"},"id":1}`), 200, false, "1"},
		{"cut before the id", bigBody(`{"jsonrpc":"2.0","method":"tools/call",`+params, ``), 413, false, "null"},
		{"null id", bigBody(`{"method":"tools/call",`+params, `"}]}},"id":null}`), 413, false, "null"},
		{"garbage", bigBody(`xxxxxxxx`, `"id":5}`), 413, false, "null"},
	}
	for _, tc := range tests {
		// Declared length: streamed, nothing kept; unknown length (chunked):
		// the first 6 MB are buffered, then the rest streams.
		for _, declared := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s declared=%v", tc.name, declared), func(t *testing.T) {
				r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.body))
				if !declared {
					r.ContentLength = -1
				}
				_, tooBig, head, err := guardBody(r)
				if err != nil || !tooBig {
					t.Fatalf("guardBody: tooBig %v err %v", tooBig, err)
				}
				w := httptest.NewRecorder()
				writeTooBig(w, head, "2025-11-25")
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
				for _, want := range []string{"6 MB", "create_upload", "input_upload_id", "split"} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q lacks %q", msg, want)
					}
				}
			})
		}
	}
}

// The scanner is fed in arbitrary pieces by io.Copy: every split point of a
// small body must give the same answer.
func TestHeadScannerChunked(t *testing.T) {
	body := `{"jsonrpc":"2.0","method":"tools/call","params":{"a":"q\\\"id\":1","b":[1,{"id":2}],"c":true},"id":"the-id"}`
	for cut := 0; cut <= len(body); cut++ {
		var sc headScanner
		_, _ = sc.Write([]byte(body[:cut]))
		_, _ = sc.Write([]byte(body[cut:]))
		h := sc.head()
		if string(h.ID) != `"the-id"` || h.Method != "tools/call" {
			t.Fatalf("cut %d: id %s method %q", cut, h.ID, h.Method)
		}
	}
}

func TestReadBodyUnderLimit(t *testing.T) {
	for _, n := range []int{0, 10, MaxRequestBytes} {
		body, tooBig, _, err := readBody(strings.NewReader(strings.Repeat("a", n)), int64(n))
		if err != nil || tooBig || len(body) != n {
			t.Errorf("n=%d: len %d tooBig %v err %v", n, len(body), tooBig, err)
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

// FuzzHeadScanner: on any complete JSON object, the scanner finds the same
// top-level id and method as encoding/json, whatever the key order, nesting
// and escapes, fed in two pieces at any cut.
func FuzzHeadScanner(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","method":"tools/call","params":{"a":"q\\\"id\":1","b":[1,{"id":2}]},"id":"x"}`,
		`{"id":7,"method":"m"}`, `{ "params" : { "id" : 3 } , "id" : -1.5e3 , "method" : "a\"b" }`,
		`{"x":[[[]]],"id":"\u0041","method":"tools/call"}`, `{"id":null}`, `{}`,
	} {
		f.Add(seed, uint16(5))
	}
	f.Fuzz(func(t *testing.T, body string, cut uint16) {
		var want map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &want) != nil {
			return
		}
		c := int(cut) % (len(body) + 1)
		var sc headScanner
		_, _ = sc.Write([]byte(body[:c]))
		_, _ = sc.Write([]byte(body[c:]))
		got := sc.head()
		// Keys are matched as written: an escaped key ("\u0069d") is not
		// looked for (no SDK writes one; such a body gets the plain 413).
		var wantMethod string
		if m := want["method"]; strings.Contains(body, `"method"`) && len(m) < scanCap && json.Unmarshal(m, &wantMethod) == nil && got.Method != wantMethod {
			t.Errorf("method %q, want %q in %s", got.Method, wantMethod, body)
		}
		id := want["id"]
		if !strings.Contains(body, `"id"`) || len(id) == 0 || len(id) >= scanCap || !(id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')) {
			return // not a JSON-RPC id the scanner reports
		}
		if string(got.ID) != string(id) {
			t.Errorf("id %s, want %s in %s", got.ID, id, body)
		}
	})
}
