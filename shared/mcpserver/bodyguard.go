package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRequestBytes is the Lambda Function URL's request payload limit (6 MB).
const MaxRequestBytes = 6 * 1024 * 1024

// maxScanBytes bounds how much of an oversized body is read to find its id:
// both official SDKs (TypeScript, Python) write "id" after "params", so the id
// of a 7 MB tools/call sits near its end. Past this the connection is dropped
// instead of being read further.
const maxScanBytes = 64 * 1024 * 1024

// guardBody lets a body declared within the limit through untouched (net/http
// stops reading at Content-Length, so it cannot grow past it); a body of
// unknown length is read up to the limit first.
func guardBody(r *http.Request) (body io.ReadCloser, tooBig bool, head rpcHead, err error) {
	if r.ContentLength >= 0 && r.ContentLength <= MaxRequestBytes {
		return r.Body, false, head, nil
	}
	if r.ContentLength > MaxRequestBytes {
		// Declared too big: scan for the id as the bytes stream by, keeping
		// none of them (a 32 KB copy buffer at a time).
		var sc headScanner
		_, _ = io.Copy(&sc, io.LimitReader(r.Body, maxScanBytes))
		return nil, true, sc.head(), nil
	}
	b, tooBig, head, err := readBody(r.Body, r.ContentLength)
	if err != nil || tooBig {
		return nil, tooBig, head, err
	}
	r.ContentLength = int64(len(b))
	return io.NopCloser(bytes.NewReader(b)), false, head, nil
}

// readBody reads a POST body up to MaxRequestBytes. An oversized body is not
// kept: it is streamed through a scanner that finds the top-level "id" and
// "method" whatever the key order, skipping params without buffering them.
func readBody(r io.Reader, size int64) (body []byte, tooBig bool, head rpcHead, err error) {
	// Sized from Content-Length plus ReadFrom's MinRead headroom, so a body
	// under the limit is read with one allocation and no copy on growth.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), MaxRequestBytes+1)+bytes.MinRead))
	if _, err = buf.ReadFrom(io.LimitReader(r, MaxRequestBytes+1)); err != nil {
		return nil, false, head, err
	}
	if buf.Len() <= MaxRequestBytes {
		return buf.Bytes(), false, head, nil
	}
	var sc headScanner
	_, _ = sc.Write(buf.Bytes())
	// The rest goes through the scanner in small chunks and is dropped; a
	// read error here only ends the scan early.
	_, _ = io.Copy(&sc, io.LimitReader(r, maxScanBytes-int64(buf.Len())))
	return nil, true, sc.head(), nil
}

// rpcHead is what an oversized request's reply needs.
type rpcHead struct {
	ID     json.RawMessage // a JSON string or number; nil if not found
	Method string
}

// headScanner is a byte-level JSON walker that tracks only the top-level
// object's keys and captures the scalar values of "id" and "method" (each at
// most scanCap bytes). Strings are skipped with bytes.IndexAny, so the long
// prompt and base64 strings that make a body big cost little.
type headScanner struct {
	depth   int
	inStr   bool
	esc     bool
	bad     bool // not a JSON object: stop looking
	phase   scanPhase
	key     []byte // the current top-level key (bounded)
	capture *[]byte
	id      []byte
	method  []byte
}

type scanPhase uint8

const (
	wantKey scanPhase = iota
	inKey
	wantColon
	wantValue
	inValue
)

const scanCap = 256

func (s *headScanner) Write(p []byte) (int, error) {
	n := len(p)
	for i := 0; i < len(p) && !s.bad; i++ {
		c := p[i]
		if s.inStr {
			if s.capture == nil && !s.esc {
				// Fast path: jump to the next quote or backslash.
				j := bytes.IndexAny(p[i:], `"\`)
				if j < 0 {
					break
				}
				i += j
				c = p[i]
			}
			s.keep(c)
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.depth == 1 {
					s.endString()
				}
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			s.inStr = true
			if s.depth == 1 {
				switch s.phase {
				case wantKey:
					s.phase, s.key = inKey, s.key[:0]
					s.capture = &s.key
				case wantValue:
					s.startValue()
					s.keep(c)
				}
			}
		case '{', '[':
			if s.depth == 0 && c != '{' {
				s.bad = true
				break
			}
			if s.depth == 1 && s.phase == wantValue {
				s.phase = inValue // an object or array value: not captured
			}
			s.depth++
		case '}', ']':
			if s.depth == 1 {
				s.endScalar()
			}
			s.depth--
		case ':':
			if s.depth == 1 && s.phase == wantColon {
				s.phase = wantValue
			}
		case ',':
			if s.depth == 1 {
				s.endScalar()
				s.phase = wantKey
			}
		default:
			if s.depth == 0 {
				s.bad = true
				break
			}
			if s.depth == 1 && s.phase == wantValue {
				s.startValue()
			}
			s.keep(c)
		}
	}
	return n, nil
}

// keep appends c to the capture in progress, up to scanCap bytes.
func (s *headScanner) keep(c byte) {
	if s.capture != nil && len(*s.capture) < scanCap {
		*s.capture = append(*s.capture, c)
	}
}

func (s *headScanner) startValue() {
	s.phase = inValue
	switch string(s.key) {
	case "id":
		s.id = s.id[:0]
		s.capture = &s.id
	case "method":
		s.method = s.method[:0]
		s.capture = &s.method
	}
}

// endString closes a top-level key or string value.
func (s *headScanner) endString() {
	if s.phase == inKey {
		s.phase = wantColon
		if n := len(s.key); n > 0 && n < scanCap {
			s.key = s.key[:n-1] // the closing quote
		}
	}
	s.capture = nil
}

// endScalar closes a number, true, false or null value at a ',' or '}'.
func (s *headScanner) endScalar() { s.capture = nil }

// head returns the id if it is a JSON-RPC id (string or number) and the method.
func (s *headScanner) head() rpcHead {
	var h rpcHead
	if len(s.id) > 0 && len(s.id) < scanCap && json.Valid(s.id) && (s.id[0] == '"' || s.id[0] == '-' || (s.id[0] >= '0' && s.id[0] <= '9')) {
		h.ID = json.RawMessage(bytes.Clone(s.id))
	}
	if len(s.method) > 0 && len(s.method) < scanCap {
		_ = json.Unmarshal(s.method, &h.Method)
	}
	return h
}

// tooBigMessage names the limit and the way out; tool descriptions say the
// same so a model steers big inputs to create_upload before it hits this.
var tooBigMessage = fmt.Sprintf("request body is over the Lambda Function URL's %d-byte (6 MB) payload limit: "+
	"records: upload the records as a JSONL file with create_upload and submit it with input_upload_id "+
	"(anything above 5 MB of input belongs there), or split the batch over several submit_batch calls of under 5 MB each", MaxRequestBytes)

// writeTooBig answers an oversized request as a JSON-RPC reply the official
// clients can use: a tools/call gets a tool error (the session goes on and the
// model reads the way out), another request with an id a JSON-RPC error. Only
// a body with no readable id gets HTTP 413, as there is nothing to answer.
//
// A 2026-07-28 client (MCP-Protocol-Version header) needs resultType on every
// result; earlier revisions read its absence as complete.
func writeTooBig(w http.ResponseWriter, h rpcHead, protocolVersion string) {
	w.Header().Set("Content-Type", "application/json")
	if len(h.ID) == 0 {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": tooBigMessage}})
		return
	}
	if h.Method == "tools/call" {
		res := struct {
			mcp.CallToolResult
			ResultType string `json:"resultType,omitempty"`
		}{CallToolResult: mcp.CallToolResult{
			IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "invalid input: " + tooBigMessage}},
		}}
		if protocolVersion >= "2026-07-28" {
			res.ResultType = "complete"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": h.ID, "result": res})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": h.ID, "error": map[string]any{"code": -32600, "message": tooBigMessage}})
}
