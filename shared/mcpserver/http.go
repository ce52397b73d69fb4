package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/console"
)

// MaxRequestBytes is the Lambda Function URL's request payload limit (6 MB).
const MaxRequestBytes = 6 * 1024 * 1024

// Handler serves MCP over stateless Streamable HTTP. owner authenticates each
// request; requests over the Function URL's payload limit get a tool error that
// says how to split the batch, instead of a bare 413. The web console's static
// files (/console, /console/...) are served without authentication: they hold
// no data, and the page calls /mcp with the key the user enters.
func (s *Server) Handler(owner OwnerFunc) http.Handler {
	web := console.New()
	srv := s.MCP()
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		MaxRequestBodyBytes: MaxRequestBytes + 1,
		Logger:              s.log(),
	})
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
			body, tooBig, err := readLimited(r.Body, MaxRequestBytes)
			if err != nil {
				http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			if tooBig {
				writeTooBig(w, body)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		mcpHandler.ServeHTTP(w, r)
	})
}

// readLimited reads up to limit bytes; tooBig reports more were sent. The head of
// an oversized body is kept to find the JSON-RPC id for the reply.
func readLimited(r io.Reader, limit int64) ([]byte, bool, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > limit {
		_, _ = io.Copy(io.Discard, r)
		return body, true, nil
	}
	return body, false, nil
}

// writeTooBig answers an oversized tools/call with a tool error naming the limit
// and the way out; anything else gets a JSON-RPC error.
func writeTooBig(w http.ResponseWriter, body []byte) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	// The body is cut at the limit, so decode only the leading members.
	dec := json.NewDecoder(bytes.NewReader(body))
	_ = decodeLeading(dec, &head.ID, &head.Method)
	msg := fmt.Sprintf("request body is over the Lambda Function URL's %d-byte (6 MB) payload limit: "+
		"records: upload the records as a JSONL file with create_upload and submit it with input_upload_id, "+
		"or split the batch over several submit_batch calls of under 6 MB each", MaxRequestBytes)
	w.Header().Set("Content-Type", "application/json")
	if head.Method == "tools/call" && len(head.ID) > 0 {
		res := map[string]any{"jsonrpc": "2.0", "id": head.ID, "result": mcp.CallToolResult{
			IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "invalid input: " + msg}},
		}}
		_ = json.NewEncoder(w).Encode(res)
		return
	}
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	id := head.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32600, "message": msg}})
}

// decodeLeading walks the top-level object token by token and picks id and
// method, stopping at the first value it cannot skip (the cut-off params).
func decodeLeading(dec *json.Decoder, id *json.RawMessage, method *string) error {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("not an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		switch key {
		case "id":
			if err := dec.Decode(id); err != nil {
				return err
			}
		case "method":
			if err := dec.Decode(method); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	return nil
}
