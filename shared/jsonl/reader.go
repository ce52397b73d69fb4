// Package jsonl reads and writes JSON Lines as streams. The Reader bounds the
// memory one line may take, skips over-long lines without buffering them and
// reports them as bad lines instead of failing, so one broken record never
// stops a whole output file from being read.
package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

const (
	// DefaultMaxLineBytes bounds one line when Options.MaxLineBytes is 0.
	DefaultMaxLineBytes = 4 << 20
	// DefaultKeepBadLines is how many bad lines a BadLog keeps with details.
	DefaultKeepBadLines = 20

	initialBufferBytes = 64 << 10
	maxMaxLineBytes    = 1 << 30 // Bedrock's whole-file limit; also keeps max+1 from overflowing
	maxEmptyReads      = 100
)

var utf8BOM = []byte("\xef\xbb\xbf")

// Options configure a Reader.
type Options struct {
	// MaxLineBytes is the longest line (without its '\n') returned; longer lines
	// are skipped and reported as bad. 0 means DefaultMaxLineBytes.
	MaxLineBytes int
	// StartOffset is the byte offset in the object the reader's source starts at,
	// when resuming from a checkpoint (the caller opens the object there).
	StartOffset int64
	// StartLine is the number of lines before StartOffset (the Line of the last
	// line consumed), so line numbers continue across a resume.
	StartLine int
	// Bad receives over-long lines; nil gives the reader a log of its own (see Reader.Bad).
	// Sharing one log lets a caller keep a single list of bad lines across files and parse errors.
	Bad *BadLog
}

// BadLine is a line that could not be used.
type BadLine struct {
	Line int `json:"line"`
	// Offset is the byte offset where the line starts.
	Offset int64  `json:"offset"`
	Reason string `json:"reason"`
}

// BadLog counts bad lines and keeps the first few with details. It is not safe
// for concurrent use.
type BadLog struct {
	// Keep is how many bad lines to keep with details: 0 means DefaultKeepBadLines, < 0 none.
	Keep  int
	total int
	first []BadLine
}

// Add records a bad line.
func (l *BadLog) Add(b BadLine) {
	l.total++
	keep := l.Keep
	if keep == 0 {
		keep = DefaultKeepBadLines
	}
	if len(l.first) < keep {
		l.first = append(l.first, b)
	}
}

// Count is the number of bad lines added.
func (l *BadLog) Count() int { return l.total }

// Lines returns a copy of the bad lines kept, in the order they were added.
func (l *BadLog) Lines() []BadLine { return append([]BadLine(nil), l.first...) }

// Reader reads one JSON value per line from a stream. It does not parse JSON:
// it hands out raw lines, and the caller reports lines it cannot parse to a BadLog.
type Reader struct {
	src io.Reader
	max int
	bad *BadLog

	buf        []byte
	start, end int   // unread bytes are buf[start:end]
	off        int64 // object offset of buf[start]
	eof        bool
	err        error

	cur      []byte
	curStart int64
	line     int
	skipped  int
}

// NewReader reads lines from src, which must be positioned at opt.StartOffset.
func NewReader(src io.Reader, opt Options) *Reader {
	maxLine := opt.MaxLineBytes
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	maxLine = min(maxLine, maxMaxLineBytes)
	bad := opt.Bad
	if bad == nil {
		bad = &BadLog{}
	}
	// Start small and grow up to maxLine+1 only when a line needs it, so small
	// files do not pay for the 4 MiB bound.
	return &Reader{
		src:  src,
		max:  maxLine,
		bad:  bad,
		buf:  make([]byte, min(initialBufferBytes, maxLine+1)),
		off:  opt.StartOffset,
		line: opt.StartLine,
	}
}

// Next advances to the next non-blank line. It returns false at the end of the
// stream or on an I/O error (see Err).
func (r *Reader) Next() bool {
	r.cur = nil
	for {
		if i := bytes.IndexByte(r.buf[r.start:r.end], '\n'); i >= 0 {
			line := r.buf[r.start : r.start+i]
			lineStart := r.off
			r.start += i + 1
			r.off += int64(i + 1)
			r.line++
			if r.accept(line, lineStart) {
				return true
			}
			continue
		}
		if r.eof {
			if r.start == r.end {
				return false
			}
			// A final line without '\n' is still a line.
			line := r.buf[r.start:r.end]
			lineStart := r.off
			r.off += int64(r.end - r.start)
			r.start = r.end
			r.line++
			if r.accept(line, lineStart) {
				return true
			}
			continue
		}
		if r.err != nil {
			// Whatever is buffered is a cut-off line: never hand it out as whole.
			return false
		}
		if r.end-r.start > r.max {
			r.skipLong()
			continue
		}
		r.fill()
	}
}

// accept decides whether a complete line is returned; it reports over-long ones.
func (r *Reader) accept(line []byte, lineStart int64) bool {
	if len(line) > r.max {
		// Only reachable when the buffer is larger than max+1 (tiny limits).
		r.reportLong(lineStart)
		return false
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if lineStart == 0 {
		// Editors on Windows start files with a byte order mark; it is not JSON.
		line = bytes.TrimPrefix(line, utf8BOM)
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	r.cur = line
	r.curStart = lineStart
	return true
}

// fill reads more data, compacting or growing the buffer first.
func (r *Reader) fill() {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == len(r.buf) {
		// Full and no newline yet: grow, bounded by max+1 (a line plus its '\n').
		size := min(2*len(r.buf), r.max+1)
		if size <= len(r.buf) {
			size = len(r.buf) + 1
		}
		nb := make([]byte, size)
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				r.eof = true
			} else {
				r.err = err
			}
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}

// skipLong discards an over-long line up to and including its '\n' without
// keeping it, then reports it.
func (r *Reader) skipLong() {
	lineStart := r.off
	r.off += int64(r.end - r.start)
	r.start, r.end = 0, 0
	for {
		if r.eof {
			break
		}
		if r.err != nil {
			return // cut off by an I/O error: Next reports Err
		}
		r.fill()
		if i := bytes.IndexByte(r.buf[r.start:r.end], '\n'); i >= 0 {
			r.start = i + 1
			r.off += int64(i + 1)
			break
		}
		r.off += int64(r.end - r.start)
		r.start, r.end = 0, 0
	}
	r.line++
	r.reportLong(lineStart)
}

func (r *Reader) reportLong(lineStart int64) {
	r.skipped++
	r.bad.Add(BadLine{Line: r.line, Offset: lineStart, Reason: fmt.Sprintf("line longer than %d bytes", r.max)})
}

// Bytes is the current line without its line ending; valid until the next call to Next.
func (r *Reader) Bytes() []byte { return r.cur }

// Line is the 1-based number of the current line in the object (blank and bad lines count).
func (r *Reader) Line() int { return r.line }

// Offset is the object offset just after the current line: resuming there with
// StartLine = Line() continues with the next line.
func (r *Reader) Offset() int64 { return r.off }

// Err is the I/O error that stopped the reader, if any. Bad data is never an error.
func (r *Reader) Err() error { return r.err }

// Skipped is how many over-long lines this reader skipped.
func (r *Reader) Skipped() int { return r.skipped }

// Bad is the log the reader reports over-long lines to.
func (r *Reader) Bad() *BadLog { return r.bad }

// LineStart is the object offset where the current line starts.
func (r *Reader) LineStart() int64 { return r.curStart }

// MarkBad reports the current line as bad, for lines the caller cannot use.
func (r *Reader) MarkBad(reason string) {
	r.bad.Add(BadLine{Line: r.line, Offset: r.curStart, Reason: reason})
}
