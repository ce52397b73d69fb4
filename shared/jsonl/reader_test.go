package jsonl_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpbatch/mcpbatch/shared/jsonl"
)

// line is what a reader handed out, for comparisons.
type line struct {
	Num   int
	Text  string
	Start int64
	End   int64
}

// readAll drains a reader.
func readAll(r *jsonl.Reader) []line {
	var out []line
	for r.Next() {
		out = append(out, line{Num: r.Line(), Text: string(r.Bytes()), Start: r.LineStart(), End: r.Offset()})
	}
	return out
}

// reference is the obvious in-memory implementation the streaming reader must match.
func reference(data []byte, maxLine int, startOff int64, startLine int) (lines []line, bad []jsonl.BadLine) {
	num := startLine
	pos := 0
	for pos < len(data) {
		end := bytes.IndexByte(data[pos:], '\n')
		next := 0
		if end < 0 {
			end = len(data)
			next = len(data)
		} else {
			end += pos
			next = end + 1
		}
		seg := data[pos:end]
		num++
		start := startOff + int64(pos)
		text := bytes.TrimSuffix(seg, []byte("\r"))
		if start == 0 {
			text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
		}
		switch {
		case len(seg) > maxLine:
			bad = append(bad, jsonl.BadLine{Line: num, Offset: start, Reason: fmt.Sprintf("line longer than %d bytes", maxLine)})
		case len(bytes.TrimSpace(text)) == 0:
		default:
			lines = append(lines, line{Num: num, Text: string(text), Start: start, End: startOff + int64(next)})
		}
		pos = next
	}
	return lines, bad
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string // texts in order
		nums    []int
		badNums []int
	}{
		{name: "empty", in: "", want: nil},
		{name: "one line with newline", in: `{"a":1}` + "\n", want: []string{`{"a":1}`}, nums: []int{1}},
		{name: "final line without newline", in: "{\"a\":1}\n{\"b\":2}", want: []string{`{"a":1}`, `{"b":2}`}, nums: []int{1, 2}},
		{name: "blank lines skipped but numbered", in: "\n\n{}\n  \t\n\r\n[]\n", want: []string{"{}", "[]"}, nums: []int{3, 6}},
		{name: "crlf", in: "{}\r\n[]\r\n", want: []string{"{}", "[]"}, nums: []int{1, 2}},
		{name: "invalid json still returned", in: "{\"a\":\n", want: []string{`{"a":`}, nums: []int{1}},
		{name: "over-long line skipped", in: "ok\n" + long + "\nfine\n", max: 10, want: []string{"ok", "fine"}, nums: []int{1, 3}, badNums: []int{2}},
		{name: "over-long final line without newline", in: "ok\n" + long, max: 10, want: []string{"ok"}, nums: []int{1}, badNums: []int{2}},
		{name: "line exactly at the limit", in: "0123456789\n01234567890\n", max: 10, want: []string{"0123456789"}, nums: []int{1}, badNums: []int{2}},
		{name: "several over-long lines in a row", in: long + "\n" + long + "\n" + long + "\nz", max: 5, want: []string{"z"}, nums: []int{4}, badNums: []int{1, 2, 3}},
		{name: "byte order mark", in: "\xef\xbb\xbf{}\n\xef\xbb\xbf[]\n", want: []string{"{}", "\xef\xbb\xbf[]"}, nums: []int{1, 2}},
		{name: "binary junk", in: "\x00\xff\xfe\n{}\n", want: []string{"\x00\xff\xfe", "{}"}, nums: []int{1, 2}},
	}
	sources := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"half reads", iotest.HalfReader},
		{"data with EOF", iotest.DataErrReader},
	}
	for _, tt := range tests {
		for _, src := range sources {
			t.Run(tt.name+"/"+src.name, func(t *testing.T) {
				max := tt.max
				if max == 0 {
					max = jsonl.DefaultMaxLineBytes
				}
				r := jsonl.NewReader(src.wrap(strings.NewReader(tt.in)), jsonl.Options{MaxLineBytes: tt.max})
				got := readAll(r)
				if err := r.Err(); err != nil {
					t.Fatalf("Err = %v", err)
				}
				var texts []string
				var nums []int
				for _, l := range got {
					texts = append(texts, l.Text)
					nums = append(nums, l.Num)
				}
				if fmt.Sprint(texts) != fmt.Sprint(tt.want) || fmt.Sprint(nums) != fmt.Sprint(tt.nums) {
					t.Fatalf("lines = %q %v, want %q %v", texts, nums, tt.want, tt.nums)
				}
				var badNums []int
				for _, b := range r.Bad().Lines() {
					badNums = append(badNums, b.Line)
				}
				if fmt.Sprint(badNums) != fmt.Sprint(tt.badNums) || r.Skipped() != len(tt.badNums) {
					t.Fatalf("bad = %v (skipped %d), want %v", badNums, r.Skipped(), tt.badNums)
				}
				wantLines, wantBad := reference([]byte(tt.in), max, 0, 0)
				if fmt.Sprint(got) != fmt.Sprint(wantLines) || fmt.Sprint(r.Bad().Lines()) != fmt.Sprint(wantBad) {
					t.Fatalf("differs from reference:\n got %v %v\nwant %v %v", got, r.Bad().Lines(), wantLines, wantBad)
				}
				if r.Offset() != int64(len(tt.in)) {
					t.Fatalf("final Offset = %d, want %d", r.Offset(), len(tt.in))
				}
			})
		}
	}
}

func TestReaderResume(t *testing.T) {
	data := []byte("{\"a\":1}\n\n" + strings.Repeat("y", 50) + "\n{\"b\":2}\r\n{\"c\":3}\n{\"d\":4}")
	const max = 20
	all, _ := reference(data, max, 0, 0)
	for stopAfter := 0; stopAfter <= len(all); stopAfter++ {
		t.Run(fmt.Sprintf("after %d lines", stopAfter), func(t *testing.T) {
			r := jsonl.NewReader(bytes.NewReader(data), jsonl.Options{MaxLineBytes: max})
			var off int64
			var num int
			for range stopAfter {
				if !r.Next() {
					t.Fatal("ran out of lines")
				}
				off, num = r.Offset(), r.Line()
			}
			r2 := jsonl.NewReader(bytes.NewReader(data[off:]), jsonl.Options{MaxLineBytes: max, StartOffset: off, StartLine: num})
			rest := readAll(r2)
			if fmt.Sprint(rest) != fmt.Sprint(all[stopAfter:]) {
				t.Fatalf("resumed = %v, want %v", rest, all[stopAfter:])
			}
		})
	}
}

func TestReaderSharedBadLog(t *testing.T) {
	log := &jsonl.BadLog{Keep: 2}
	r := jsonl.NewReader(strings.NewReader("aaaaaaaa\nok\nbbbbbbbbbb\ncccccccccc\n"), jsonl.Options{MaxLineBytes: 4, Bad: log})
	for r.Next() {
		r.MarkBad("not json")
	}
	if log.Count() != 4 {
		t.Fatalf("Count = %d, want 4", log.Count())
	}
	got := log.Lines()
	want := []jsonl.BadLine{
		{Line: 1, Offset: 0, Reason: "line longer than 4 bytes"},
		{Line: 2, Offset: 9, Reason: "not json"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Lines = %v, want %v", got, want)
	}
	if r.Skipped() != 3 {
		t.Fatalf("Skipped = %d, want 3", r.Skipped())
	}
}

func TestReaderIOError(t *testing.T) {
	boom := errors.New("connection reset")
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{name: "complete lines before the error are returned", in: "{}\n[]\n", want: []string{"{}", "[]"}},
		{name: "a cut-off final line is not returned", in: "{}\n{\"a\":", want: []string{"{}"}},
		{name: "error inside an over-long line", in: "{}\n" + strings.Repeat("z", 100), max: 10, want: []string{"{}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := io.MultiReader(strings.NewReader(tt.in), iotest.ErrReader(boom))
			r := jsonl.NewReader(iotest.HalfReader(src), jsonl.Options{MaxLineBytes: tt.max})
			var got []string
			for r.Next() {
				got = append(got, string(r.Bytes()))
			}
			if !errors.Is(r.Err(), boom) {
				t.Fatalf("Err = %v, want %v", r.Err(), boom)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("lines = %q, want %q", got, tt.want)
			}
			if r.Next() {
				t.Fatal("Next after an error returned true")
			}
		})
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	r := jsonl.NewReader(emptyReader{}, jsonl.Options{})
	if r.Next() {
		t.Fatal("Next = true on a reader that never returns data")
	}
	if !errors.Is(r.Err(), io.ErrNoProgress) {
		t.Fatalf("Err = %v, want io.ErrNoProgress", r.Err())
	}
}

func TestReaderLongLineBufferStaysBounded(t *testing.T) {
	// A 50 MB line with a 1 KiB limit must stream past without being held.
	const size = 50 << 20
	src := io.MultiReader(strings.NewReader("{}\n"), io.LimitReader(repeatReader('x'), size), strings.NewReader("\n[]\n"))
	r := jsonl.NewReader(src, jsonl.Options{MaxLineBytes: 1024})
	got := readAll(r)
	if len(got) != 2 || got[0].Text != "{}" || got[1].Text != "[]" || got[1].Num != 3 {
		t.Fatalf("lines = %v", got)
	}
	if r.Offset() != 3+size+1+3 {
		t.Fatalf("Offset = %d", r.Offset())
	}
}

type repeatReader byte

func (c repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n{\"b\":"), 8, 3)
	f.Add([]byte("\r\n\r\n"), 1, 0)
	f.Add([]byte(strings.Repeat("x", 300)+"\nok"), 16, 1)
	f.Add([]byte(""), 0, 0)
	f.Add([]byte("\xef\xbb\xbf\n{}"), 3, 0)
	f.Fuzz(func(t *testing.T, data []byte, maxLine int, stopAfter int) {
		maxLine = 1 + abs(maxLine)%64
		r := jsonl.NewReader(iotest.HalfReader(bytes.NewReader(data)), jsonl.Options{MaxLineBytes: maxLine})
		got := readAll(r)
		if r.Err() != nil {
			t.Fatalf("Err = %v", r.Err())
		}
		want, wantBad := reference(data, maxLine, 0, 0)
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(r.Bad().Lines()) != fmt.Sprint(firstN(wantBad, jsonl.DefaultKeepBadLines)) || r.Bad().Count() != len(wantBad) {
			t.Fatalf("differs from reference:\n got %v %v\nwant %v %v", got, r.Bad().Lines(), want, wantBad)
		}
		if r.Offset() != int64(len(data)) {
			t.Fatalf("final Offset = %d, want %d", r.Offset(), len(data))
		}
		for _, l := range got {
			if len(l.Text) > maxLine || strings.ContainsRune(l.Text, '\n') {
				t.Fatalf("line %d breaks the bounds: %q", l.Num, l.Text)
			}
		}
		// Resuming after any returned line gives the rest.
		if len(got) > 0 {
			i := abs(stopAfter) % len(got)
			off := got[i].End
			r2 := jsonl.NewReader(bytes.NewReader(data[off:]), jsonl.Options{MaxLineBytes: maxLine, StartOffset: off, StartLine: got[i].Num})
			if rest := readAll(r2); fmt.Sprint(rest) != fmt.Sprint(got[i+1:]) {
				t.Fatalf("resume after line %d = %v, want %v", got[i].Num, rest, got[i+1:])
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // math.MinInt
			return 0
		}
		return -n
	}
	return n
}

func firstN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}
