package content

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/image/webp"
)

func TestWebPFixtureDecodes(t *testing.T) {
	img, err := webp.Decode(bytes.NewReader(mkWebP(64, 48, [4]uint8{255, 10, 200, 30})))
	if err != nil {
		t.Fatalf("hand-built VP8L does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 48 {
		t.Fatalf("bounds %v", b)
	}
	r, g, bl, a := img.At(5, 5).RGBA()
	if r>>8 != 10 || g>>8 != 200 || bl>>8 != 30 || a>>8 != 255 {
		t.Fatalf("pixel %d %d %d %d", r>>8, g>>8, bl>>8, a>>8)
	}
}

func TestInspect(t *testing.T) {
	pdf3 := mkPDF(3, 0, "")
	cases := []struct {
		name, declared, hint string
		data                 []byte
		want                 Info
	}{
		{"png", PNG, "", mkPNG(t, 64, 48), Info{Format: PNG, Width: 64, Height: 48}},
		{"png undeclared", "", "", mkPNG(t, 3, 2), Info{Format: PNG, Width: 3, Height: 2}},
		{"jpeg", JPEG, "", mkJPEG(t, 40, 30), Info{Format: JPEG, Width: 40, Height: 30}},
		{"gif", GIF, "", mkGIF(t, 17, 9), Info{Format: GIF, Width: 17, Height: 9}},
		{"webp", WEBP, "", mkWebP(300, 200, [4]uint8{255, 1, 2, 3}), Info{Format: WEBP, Width: 300, Height: 200}},
		{"pdf", PDF, "", pdf3, Info{Format: PDF, Pages: 3}},
		{"docx", DOCX, "", mkOffice(t, DOCX), Info{Format: DOCX}},
		{"xlsx undeclared", "", "", mkOffice(t, XLSX), Info{Format: XLSX}},
		{"doc", DOC, "", mkOLE2("WordDocument"), Info{Format: DOC}},
		{"xls", XLS, "", mkOLE2("Workbook"), Info{Format: XLS}},
		{"csv declared", CSV, "", []byte("a,b\n1,2\n"), Info{Format: CSV, Runes: 8}},
		{"md by name", "", "s3://b/u/notes.md", []byte("# Title\nÄpfel"), Info{Format: MD, Runes: 13}},
		{"txt default", "", "", []byte("héllo"), Info{Format: TXT, Runes: 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// one byte per read: every window and carry boundary is exercised
			got, err := inspect(iotest.OneByteReader(bytes.NewReader(c.data)), c.declared, c.hint)
			if err != nil {
				t.Fatal(err)
			}
			c.want.Bytes = int64(len(c.data))
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestInspectRefuses(t *testing.T) {
	png := mkPNG(t, 8, 8)
	jpg := mkJPEG(t, 8, 8)
	corrupt := append([]byte{}, png...)
	copy(corrupt[12:16], "XXXX") // IHDR renamed
	cases := []struct {
		name, declared string
		data           []byte
		want           string
	}{
		{"corrupt png", PNG, corrupt, "not a decodable png image"},
		{"truncated png", PNG, png[:len(png)-20], "truncated png"},
		{"truncated jpeg", JPEG, jpg[:len(jpg)-40], "truncated jpeg"},
		{"truncated webp", WEBP, mkWebP(4, 4, [4]uint8{})[:20], "webp"},
		{"header only png", PNG, png[:33], "truncated png"},
		{"jpeg named png", PNG, jpg, "media type image/png is contradicted by the bytes, which are jpeg"},
		{"text named pdf", PDF, []byte("hello"), "contradicted by the bytes, which are plain text"},
		{"xlsx named docx", DOCX, mkOffice(t, XLSX), "contradicted by the bytes, which are xlsx"},
		{"xls named doc", DOC, mkOLE2("Workbook"), "contradicted by the bytes, which are xls"},
		{"plain zip", "", mkZipPlain(t), "not a DOCX or XLSX"},
		{"truncated pdf", PDF, mkPDF(1, 0, "")[:200], "truncated PDF"},
		{"encrypted pdf", PDF, mkPDF(1, 0, "/Encrypt 9 0 R "), "encrypted PDF"},
		{"binary", "", []byte{0, 1, 2, 3, 0xff}, "not a supported image or document format"},
		{"bad utf8 text", CSV, append([]byte(strings.Repeat("a", 70000)), 0xff, 0xfe), "not valid UTF-8"},
		{"empty", "", nil, "is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := inspect(bytes.NewReader(c.data), c.declared, "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func mkZipPlain(t *testing.T) []byte {
	var b bytes.Buffer
	b.WriteString("PK\x03\x04")
	b.Write(make([]byte, 100))
	return b.Bytes()
}

func TestPDFPagesAcrossReadBoundaries(t *testing.T) {
	// A /Count split by every possible read boundary still reads 120.
	p := mkPDF(120, 0, "")
	for _, chunk := range []int{1, 7, 31, 32, 33, 4096} {
		got, err := inspect(&chunkReader{p: p, n: chunk}, PDF, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.Pages != 120 {
			t.Fatalf("chunk %d: pages %d", chunk, got.Pages)
		}
	}
}

func TestPDFPagesInObjectStreams(t *testing.T) {
	// The page tree is compressed inside a /Type /ObjStm stream: counted from
	// the decompressed objects, across every read boundary.
	for _, pages := range []int{1, 7, 120} {
		p := mkPDFObjStm(pages, 0)
		for _, chunk := range []int{1, 31, 33, 4096, len(p)} {
			got, err := inspect(&chunkReader{p: p, n: chunk}, PDF, "")
			if err != nil {
				t.Fatalf("%d pages, chunk %d: %v", pages, chunk, err)
			}
			if got.Pages != pages {
				t.Fatalf("%d pages, chunk %d: counted %d", pages, chunk, got.Pages)
			}
		}
	}
}

func TestPDFObjectStreamPastCapRefused(t *testing.T) {
	// A small object stream that inflates past the cap (a zip bomb) is refused
	// with the limit named, not inflated into memory.
	p := mkPDFObjStm(2, objStmLimit+1)
	if len(p) > 1<<20 {
		t.Fatalf("fixture is %d bytes; it should be a small bomb", len(p))
	}
	_, err := inspect(bytes.NewReader(p), PDF, "")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprint(objStmLimit)) || !strings.Contains(err.Error(), "object stream") {
		t.Fatalf("got %v", err)
	}
}

type chunkReader struct {
	p []byte
	n int
}

func (c *chunkReader) Read(b []byte) (int, error) {
	if len(c.p) == 0 {
		return 0, ioEOF
	}
	n := copy(b[:min(len(b), c.n)], c.p)
	c.p = c.p[n:]
	return n, nil
}

var ioEOF = io.EOF
