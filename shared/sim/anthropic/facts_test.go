package anthropic

// The facts test: each model's facts are read from its one row, and every
// answer of the simulator that depends on the model agrees with it.

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

func factsPNG(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// call serves one request on h and returns the status and decoded body.
func call(t *testing.T, h http.Handler, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader = http.NoBody
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func TestAnthropicModelFacts(t *testing.T) {
	s := &AnthropicSim{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	t.Cleanup(func() { s.Close() })
	_, page := call(t, s, "GET", "/v1/models?limit=1000", nil)
	listed := map[string]map[string]any{}
	for _, d := range page["data"].([]any) {
		m := d.(map[string]any)
		listed[m["id"].(string)] = m
	}
	if len(listed) != len(anthropicModels) {
		t.Errorf("/v1/models lists %d models, the table has %d", len(listed), len(anthropicModels))
	}
	for id, m := range anthropicModels {
		t.Run(id, func(t *testing.T) {
			l := listed[id]
			if l == nil {
				t.Fatal("not listed")
			}
			if got := int(l["max_tokens"].(float64)); got != m.maxOut {
				t.Errorf("max_tokens %d, row %d", got, m.maxOut)
			}
			if got, want := l["lifecycle"], cmp.Or(m.lifecycle.stage, "active"); got != want {
				t.Errorf("lifecycle %v, row %v", got, want)
			}
			caps := l["capabilities"].(map[string]any)
			reads := anthropicModal(id)
			for k, want := range map[string]bool{"image_input": reads.Image, "pdf_input": reads.Document} {
				if got := caps[k].(map[string]any)["supported"]; got != want {
					t.Errorf("%s %v, the model reads %v", k, got, want)
				}
			}
			code, out := call(t, s, "POST", "/v1/messages/count_tokens", map[string]any{"model": id,
				"messages": []any{map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": base64.StdEncoding.EncodeToString(factsPNG(t))}},
					map[string]any{"type": "text", "text": "hello"}}}}})
			want := http.StatusOK
			if m.lifecycle.stage == "retired" {
				want = http.StatusNotFound
			}
			if code != want {
				t.Errorf("count_tokens: %d %v, want %d (lifecycle %q)", code, out, want, m.lifecycle.stage)
			}
		})
	}
}
