package local_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
)

// POST /local/events runs the handlers a Lambda would: a web page must not be
// able to reach it (a text/plain "simple request" needs no CORS preflight), nor
// a DNS-rebound name, nor anyone without the dev key.
func TestLocalEventsGuard(t *testing.T) {
	dir := t.TempDir()
	key, ta, err := local.DevToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := local.New(context.Background(), local.Options{Dir: dir, Owner: ta.Owner, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(l.Handler())
	t.Cleanup(func() { srv.Close(); l.Close() })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	sample, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "bedrock", "Completed.json"))
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Bearer " + key
	tests := []struct {
		name   string
		host   string
		header map[string]string
		ctype  string
		want   int
	}{
		{"good: dev key, loopback host", "", map[string]string{"Authorization": bearer}, "application/json", http.StatusAccepted},
		{"good: localhost name", "localhost:" + port, map[string]string{"Authorization": bearer}, "application/json", http.StatusAccepted},
		{"good: IPv6 loopback name", "[::1]:" + port, map[string]string{"Authorization": bearer}, "application/json", http.StatusAccepted},
		{"no token", "", nil, "application/json", http.StatusUnauthorized},
		{"wrong token", "", map[string]string{"Authorization": "Bearer mcpb_0000000000000000000000000000000000000000"}, "application/json", http.StatusUnauthorized},
		{"text/plain simple request from a web page", "", map[string]string{"Authorization": bearer, "Origin": "https://evil.example"}, "text/plain", http.StatusForbidden},
		{"simple request without a token from a web page", "", map[string]string{"Origin": "https://evil.example"}, "text/plain", http.StatusForbidden},
		{"opaque origin", "", map[string]string{"Authorization": bearer, "Origin": "null"}, "text/plain", http.StatusForbidden},
		{"loopback origin is still a browser", "", map[string]string{"Authorization": bearer, "Origin": "http://127.0.0.1:" + port}, "application/json", http.StatusForbidden},
		{"cross-site fetch metadata", "", map[string]string{"Authorization": bearer, "Sec-Fetch-Site": "cross-site"}, "text/plain", http.StatusForbidden},
		{"same-site fetch metadata", "", map[string]string{"Authorization": bearer, "Sec-Fetch-Site": "same-site"}, "text/plain", http.StatusForbidden},
		{"DNS-rebound host", "evil.example:" + port, map[string]string{"Authorization": bearer}, "application/json", http.StatusForbidden},
		{"LAN address host", "192.168.1.20:" + port, map[string]string{"Authorization": bearer}, "application/json", http.StatusForbidden},
		{"loopback host without a port", "127.0.0.1", map[string]string{"Authorization": bearer}, "application/json", http.StatusForbidden},
		{"loopback host, other port", "127.0.0.1:1", map[string]string{"Authorization": bearer}, "application/json", http.StatusForbidden},
		{"look-alike host", "localhost.evil.example:" + port, map[string]string{"Authorization": bearer}, "application/json", http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/local/events", strings.NewReader(string(sample)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.ctype)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, strings.TrimSpace(string(b)), tc.want)
			}
			if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: Bearer")
			}
			if strings.Contains(string(b), key) {
				t.Errorf("response leaks the dev key")
			}
		})
	}
}
