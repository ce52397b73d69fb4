package console

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestServes(t *testing.T) {
	h := New()
	page := h.assets[""]
	js, css := h.assets["/app.js"], h.assets["/app.css"]
	tests := []struct {
		method, path string
		status       int
		ctype, cache string
	}{
		{"GET", "/console", 200, "text/html; charset=utf-8", "no-cache"},
		{"GET", "/console/", 200, "text/html; charset=utf-8", "no-cache"},
		{"HEAD", "/console", 200, "text/html; charset=utf-8", "no-cache"},
		{"GET", "/console/app.js?v=" + js.hash, 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable"},
		{"GET", "/console/app.js", 200, "text/javascript; charset=utf-8", "no-cache"},
		{"GET", "/console/app.js?v=stale", 200, "text/javascript; charset=utf-8", "no-cache"},
		{"GET", "/console/app.css?v=" + css.hash, 200, "text/css; charset=utf-8", "public, max-age=31536000, immutable"},
		{"GET", "/console/index.html", 404, "text/plain; charset=utf-8", "no-store"},
		{"GET", "/console/../mcp", 404, "text/plain; charset=utf-8", "no-store"},
		{"GET", "/console/static/app.js", 404, "text/plain; charset=utf-8", "no-store"},
		{"POST", "/console", 405, "text/plain; charset=utf-8", "no-store"},
		{"DELETE", "/console/app.js", 405, "text/plain; charset=utf-8", "no-store"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			w := get(t, h, tc.method, tc.path, nil)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			want := map[string]string{
				"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "no-referrer",
				"Content-Type":            tc.ctype,
				"Cache-Control":           tc.cache,
			}
			for k, v := range want {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if w.Header().Get("Set-Cookie") != "" {
				t.Errorf("the console set a cookie")
			}
			if tc.status == 200 && tc.method == "GET" && w.Body.Len() == 0 {
				t.Errorf("empty body")
			}
		})
	}
	// The page links the assets by their current hashes.
	body := string(page.body)
	for _, want := range []string{`href="/console/app.css?v=` + css.hash + `"`, `src="/console/app.js?v=` + js.hash + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, "{{") {
		t.Errorf("page has an unfilled placeholder")
	}
	// Revalidation with the ETag answers 304.
	w := get(t, h, "GET", "/console/app.js", map[string]string{"If-None-Match": `"` + js.hash + `"`})
	if w.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d, want 304", w.Code)
	}
}

var (
	// Any absolute or protocol-relative URL to a host.
	externalURL = regexp.MustCompile(`(?i)(?:\b[a-z][a-z0-9+.-]*:)?//[a-z0-9-]+(?:\.[a-z0-9-]+)+`)
	// HTML attributes that load something: only same-origin paths, fragments and data: may appear.
	loads = regexp.MustCompile(`(?i)\b(?:src|href|action)\s*=\s*["']([^"']*)`)
	// CSS that loads something (CSS only: a script's new URL(...) is not a load).
	cssLoads = regexp.MustCompile(`(?i)(?:url\(\s*["']?|@import\s+["']?)([^"')\s;]*)`)
)

// external lists what in an asset would load or name something outside the origin.
func external(s string, css bool) []string {
	var bad []string
	// The SVG namespace name is an identifier (createElementNS), never fetched.
	s = strings.ReplaceAll(s, `"http://www.w3.org/2000/svg"`, `"svg-namespace"`)
	s = strings.ReplaceAll(s, `'http://www.w3.org/2000/svg'`, `'svg-namespace'`)
	bad = append(bad, externalURL.FindAllString(s, -1)...)
	matches := loads.FindAllStringSubmatch(s, -1)
	if css {
		matches = append(matches, cssLoads.FindAllStringSubmatch(s, -1)...)
	}
	for _, m := range matches {
		if v := m[1]; !(strings.HasPrefix(v, "/console/") || strings.HasPrefix(v, "#") || v == "data:,") {
			bad = append(bad, m[0])
		}
	}
	return bad
}

func TestNoExternalURLs(t *testing.T) {
	for _, bad := range []string{
		`<script src="https://cdn.example.com/x.js"></script>`,
		`<link href="//fonts.example.net/css">`,
		`body { background: url(https://img.example.org/a.png) }`,
		`body { background: url(/img/a.png) }`,
		`@import "other.css";`,
		`<img src="/elsewhere/a.png">`,
		`fetch("http://10.0.0.1.nip.io/x")`,
	} {
		if len(external(bad, true)) == 0 {
			t.Errorf("control %q not flagged", bad)
		}
	}
	for name, a := range New().assets {
		if bad := external(string(a.body), strings.HasSuffix(name, ".css") || !strings.Contains(name, ".")); len(bad) > 0 {
			t.Errorf("asset %q refers outside the origin: %q", name, bad)
		}
	}
}

func TestServesPaths(t *testing.T) {
	for path, want := range map[string]bool{"/console": true, "/console/": true, "/console/app.js": true, "/consoles": false, "/mcp": false, "/": false} {
		if Serves(path) != want {
			t.Errorf("Serves(%q) = %v", path, !want)
		}
	}
}
