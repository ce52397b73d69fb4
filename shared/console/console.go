// Package console is the suite's web console: one static page, a stylesheet
// and a small vanilla script, embedded in the binary and served at /console by
// the MCP endpoint. It holds no data and needs no build step; the page asks
// for an API key, keeps it in the tab's sessionStorage (never a cookie), and
// calls the same MCP tools over POST /mcp as any client, so what a key sees is
// exactly what the tools let that key see.
//
// The assets are public (they contain nothing but code) and are served with a
// strict Content-Security-Policy: the page loads nothing from anywhere else and
// can talk only to its own origin.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

//go:embed static
var files embed.FS

// Prefix is the path the console is served under.
const Prefix = "/console"

// CSP is the Content-Security-Policy of every console response.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type asset struct {
	body  []byte
	ctype string
	hash  string // of body; the ETag, and the ?v= of versioned links
}

// Handler serves the console's page and assets.
type Handler struct {
	assets map[string]asset // by path under Prefix: "", "/app.js", "/app.css"
}

// New builds the handler; the page's links carry each asset's hash so a new
// binary's assets are never mixed with cached old ones.
func New() *Handler {
	h := &Handler{assets: map[string]asset{}}
	// jobview.js is the job view the MCP App (AppHTML) shares.
	for name, ctype := range map[string]string{"app.js": "text/javascript; charset=utf-8", "jobview.js": "text/javascript; charset=utf-8",
		"app.css": "text/css; charset=utf-8", "jobview.css": "text/css; charset=utf-8"} {
		h.assets["/"+name] = load(name, ctype, nil)
	}
	page := load("index.html", "text/html; charset=utf-8", func(b []byte) []byte {
		for _, name := range []string{"app.js", "jobview.js", "app.css", "jobview.css"} {
			b = bytes.ReplaceAll(b, []byte("{{"+name+"}}"), []byte(h.assets["/"+name].hash))
		}
		return b
	})
	h.assets[""], h.assets["/"] = page, page
	return h
}

func load(name, ctype string, edit func([]byte) []byte) asset {
	b, err := files.ReadFile("static/" + name)
	if err != nil {
		panic(fmt.Sprintf("console: embedded %s missing: %v", name, err)) // a broken build, not a runtime condition
	}
	if edit != nil {
		b = edit(b)
	}
	sum := sha256.Sum256(b)
	return asset{body: b, ctype: ctype, hash: hex.EncodeToString(sum[:8])}
}

// Serves reports whether path belongs to the console.
func Serves(path string) bool {
	return path == Prefix || strings.HasPrefix(path, Prefix+"/")
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		hd.Set("Cache-Control", "no-store")
		http.Error(w, "the console is read with GET; its data comes from POST /mcp", http.StatusMethodNotAllowed)
		return
	}
	a, ok := h.assets[strings.TrimPrefix(r.URL.Path, Prefix)]
	if !ok || !Serves(r.URL.Path) {
		hd.Set("Cache-Control", "no-store")
		http.Error(w, "no such console page; open "+Prefix, http.StatusNotFound)
		return
	}
	hd.Set("Content-Type", a.ctype)
	hd.Set("ETag", `"`+a.hash+`"`)
	if v := r.URL.Query().Get("v"); v != "" && v == a.hash {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		// The page (and unversioned asset URLs) revalidate on every load: cheap with the ETag.
		hd.Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
