package content

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// imageSize reads an image's width and height from its header, as
// image.DecodeConfig does, without linking the decoders (image/jpeg, png, gif
// and x/image/webp register whole decoders: about 260 KB of every bootstrap
// that checks media). Each format keeps its size in a few header fields,
// checked here as the decoders check them, up to the image data. A file the
// format refuses is a *formatError; a read error comes back as it was
// (io.EOF, io.ErrUnexpectedEOF: the image ends inside its header).
func imageSize(r io.Reader, format string) (w, h int, err error) {
	switch format {
	case PNG:
		w, h, err = pngSize(r)
	case GIF:
		w, h, err = gifSize(r)
	case JPEG:
		w, h, err = jpegSize(r)
	case WEBP:
		w, h, err = webpSize(r)
	default:
		return 0, 0, badf("%s is not an image format", format)
	}
	if err == nil && (w == 0 || h == 0) {
		return 0, 0, badf("%s: zero width or height", format)
	}
	return w, h, err
}

// formatError is a header the format's rules refuse (not a read error).
type formatError struct{ msg string }

func (e *formatError) Error() string { return e.msg }

func badf(format string, args ...any) error { return &formatError{fmt.Sprintf(format, args...)} }

func readN(r io.Reader, n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// unexpected: an image that ends inside a chunk ends inside its header.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// pngSize reads the IHDR chunk, which must come first, CRC included (PNG
// specification, ISO/IEC 15948, 11.2.2), and for a paletted image the chunks
// up to its image data, as the decoder does.
func pngSize(r io.Reader) (int, int, error) {
	b, err := readN(r, 8+8+13+4)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case string(b[:8]) != "\x89PNG\r\n\x1a\n":
		return 0, 0, badf("png: not a PNG file")
	case binary.BigEndian.Uint32(b[8:12]) != 13 || string(b[12:16]) != "IHDR":
		return 0, 0, badf("png: invalid format: the first chunk is not IHDR")
	case crc32.ChecksumIEEE(b[12:29]) != binary.BigEndian.Uint32(b[29:33]):
		return 0, 0, badf("png: invalid format: IHDR checksum mismatch")
	}
	w, h := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24])
	switch {
	case w == 0 || h == 0 || w > 1<<31-1 || h > 1<<31-1:
		return 0, 0, badf("png: invalid format: non-positive dimension")
	case uint64(w)*uint64(h) > (1<<63-1)/8: // the decoder's 8 bytes a pixel must fit an int64
		return 0, 0, badf("png: invalid format: dimension overflow")
	}
	depth, ctype := b[24], b[25]
	depths := map[byte][]byte{0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
	ok := false
	for _, d := range depths[ctype] {
		ok = ok || d == depth
	}
	if !ok {
		return 0, 0, badf("png: unsupported bit depth %d for color type %d", depth, ctype)
	}
	if b[26] != 0 || b[27] != 0 || b[28] > 1 {
		return 0, 0, badf("png: invalid format: unknown compression, filter or interlace method")
	}
	if ctype == 3 {
		if err := pngPalette(r, depth); err != nil {
			return 0, 0, err
		}
	}
	return int(w), int(h), nil
}

// pngPalette reads a paletted image's chunks after IHDR up to its
// transparency (tRNS) or image data (IDAT), checking every chunk's CRC and
// order and the palette's size against the bit depth.
func pngPalette(r io.Reader, depth byte) error {
	plte := false
	for {
		hd, err := readN(r, 8)
		if err != nil {
			return unexpected(err)
		}
		n, typ := binary.BigEndian.Uint32(hd[:4]), string(hd[4:8])
		switch {
		case n > 0x7fffffff:
			return badf("png: invalid format: chunk too long")
		case typ == "IHDR" || typ == "IEND" || (typ == "PLTE" && plte) || ((typ == "tRNS" || typ == "IDAT") && !plte):
			return badf("png: invalid format: chunk %s out of order", typ)
		case typ == "PLTE" && (n%3 != 0 || n == 0 || n/3 > 1<<depth):
			return badf("png: invalid format: bad PLTE length %d for bit depth %d", n, depth)
		case typ == "tRNS" && n > 256:
			return badf("png: invalid format: bad tRNS length")
		case typ == "IDAT":
			return nil // the image data: the header is over
		}
		crc := crc32.NewIEEE()
		crc.Write(hd[4:8])
		if _, err := io.CopyN(crc, r, int64(n)); err != nil {
			return unexpected(err)
		}
		sum, err := readN(r, 4)
		if err != nil {
			return unexpected(err)
		}
		if crc.Sum32() != binary.BigEndian.Uint32(sum) {
			return badf("png: invalid format: %s checksum mismatch", typ)
		}
		plte = plte || typ == "PLTE"
		if typ == "tRNS" {
			return nil
		}
	}
}

// gifSize reads the header and logical screen descriptor and, as the
// decoder does, the global color table the descriptor announces (GIF89a
// specification, sections 17 to 19).
func gifSize(r io.Reader) (int, int, error) {
	b, err := readN(r, 13)
	if err != nil {
		return 0, 0, err
	}
	if v := string(b[:6]); v != "GIF87a" && v != "GIF89a" {
		return 0, 0, badf("gif: can't recognize format")
	}
	if b[10]&0x80 != 0 {
		if _, err := readN(r, 3<<(b[10]&7+1)); err != nil {
			return 0, 0, unexpected(err)
		}
	}
	return int(binary.LittleEndian.Uint16(b[6:8])), int(binary.LittleEndian.Uint16(b[8:10])), nil
}

// jpegSize walks the markers to the first scan (ITU T.81, B.1 and B.2):
// fill bytes and restart markers are skipped, other segments by their length.
// The frame header is checked as Go's decoder checks it (8-bit precision,
// 1, 3 or 4 components with distinct ids, sampling factors 1 to 4, table
// numbers 0 to 3); baseline, extended and progressive frames are read, and
// lossless, arithmetic-coded and hierarchical ones refused.
func jpegSize(r io.Reader) (int, int, error) {
	b, err := readN(r, 2)
	if err != nil {
		return 0, 0, err
	}
	if b[0] != 0xff || b[1] != 0xd8 {
		return 0, 0, badf("jpeg: missing SOI marker")
	}
	one := make([]byte, 1)
	next := func() (byte, error) {
		_, err := io.ReadFull(r, one)
		return one[0], unexpected(err)
	}
	w, h := 0, 0
	for {
		c, err := next()
		if err != nil {
			return 0, 0, err
		}
		if c != 0xff {
			continue // stray bytes before a marker, tolerated as libjpeg does
		}
		m, err := next()
		if err != nil {
			return 0, 0, err
		}
		if m == 0 {
			continue // "\xff\x00": extraneous data
		}
		for m == 0xff { // fill bytes
			if m, err = next(); err != nil {
				return 0, 0, err
			}
		}
		switch {
		case m >= 0xd0 && m <= 0xd7: // restart marker
			continue
		case m == 0xd9:
			return 0, 0, badf("jpeg: missing SOF or SOS marker")
		}
		l, err := readN(r, 2)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		n := int(binary.BigEndian.Uint16(l)) - 2
		if n < 0 {
			return 0, 0, badf("jpeg: short segment length")
		}
		switch {
		case m == 0xc0 || m == 0xc1 || m == 0xc2:
			if w != 0 {
				return 0, 0, badf("jpeg: a second SOF marker")
			}
			f, err := readN(r, n)
			if err != nil {
				return 0, 0, unexpected(err)
			}
			if w, h, err = jpegFrame(f); err != nil {
				return 0, 0, err
			}
			continue
		case m == 0xda:
			if w == 0 {
				return 0, 0, badf("jpeg: missing SOF marker before the scan")
			}
			return w, h, nil
		case m == 0xc4 || m == 0xdb || m == 0xdd || m == 0xfe || (m >= 0xe0 && m <= 0xef):
			// Tables, restart interval, application data, comments.
		case m < 0xc0:
			return 0, 0, badf("jpeg: invalid format: unknown marker 0x%x", m)
		default: // lossless, arithmetic-coded, hierarchical frames; reserved markers
			return 0, 0, badf("jpeg: unsupported marker 0x%x", m)
		}
		if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
			return 0, 0, unexpected(err)
		}
	}
}

// jpegFrame checks a frame header's fields (T.81 B.2.2) and returns its size.
func jpegFrame(f []byte) (int, int, error) {
	if len(f) < 6 {
		return 0, 0, badf("jpeg: short SOF segment")
	}
	if f[0] != 8 {
		return 0, 0, badf("jpeg: unsupported precision %d", f[0])
	}
	nc := int(f[5])
	if (nc != 1 && nc != 3 && nc != 4) || len(f) != 6+3*nc {
		return 0, 0, badf("jpeg: unsupported number of components %d", nc)
	}
	seen := map[byte]bool{}
	for i := range nc {
		id, hv, tq := f[6+3*i], f[7+3*i], f[8+3*i]
		if seen[id] {
			return 0, 0, badf("jpeg: repeated component identifier %d", id)
		}
		seen[id] = true
		if h, v := hv>>4, hv&15; h < 1 || h > 4 || v < 1 || v > 4 || tq > 3 {
			return 0, 0, badf("jpeg: bad sampling factor or quantization table of component %d", id)
		}
	}
	return int(binary.BigEndian.Uint16(f[3:5])), int(binary.BigEndian.Uint16(f[1:3])), nil
}

// webpSize reads the RIFF header and the first chunk, which the WebP
// container specification makes the image (VP8: a key frame's header; VP8L:
// the lossless header) or the extended header (VP8X: the canvas size).
func webpSize(r io.Reader) (int, int, error) {
	b, err := readN(r, 20)
	if err != nil {
		return 0, 0, err
	}
	if string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0, badf("webp: invalid format: not a RIFF WEBP file")
	}
	size := int64(binary.LittleEndian.Uint32(b[16:20]))
	if size > int64(binary.LittleEndian.Uint32(b[4:8]))-12 {
		return 0, 0, badf("webp: invalid format: chunk longer than the RIFF")
	}
	switch string(b[12:16]) {
	case "VP8 ":
		if size < 10 {
			return 0, 0, badf("webp: invalid format: short VP8 chunk")
		}
		f, err := readN(r, 10)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		if f[0]&1 != 0 || f[3] != 0x9d || f[4] != 0x01 || f[5] != 0x2a {
			return 0, 0, badf("webp: invalid format: VP8 chunk is not a key frame")
		}
		return int(binary.LittleEndian.Uint16(f[6:8]) & 0x3fff), int(binary.LittleEndian.Uint16(f[8:10]) & 0x3fff), nil
	case "VP8L":
		if size < 5 {
			return 0, 0, badf("webp: invalid format: short VP8L chunk")
		}
		f, err := readN(r, 5)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		bits := binary.LittleEndian.Uint32(f[1:5])
		if f[0] != 0x2f || bits>>29 != 0 {
			return 0, 0, badf("webp: invalid format: bad VP8L header")
		}
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, nil
	case "VP8X":
		if size != 10 {
			return 0, 0, badf("webp: invalid format: VP8X chunk is not 10 bytes")
		}
		f, err := readN(r, 10)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		u24 := func(p []byte) int { return int(p[0]) | int(p[1])<<8 | int(p[2])<<16 }
		w, h := u24(f[4:7])+1, u24(f[7:10])+1
		if uint64(w)*uint64(h) > 1<<31-1 {
			return 0, 0, badf("webp: invalid format: canvas too large")
		}
		return w, h, nil
	}
	return 0, 0, badf("webp: invalid format: first chunk %q is not VP8, VP8L or VP8X", b[12:16])
}
