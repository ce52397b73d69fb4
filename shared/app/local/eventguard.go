package local

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// guardLocalEvents lets only a local program (curl, a test, a script) replay
// events into make dev. The endpoint drives the same handlers as the Lambdas,
// so it gets the /mcp endpoint's caller check (the dev key in token mode) plus:
//   - no browser: a request carrying Origin, or Sec-Fetch-Site other than
//     "none", comes from a web page (a text/plain POST is a CORS "simple
//     request" a page may send to any address without a preflight);
//   - a loopback Host with the port the server listens on, so a DNS-rebound
//     name (evil.example resolving to 127.0.0.1) is refused.
func guardLocalEvents(owner mcpserver.OwnerFunc, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			http.Error(w, "forbidden: /local/events does not accept browser requests (Origin header present)", http.StatusForbidden)
			return
		}
		if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "none" {
			http.Error(w, "forbidden: /local/events does not accept browser requests (Sec-Fetch-Site: "+s+")", http.StatusForbidden)
			return
		}
		if !loopbackHost(r) {
			http.Error(w, "forbidden: /local/events answers only a loopback Host (127.0.0.1, localhost or [::1] with the server's port)", http.StatusForbidden)
			return
		}
		if _, err := owner(r); err != nil {
			if errors.Is(err, mcpserver.ErrAuthUnavailable) {
				http.Error(w, "authentication unavailable, retry", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpbatch"`)
			http.Error(w, "unauthenticated: send the dev key as Authorization: Bearer <key> (see <dir>/dev-token)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost: the Host header names a loopback host and carries the port the
// request arrived on (when the server knows it).
func loopbackHost(r *http.Request) bool {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" {
		return false
	}
	if !strings.EqualFold(host, "localhost") {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, lport, err := net.SplitHostPort(la.String()); err == nil && lport != port {
			return false
		}
	}
	return true
}
