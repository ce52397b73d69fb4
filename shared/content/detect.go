package content

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"unicode/utf8"
)

// Formats, as Converse names them.
const (
	PNG  = "png"
	JPEG = "jpeg"
	GIF  = "gif"
	WEBP = "webp"
	PDF  = "pdf"
	CSV  = "csv"
	DOC  = "doc"
	DOCX = "docx"
	XLS  = "xls"
	XLSX = "xlsx"
	HTML = "html"
	TXT  = "txt"
	MD   = "md"
)

var mediaTypes = map[string]string{
	PNG: "image/png", JPEG: "image/jpeg", GIF: "image/gif", WEBP: "image/webp",
	PDF: "application/pdf", CSV: "text/csv", DOC: "application/msword",
	DOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	XLS:  "application/vnd.ms-excel",
	XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	HTML: "text/html", TXT: "text/plain", MD: "text/markdown",
}

var formatOf = func() map[string]string {
	m := map[string]string{"image/jpg": JPEG, "text/x-markdown": MD}
	for f, mt := range mediaTypes {
		m[mt] = f
	}
	return m
}()

// MediaType is the media type of a format ("" for an unknown one).
func MediaType(format string) string { return mediaTypes[format] }

// FormatOf is the format of a media type ("" for an unknown one).
func FormatOf(mediaType string) string { return formatOf[mediaType] }

func isImage(f string) bool { return f == PNG || f == JPEG || f == GIF || f == WEBP }
func isText(f string) bool  { return f == CSV || f == HTML || f == TXT || f == MD }

// Info is what the bytes of an image or document are.
type Info struct {
	Format        string
	Bytes         int64
	Width, Height int // images
	Pages         int // PDFs; 0 when the page tree is in a stream that cannot be inflated
	Runes         int // text documents
	// Version pins an s3:// part to what was checked (see Pinner); empty
	// when its store cannot pin.
	Version string
}

// inspectLimit caps what is read of one part: nothing a service accepts is
// larger, and a lying Opener must not make us read forever.
const inspectLimit = 64 << 20

// objStmLimit caps what the compressed object streams of one PDF may inflate
// to, all together: page objects are ~100 bytes each, so 16 MiB holds far more
// pages than any service accepts, and a zip bomb stops here.
const objStmLimit = 16 << 20

// inspect reads a whole part once, streaming, and says what it is. declared is
// the format the caller named ("" when none); hint is a file name for text
// formats that bytes cannot tell apart.
func inspect(r io.Reader, declared, hint string) (Info, error) {
	t := &tap{r: io.LimitReader(r, inspectLimit+1)}
	br := bufio.NewReaderSize(t, 64<<10)
	head, err := br.Peek(64 << 10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return Info{}, fmt.Errorf("cannot be read: %w", err)
	}
	if len(head) == 0 {
		return Info{}, errors.New("is empty")
	}
	detected := sniff(head)
	info := Info{}
	switch {
	case detected == "":
		if !utf8.Valid(trimPartialRune(head)) || bytes.IndexByte(head, 0) >= 0 {
			return Info{}, errors.New("bytes are not a supported image or document format (not PNG, JPEG, GIF, WebP, PDF, DOC/XLS, DOCX/XLSX or UTF-8 text)")
		}
		detected = TXT
		if isText(declared) {
			detected = declared
		} else if f := textFormatFromName(hint); f != "" && declared == "" {
			detected = f
		}
	case detected == "ole2", detected == "zip":
		detected = "" // which Office format is decided by the names inside
	}
	if declared != "" && detected != "" && declared != detected {
		return Info{}, fmt.Errorf("media type %s is contradicted by the bytes, which are %s", MediaType(declared), describe(detected))
	}
	info.Format = detected

	switch {
	case isImage(detected):
		w, h, err := imageSize(br, detected)
		var fe *formatError
		switch {
		case errors.As(err, &fe):
			return Info{}, fmt.Errorf("is not a decodable %s image: %v", detected, err)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return Info{}, fmt.Errorf("is a truncated %s image (it ends inside its header)", detected)
		case err != nil: // corrupt base64, a stream cut short: not the image's fault
			return Info{}, fmt.Errorf("cannot be read: %w", err)
		}
		info.Width, info.Height = w, h
	case detected == PDF:
		t.scan = newPDFScan()
		t.feedBuffered(br)
	case detected == DOCX || detected == XLSX || sniffZip(head):
		t.scan = newNeedleScan("[Content_Types].xml", "word/", "xl/")
		t.feedBuffered(br)
	case sniffOLE2(head):
		t.scan = newNeedleScan(utf16le("WordDocument"), utf16le("Workbook"), utf16le("Book"))
		t.feedBuffered(br)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return Info{}, fmt.Errorf("cannot be read: %w", err)
	}
	if t.n > inspectLimit {
		return Info{}, fmt.Errorf("is larger than %d bytes", inspectLimit)
	}
	if t.scan != nil {
		t.scan.flush()
	}
	info.Bytes = t.n

	switch {
	case isImage(detected):
		if err := checkImageTail(detected, t.tail(), t.n, head); err != nil {
			return Info{}, err
		}
	case detected == PDF:
		ps := t.scan.(*pdfScan)
		if !bytes.Contains(t.tail(), []byte("%%EOF")) {
			return Info{}, errors.New("is a truncated PDF (no %%EOF trailer at its end)")
		}
		if ps.err != nil {
			return Info{}, ps.err
		}
		if ps.encrypted {
			return Info{}, errors.New("is an encrypted PDF; the services accept only unencrypted PDFs")
		}
		info.Pages = ps.pages()
	case sniffZip(head):
		ns := t.scan.(*needleScan)
		switch {
		case ns.found[0] && ns.found[1]:
			info.Format = DOCX
		case ns.found[0] && ns.found[2]:
			info.Format = XLSX
		default:
			return Info{}, errors.New("is a ZIP archive but not a DOCX or XLSX document (no [Content_Types].xml with word/ or xl/ parts)")
		}
	case sniffOLE2(head):
		ns := t.scan.(*needleScan)
		switch {
		case ns.found[0]:
			info.Format = DOC
		case ns.found[1] || ns.found[2]:
			info.Format = XLS
		default:
			return Info{}, errors.New("is an OLE2 compound file but neither a Word (.doc) nor an Excel (.xls) document")
		}
	case isText(detected):
		if !t.utf8OK || len(t.carry) > 0 {
			return Info{}, errors.New("is not valid UTF-8 text")
		}
		info.Runes = t.runes
	}
	if declared != "" && info.Format != declared && !(isText(declared) && isText(info.Format)) {
		return Info{}, fmt.Errorf("media type %s is contradicted by the bytes, which are %s", MediaType(declared), describe(info.Format))
	}
	return info, nil
}

func describe(f string) string {
	switch f {
	case "":
		return "unrecognised"
	case TXT:
		return "plain text"
	}
	return f
}

func sniff(h []byte) string {
	switch {
	case bytes.HasPrefix(h, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(h, []byte{0xff, 0xd8, 0xff}):
		return JPEG
	case bytes.HasPrefix(h, []byte("GIF87a")), bytes.HasPrefix(h, []byte("GIF89a")):
		return GIF
	case len(h) >= 12 && string(h[:4]) == "RIFF" && string(h[8:12]) == "WEBP":
		return WEBP
	case bytes.HasPrefix(h, []byte("%PDF-")):
		return PDF
	case sniffOLE2(h):
		return "ole2"
	case sniffZip(h):
		return "zip"
	}
	return ""
}

func sniffOLE2(h []byte) bool {
	return bytes.HasPrefix(h, []byte{0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1})
}
func sniffZip(h []byte) bool { return bytes.HasPrefix(h, []byte("PK\x03\x04")) }

func textFormatFromName(name string) string {
	switch path.Ext(name) {
	case ".csv":
		return CSV
	case ".html", ".htm":
		return HTML
	case ".md", ".markdown":
		return MD
	case ".txt":
		return TXT
	}
	return ""
}

func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

// checkImageTail finds truncation that a header-only decode cannot: each format
// ends with a fixed trailer (or, for WebP, declares its length up front).
func checkImageTail(f string, tail []byte, n int64, head []byte) error {
	ok := true
	switch f {
	case PNG:
		ok = bytes.HasSuffix(tail, []byte("IEND\xaeB`\x82"))
	case JPEG:
		ok = bytes.HasSuffix(bytes.TrimRight(tail, "\x00"), []byte{0xff, 0xd9})
	case GIF:
		ok = bytes.HasSuffix(tail, []byte{0x3b})
	case WEBP:
		riff := int64(head[4]) | int64(head[5])<<8 | int64(head[6])<<16 | int64(head[7])<<24
		ok = riff+8 == n || riff+8 == n-1 // a pad byte may follow an odd chunk
	}
	if !ok {
		return fmt.Errorf("is a truncated %s image (its end is missing)", f)
	}
	return nil
}

func utf16le(s string) string {
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, s[i], 0)
	}
	return string(b)
}

// tap counts, keeps the last bytes, checks UTF-8 and feeds a scanner with
// everything read through it.
type tap struct {
	r      io.Reader
	n      int64
	last   [32]byte
	nlast  int
	scan   scanner
	utf8OK bool
	runes  int
	carry  []byte // a rune cut by a read boundary
}

func (t *tap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.observe(p[:n])
		if t.scan != nil {
			t.scan.feed(p[:n])
		}
	}
	return n, err
}

func (t *tap) observe(b []byte) {
	if t.n == 0 {
		t.utf8OK = true
	}
	t.n += int64(len(b))
	if len(b) >= len(t.last) {
		copy(t.last[:], b[len(b)-len(t.last):])
		t.nlast = len(t.last)
	} else {
		keep := min(t.nlast, len(t.last)-len(b))
		copy(t.last[:], t.last[t.nlast-keep:t.nlast])
		copy(t.last[keep:], b)
		t.nlast = keep + len(b)
	}
	if t.utf8OK {
		buf := b
		if len(t.carry) > 0 {
			buf = append(t.carry, b...)
			t.carry = nil
		}
		valid := trimPartialRune(buf)
		if len(buf)-len(valid) > 0 {
			t.carry = append([]byte(nil), buf[len(valid):]...)
		}
		if !utf8.Valid(valid) || bytes.IndexByte(valid, 0) >= 0 {
			t.utf8OK = false
		}
		t.runes += utf8.RuneCount(valid)
	}
}

func (t *tap) tail() []byte { return t.last[:t.nlast] }

// feedBuffered gives a freshly attached scanner what bufio already read.
func (t *tap) feedBuffered(br *bufio.Reader) {
	if b, _ := br.Peek(br.Buffered()); len(b) > 0 {
		t.scan.feed(b)
	}
}

type scanner interface {
	feed([]byte)
	flush()
}

// windowScan runs match over overlapping windows so that a pattern cut by a
// read boundary is seen exactly once: matches starting before limit count,
// the last k bytes carry over.
type windowScan struct {
	k     int
	carry []byte
	buf   []byte
	match func(buf []byte, limit int)
}

func (w *windowScan) feed(b []byte) {
	w.buf = append(append(w.buf[:0], w.carry...), b...)
	if len(w.buf) <= w.k {
		w.carry = append(w.carry[:0], w.buf...)
		return
	}
	limit := len(w.buf) - w.k
	w.match(w.buf, limit)
	w.carry = append(w.carry[:0], w.buf[limit:]...)
}

func (w *windowScan) flush() { w.match(w.carry, len(w.carry)); w.carry = w.carry[:0] }

type needleScan struct {
	windowScan
	needles []string
	found   []bool
}

func newNeedleScan(needles ...string) *needleScan {
	s := &needleScan{needles: needles, found: make([]bool, len(needles))}
	for _, n := range needles {
		s.k = max(s.k, len(n))
	}
	s.match = func(buf []byte, limit int) {
		for i, n := range s.needles {
			if !s.found[i] {
				if j := bytes.Index(buf, []byte(n)); j >= 0 && j < limit {
					s.found[i] = true
				}
			}
		}
	}
	return s
}

// pdfScan counts page objects (/Type /Page, not /Pages) and keeps the largest
// /Count (the page tree root's total), and notices /Encrypt. Since PDF 1.5 the
// page tree may sit in compressed object streams (/Type /ObjStm, ISO 32000-1
// §7.5.7): their data is gathered up to "endstream", inflated (FlateDecode;
// an unfiltered one is read as is) and scanned for the same keys, at most
// objStmLimit bytes in all.
type pdfScan struct {
	windowScan
	pageObjs  int
	maxCount  int
	encrypted bool

	nested   bool   // scanning an object stream's inflated objects
	objStm   bool   // an /ObjStm dictionary was seen; its stream is next
	startAt  int    // where the stream's data starts in buf; -1 when none
	stm      []byte // the object stream's raw data while gathering
	gather   bool
	inflated int64
	err      error
}

func newPDFScan() *pdfScan {
	s := &pdfScan{startAt: -1}
	s.k = 32
	s.match = s.matchPDF
	return s
}

func (s *pdfScan) feed(b []byte) {
	for len(b) > 0 && s.err == nil {
		if s.gather {
			b = s.gatherStream(b)
			continue
		}
		s.windowScan.feed(b)
		b = nil
		if s.startAt >= 0 {
			// The rest of the window is the stream's data: gather it, not
			// scan it as objects.
			b = append([]byte(nil), s.buf[s.startAt:]...)
			s.carry, s.startAt, s.gather = s.carry[:0], -1, true
		}
	}
}

func (s *pdfScan) flush() {
	if !s.gather {
		s.windowScan.flush()
	}
}

// gatherStream keeps an object stream's bytes until "endstream", then scans
// them; it returns what follows.
func (s *pdfScan) gatherStream(b []byte) []byte {
	from := max(0, len(s.stm)-len("endstream"))
	s.stm = append(s.stm, b...)
	i := bytes.Index(s.stm[from:], []byte("endstream"))
	if i < 0 {
		if len(s.stm) > objStmLimit {
			s.err = fmt.Errorf("is a PDF with a compressed object stream longer than %d bytes; its pages cannot be counted", objStmLimit)
		}
		return nil
	}
	end := from + i
	rest := append([]byte(nil), s.stm[end:]...)
	s.scanObjStm(s.stm[:end])
	s.stm, s.gather = s.stm[:0], false
	return rest
}

func (s *pdfScan) scanObjStm(data []byte) {
	var r io.Reader = bytes.NewReader(data)
	if z, err := zlib.NewReader(r); err == nil {
		defer z.Close()
		r = z
	}
	inner := newPDFScan()
	inner.nested = true
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		s.inflated += int64(n)
		if s.inflated > objStmLimit {
			s.err = fmt.Errorf("is a PDF whose compressed object streams inflate past %d bytes; its pages cannot be counted safely", objStmLimit)
			return
		}
		inner.windowScan.feed(buf[:n])
		if err != nil {
			// A stream that does not inflate counts what it yielded: the
			// page count is then as before object streams were read.
			break
		}
	}
	inner.windowScan.flush()
	s.pageObjs += inner.pageObjs
	s.maxCount = max(s.maxCount, inner.maxCount)
}

func (s *pdfScan) pages() int {
	if s.maxCount > 0 {
		return s.maxCount
	}
	return s.pageObjs
}

func (s *pdfScan) matchPDF(buf []byte, limit int) {
	kw := -2 // where "stream" is in buf once looked for; -1 when absent
	for i := 0; i < limit; {
		j := bytes.IndexByte(buf[i:limit], '/')
		if s.objStm {
			if kw == -2 || (kw >= 0 && kw < i) {
				if kw = bytes.Index(buf[i:], []byte("stream")); kw >= 0 {
					kw += i
				}
			}
			// The stream keyword ends the dictionary: "stream" then CRLF or
			// LF (§7.3.8.1); k bytes of lookahead hold the end of line.
			if kw >= 0 && kw < limit && (j < 0 || kw < i+j) {
				d := kw + len("stream")
				if bytes.HasPrefix(buf[d:], []byte("\r\n")) {
					d += 2
				} else if d < len(buf) && (buf[d] == '\n' || buf[d] == '\r') {
					d++
				}
				s.objStm, s.startAt = false, d
				return
			}
		}
		if j < 0 {
			return
		}
		p := i + j
		rest := buf[p:]
		switch {
		case bytes.HasPrefix(rest, []byte("/Type")):
			q := 5
			for q < len(rest) && isPDFSpace(rest[q]) {
				q++
			}
			if bytes.HasPrefix(rest[q:], []byte("/Page")) && (q+5 >= len(rest) || !isPDFName(rest[q+5])) {
				s.pageObjs++
			}
			if !s.nested && bytes.HasPrefix(rest[q:], []byte("/ObjStm")) && (q+7 >= len(rest) || !isPDFName(rest[q+7])) {
				s.objStm = true
			}
		case bytes.HasPrefix(rest, []byte("/Count")):
			q := 6
			for q < len(rest) && isPDFSpace(rest[q]) {
				q++
			}
			e := q
			for e < len(rest) && e < q+9 && rest[e] >= '0' && rest[e] <= '9' {
				e++
			}
			if n, err := strconv.Atoi(string(rest[q:e])); err == nil && n > s.maxCount {
				s.maxCount = n
			}
		case bytes.HasPrefix(rest, []byte("/Encrypt")) && (len(rest) == 8 || !isPDFName(rest[8])):
			s.encrypted = true
		}
		i = p + 1
	}
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}
func isPDFName(c byte) bool {
	return c > ' ' && c < 0x7f && !bytes.ContainsRune([]byte("/[]<>(){}%"), rune(c))
}
