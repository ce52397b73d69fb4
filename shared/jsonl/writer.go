package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Writer writes one JSON value per line through a buffer. Call Flush at the end.
type Writer struct {
	bw    *bufio.Writer
	enc   *json.Encoder
	lines int
}

// NewWriter buffers writes to w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	// Model output is full of <, > and &: escaping them only makes lines longer.
	enc.SetEscapeHTML(false)
	return &Writer{bw: bw, enc: enc}
}

// Encode writes v as one compact JSON line.
func (w *Writer) Encode(v any) error {
	if err := w.enc.Encode(v); err != nil {
		return fmt.Errorf("jsonl: encode line %d: %w", w.lines+1, err)
	}
	w.lines++
	return nil
}

// ErrNewline: a raw line holds a line break, which would split it in two.
var ErrNewline = errors.New("jsonl: line contains a newline")

// WriteRaw writes an already encoded JSON value as one line.
func (w *Writer) WriteRaw(line []byte) error {
	if bytes.IndexByte(line, '\n') >= 0 {
		return ErrNewline
	}
	if _, err := w.bw.Write(line); err != nil {
		return fmt.Errorf("jsonl: write line %d: %w", w.lines+1, err)
	}
	if err := w.bw.WriteByte('\n'); err != nil {
		return fmt.Errorf("jsonl: write line %d: %w", w.lines+1, err)
	}
	w.lines++
	return nil
}

// Flush writes buffered lines to the underlying writer.
func (w *Writer) Flush() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("jsonl: flush: %w", err)
	}
	return nil
}

// Lines is the number of lines written.
func (w *Writer) Lines() int { return w.lines }
