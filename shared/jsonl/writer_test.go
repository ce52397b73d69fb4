package jsonl_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/jsonl"
)

func TestWriter(t *testing.T) {
	type rec struct {
		ID   string          `json:"id"`
		Text string          `json:"text,omitempty"`
		Raw  json.RawMessage `json:"raw,omitempty"`
	}
	tests := []struct {
		name string
		vals []any
		want string
	}{
		{name: "nothing", want: ""},
		{name: "one per line", vals: []any{rec{ID: "a"}, rec{ID: "b"}}, want: "{\"id\":\"a\"}\n{\"id\":\"b\"}\n"},
		{name: "newlines in strings are escaped", vals: []any{rec{ID: "a", Text: "x\ny"}}, want: "{\"id\":\"a\",\"text\":\"x\\ny\"}\n"},
		{name: "html is not escaped", vals: []any{rec{ID: "<a&b>"}}, want: "{\"id\":\"<a&b>\"}\n"},
		{name: "raw json is compacted", vals: []any{rec{ID: "a", Raw: json.RawMessage("{\n  \"k\": 1\n}")}}, want: "{\"id\":\"a\",\"raw\":{\"k\":1}}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := jsonl.NewWriter(&buf)
			for _, v := range tt.vals {
				if err := w.Encode(v); err != nil {
					t.Fatal(err)
				}
			}
			if buf.Len() != 0 && len(tt.vals) > 0 && len(tt.want) < 64<<10 {
				t.Fatal("writer did not buffer")
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want {
				t.Fatalf("got %q, want %q", buf.String(), tt.want)
			}
			if w.Lines() != len(tt.vals) {
				t.Fatalf("Lines = %d, want %d", w.Lines(), len(tt.vals))
			}
			// What the writer writes, the reader reads back line for line.
			r := jsonl.NewReader(&buf, jsonl.Options{})
			n := 0
			for r.Next() {
				if !json.Valid(r.Bytes()) {
					t.Fatalf("line %d is not valid JSON: %q", r.Line(), r.Bytes())
				}
				n++
			}
			if n != len(tt.vals) {
				t.Fatalf("read back %d lines, want %d", n, len(tt.vals))
			}
		})
	}
}

func TestWriterRaw(t *testing.T) {
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := w.WriteRaw([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRaw([]byte("{\n}")); !errors.Is(err, jsonl.ErrNewline) {
		t.Fatalf("WriteRaw with a newline = %v, want ErrNewline", err)
	}
	if err := w.Encode(func() {}); err == nil {
		t.Fatal("Encode(func) succeeded")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "{\"a\":1}\n" || w.Lines() != 1 {
		t.Fatalf("got %q (%d lines)", buf.String(), w.Lines())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterFlushError(t *testing.T) {
	w := jsonl.NewWriter(failWriter{})
	if err := w.Encode(map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err == nil {
		t.Fatal("Flush to a failing writer succeeded")
	}
}
