package mcpserver

import (
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/console"
	"github.com/mcpbatch/mcpbatch/shared/mcptasks"
)

// Handler serves MCP over stateless Streamable HTTP. owner authenticates each
// request; requests over the Function URL's payload limit get a tool error that
// says how to split the batch, instead of a bare 413. The web console's static
// files (/console, /console/...) are served without authentication: they hold
// no data, and the page calls /mcp with the key the user enters.
func (s *Server) Handler(owner OwnerFunc) http.Handler {
	web := console.New()
	srv := s.MCP()
	var mcpHandler http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		MaxRequestBodyBytes: MaxRequestBytes + 1,
		Logger:              s.log(),
	})
	// Tasks (io.modelcontextprotocol/tasks) until the SDK serves them itself.
	mcpHandler = (&mcptasks.Layer{Jobs: tasks{s}, Owner: ownerFromContext, Tools: taskTools, Log: s.log()}).Wrap(mcpHandler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if console.Serves(r.URL.Path) {
			web.ServeHTTP(w, r)
			return
		}
		r.Header.Del(ownerHeader)
		who, err := owner(r)
		if errors.Is(err, ErrAuthUnavailable) {
			s.log().ErrorContext(r.Context(), "auth unavailable", "error", err)
			w.Header().Set("Retry-After", "5")
			http.Error(w, "authentication is temporarily unavailable; retry shortly", http.StatusServiceUnavailable)
			return
		}
		if err != nil || who == "" {
			// RFC 6750: one answer for a missing and a wrong key; nothing about other keys.
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpbatch"`)
			http.Error(w, "unauthenticated: send a valid API key as Authorization: Bearer <key> (token mode) or a SigV4-signed request (iam mode)", http.StatusUnauthorized)
			return
		}
		r.Header.Set(ownerHeader, who)
		r = r.WithContext(WithOwner(r.Context(), who))
		if r.Method == http.MethodPost {
			body, tooBig, head, err := guardBody(r)
			if err != nil {
				http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			if tooBig {
				writeTooBig(w, head, r.Header.Get("Mcp-Protocol-Version"))
				return
			}
			r.Body = body
		}
		mcpHandler.ServeHTTP(w, r)
	})
}
