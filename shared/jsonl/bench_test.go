package jsonl_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/jsonl"
)

// BenchmarkReader reads 100 MB of 2 KB lines: the ceiling the reader puts on ingest.
func BenchmarkReader(b *testing.B) {
	line := append(bytes.Repeat([]byte("x"), 2047), '\n')
	data := bytes.Repeat(line, 50_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := jsonl.NewReader(bytes.NewReader(data), jsonl.Options{})
		n := 0
		for r.Next() {
			n++
		}
		if n != 50_000 || r.Err() != nil {
			b.Fatalf("%d lines, %v", n, r.Err())
		}
	}
}

// BenchmarkWriter encodes 2 KB records.
func BenchmarkWriter(b *testing.B) {
	type rec struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	v := rec{ID: "r0000001", Text: string(bytes.Repeat([]byte("y"), 2000))}
	b.SetBytes(2030)
	w := jsonl.NewWriter(io.Discard)
	for b.Loop() {
		if err := w.Encode(v); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
