package content

// Fixtures are generated here, never committed: small images through the
// standard encoders, a WebP from a hand-built VP8L bitstream, PDFs written
// object by object with a correct xref table, DOCX/XLSX zips, and OLE2
// stand-ins carrying the directory names Word and Excel write.

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func pattern(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.NRGBA{uint8(x * 255 / max(w, 1)), uint8(y * 255 / max(h, 1)), 128, 255})
		}
	}
	return img
}

func mkPNG(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, pattern(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// noisePNG is an incompressible PNG of about n bytes.
func noisePNG(t testing.TB, n int) []byte {
	side := 1
	for side*side*3 < n {
		side++
	}
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.Uint32())
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// padPNG inserts a private ancillary chunk of n bytes before IEND: a valid PNG
// of any size without encoding that many pixels.
func padPNG(p []byte, n int) []byte {
	iend := len(p) - 12
	var chunk bytes.Buffer
	binary.Write(&chunk, binary.BigEndian, uint32(n))
	body := append([]byte("prVt"), make([]byte, n)...)
	chunk.Write(body)
	binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(body))
	out := append([]byte{}, p[:iend]...)
	out = append(out, chunk.Bytes()...)
	return append(out, p[iend:]...)
}

func mkJPEG(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, pattern(w, h), &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mkGIF(t testing.TB, w, h int) []byte {
	pal := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	for i := range pal.Pix {
		pal.Pix[i] = uint8(i % 2)
	}
	var b bytes.Buffer
	if err := gif.Encode(&b, pal, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type bitWriter struct {
	buf  []byte
	acc  uint64
	nacc uint
}

func (b *bitWriter) put(v uint64, n uint) {
	b.acc |= v << b.nacc
	b.nacc += n
	for b.nacc >= 8 {
		b.buf = append(b.buf, byte(b.acc))
		b.acc >>= 8
		b.nacc -= 8
	}
}

func (b *bitWriter) bytes() []byte {
	if b.nacc > 0 {
		b.buf = append(b.buf, byte(b.acc))
	}
	return b.buf
}

// mkWebP is a lossless WebP of one colour: every prefix code is a "simple"
// code with a single symbol, so each pixel takes zero bits and any size is a
// few bytes (WebP Lossless Bitstream Specification, RFC 9649 §3.7.2.1.1).
func mkWebP(w, h int, argb [4]uint8) []byte {
	var bw bitWriter
	bw.put(0x2f, 8)
	bw.put(uint64(w-1), 14)
	bw.put(uint64(h-1), 14)
	bw.put(0, 1)                                                      // alpha hint
	bw.put(0, 3)                                                      // version
	bw.put(0, 1)                                                      // no transform
	bw.put(0, 1)                                                      // no colour cache
	bw.put(0, 1)                                                      // no meta prefix codes
	for _, sym := range []uint8{argb[2], argb[1], argb[3], argb[0]} { // green, red, blue, alpha
		bw.put(1, 1) // simple code
		bw.put(0, 1) // one symbol
		bw.put(1, 1) // 8-bit symbol
		bw.put(uint64(sym), 8)
	}
	bw.put(1, 1) // distance: simple, one symbol, 1-bit symbol 0
	bw.put(0, 1)
	bw.put(0, 1)
	bw.put(0, 1)
	data := bw.bytes()
	var chunk bytes.Buffer
	chunk.WriteString("VP8L")
	binary.Write(&chunk, binary.LittleEndian, uint32(len(data)))
	chunk.Write(data)
	if len(data)%2 == 1 {
		chunk.WriteByte(0)
	}
	var out bytes.Buffer
	out.WriteString("RIFF")
	binary.Write(&out, binary.LittleEndian, uint32(4+chunk.Len()))
	out.WriteString("WEBP")
	out.Write(chunk.Bytes())
	return out.Bytes()
}

// mkPDF writes a PDF of n pages, each showing a line of text; filler bytes go
// into the first page's content stream (as a PDF comment) to reach a size.
func mkPDF(pages, filler int, extraTrailer string) []byte {
	var b bytes.Buffer
	var offs []int
	obj := func(body string) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), body)
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i := 0; i < pages; i++ {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		content := fmt.Sprintf("BT /F1 24 Tf 72 700 Td (Invoice page %d) Tj ET\n", i+1)
		if i == 0 && filler > 0 {
			content += "%" + strings.Repeat("x", filler) + "\n"
		}
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, extraTrailer, xref)
	return b.Bytes()
}

// mkPDFObjStm writes a PDF 1.5 whose catalog, page tree and pages all live in
// one FlateDecode object stream (/Type /ObjStm), indexed by a compressed
// cross-reference stream (/Type /XRef), as Acrobat and most producers save
// since 2003. filler spaces are appended to the stream's decompressed body.
func mkPDFObjStm(pages, filler int) []byte {
	// Objects 1 (catalog), 2 (pages), 3.. (page) go in stream object n+3;
	// the xref stream is object n+4.
	var body, index bytes.Buffer
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>"}
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 3+i)
	}
	objs = append(objs, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages))
	for range pages {
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>")
	}
	for i, o := range objs {
		fmt.Fprintf(&index, "%d %d ", i+1, body.Len())
		body.WriteString(o + "\n")
	}
	body.WriteString(strings.Repeat(" ", filler))
	deflate := func(p []byte) []byte {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(p)
		w.Close()
		return z.Bytes()
	}
	first := index.Len()
	packed := deflate(append(index.Bytes(), body.Bytes()...))

	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	stm, xrefNum := len(objs)+1, len(objs)+2
	stmOff := b.Len()
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>\nstream\n", stm, len(objs), first, len(packed))
	b.Write(packed)
	b.WriteString("\nendstream\nendobj\n")
	xrefOff := b.Len()
	var rows bytes.Buffer // /W [1 4 2]
	row := func(typ byte, f2 uint32, f3 uint16) {
		rows.WriteByte(typ)
		binary.Write(&rows, binary.BigEndian, f2)
		binary.Write(&rows, binary.BigEndian, f3)
	}
	row(0, 0, 65535)
	for i := range objs {
		row(2, uint32(stm), uint16(i))
	}
	row(1, uint32(stmOff), 0)
	row(1, uint32(xrefOff), 0)
	xref := deflate(rows.Bytes())
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n", xrefNum, xrefNum+1, len(xref))
	b.Write(xref)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefOff)
	return b.Bytes()
}

func mkOffice(t testing.TB, kind string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	files := map[string]string{"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`}
	if kind == DOCX {
		files["word/document.xml"] = `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Invoice 42</w:t></w:r></w:p></w:body></w:document>`
	} else {
		files["xl/workbook.xml"] = `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"/>`
	}
	for _, name := range []string{"[Content_Types].xml", "word/document.xml", "xl/workbook.xml"} {
		body, ok := files[name]
		if !ok {
			continue
		}
		f, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, body)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// mkOLE2 is an OLE2 header followed by a directory sector naming the stream
// Word or Excel writes ("WordDocument", "Workbook"): enough for detection,
// not a document a reader would open.
func mkOLE2(stream string) []byte {
	b := make([]byte, 1024)
	copy(b, []byte{0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1})
	copy(b[512:], utf16le("Root Entry"))
	copy(b[512+128:], utf16le(stream))
	return b
}

func b64(p []byte) string { return base64.StdEncoding.EncodeToString(p) }

// memOpener serves objects from memory and counts opens.
type memOpener struct {
	mu    sync.Mutex
	objs  map[string][]byte
	opens []string
}

func (m *memOpener) Open(_ context.Context, uri string) (io.ReadCloser, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opens = append(m.opens, uri)
	p, ok := m.objs[uri]
	if !ok {
		return nil, 0, notFound{}
	}
	return io.NopCloser(bytes.NewReader(p)), int64(len(p)), nil
}

type notFound struct{}

func (notFound) Error() string     { return "NoSuchKey: The specified key does not exist." }
func (notFound) ErrorCode() string { return "NoSuchKey" }
