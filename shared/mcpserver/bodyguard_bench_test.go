package mcpserver

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkSizeGuard5MB is what the guard adds to a 5 MB request that declares
// its length, as the official SDKs' fetch does: a length check, no copy.
func BenchmarkSizeGuard5MB(b *testing.B) {
	body := bigRequest(5 << 20)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		if _, tooBig, _, err := guardBody(r); err != nil || tooBig {
			b.Fatal(tooBig, err)
		}
	}
}

// BenchmarkSizeGuard5MBChunked is the same request without Content-Length:
// read once into a buffer of the limit's size.
func BenchmarkSizeGuard5MBChunked(b *testing.B) {
	body := bigRequest(5 << 20)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := httptest.NewRequest("POST", "/mcp", io.MultiReader(strings.NewReader(body)))
		r.ContentLength = -1
		if _, tooBig, _, err := guardBody(r); err != nil || tooBig {
			b.Fatal(tooBig, err)
		}
	}
}

// BenchmarkSizeGuardScan7MB is the streaming id scan of an oversized request
// whose id comes last, as the official SDKs write it (declared length: nothing
// is buffered).
func BenchmarkSizeGuardScan7MB(b *testing.B) {
	body := bigRequest(7 << 20)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		if _, tooBig, h, err := guardBody(r); err != nil || !tooBig || string(h.ID) != "12" {
			b.Fatal(tooBig, h, err)
		}
	}
}

// bigRequest is a tools/call of about n bytes shaped as the TypeScript SDK
// sends it: many records, id last.
func bigRequest(n int) string {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"submit_batch","arguments":{"model":"m","records":[`)
	rec := `{"id":"r-000000","prompt":"` + strings.Repeat("Summarise the following passage in one line. ", 20) + `"}`
	for sb.Len() < n-len(rec)-64 {
		sb.WriteString(rec)
		sb.WriteByte(',')
	}
	sb.WriteString(rec)
	sb.WriteString(`]}},"id":12}`)
	return sb.String()
}
