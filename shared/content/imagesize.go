package content

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// imageSize reads an image's width and height from its header, as
// image.DecodeConfig does, without linking the decoders (image/jpeg, png, gif
// and x/image/webp register whole decoders: about 260 KB of every bootstrap
// that checks media). Each format keeps its size in a few header fields,
// checked here as the decoders check them. A read error comes back as it was
// (io.EOF, io.ErrUnexpectedEOF: the image ends inside its header).
func imageSize(r io.Reader, format string) (w, h int, err error) {
	switch format {
	case PNG:
		return pngSize(r)
	case GIF:
		return gifSize(r)
	case JPEG:
		return jpegSize(r)
	case WEBP:
		return webpSize(r)
	}
	return 0, 0, fmt.Errorf("%s is not an image format", format)
}

func readN(r io.Reader, n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// pngSize reads the IHDR chunk, which must come first, CRC included (PNG
// specification, ISO/IEC 15948, 11.2.2).
func pngSize(r io.Reader) (int, int, error) {
	b, err := readN(r, 8+8+13+4)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case string(b[:8]) != "\x89PNG\r\n\x1a\n":
		return 0, 0, errors.New("png: not a PNG file")
	case binary.BigEndian.Uint32(b[8:12]) != 13 || string(b[12:16]) != "IHDR":
		return 0, 0, errors.New("png: invalid format: the first chunk is not IHDR")
	case crc32.ChecksumIEEE(b[12:29]) != binary.BigEndian.Uint32(b[29:33]):
		return 0, 0, errors.New("png: invalid format: IHDR checksum mismatch")
	}
	w, h := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24])
	if w == 0 || h == 0 || w > 1<<31-1 || h > 1<<31-1 {
		return 0, 0, errors.New("png: invalid format: non-positive dimension")
	}
	depths := map[byte][]byte{0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
	ok := false
	for _, d := range depths[b[25]] {
		ok = ok || d == b[24]
	}
	if !ok {
		return 0, 0, fmt.Errorf("png: unsupported bit depth %d for color type %d", b[24], b[25])
	}
	if b[26] != 0 || b[27] != 0 || b[28] > 1 {
		return 0, 0, errors.New("png: invalid format: unknown compression, filter or interlace method")
	}
	if b[25] == 3 {
		// A paletted image's colors are its PLTE chunk: the decoder reads on
		// to it, checking every chunk's CRC on the way.
		if err := pngPalette(r); err != nil {
			return 0, 0, err
		}
	}
	return int(w), int(h), nil
}

// pngPalette reads the chunks after IHDR up to and including PLTE.
func pngPalette(r io.Reader) error {
	for {
		hd, err := readN(r, 8)
		if err != nil {
			return err
		}
		n, typ := binary.BigEndian.Uint32(hd[:4]), string(hd[4:8])
		switch {
		case n > 0x7fffffff:
			return errors.New("png: invalid format: chunk too long")
		case typ == "PLTE" && (n%3 != 0 || n == 0 || n > 256*3):
			return errors.New("png: invalid format: bad PLTE length")
		case typ == "IHDR" || typ == "IDAT" || typ == "IEND" || typ == "tRNS":
			return fmt.Errorf("png: invalid format: %s chunk before PLTE", typ)
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
			return fmt.Errorf("png: invalid format: %s checksum mismatch", typ)
		}
		if typ == "PLTE" {
			return nil
		}
	}
}

// unexpected: an image that ends inside a chunk ends inside its header.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
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
		return 0, 0, errors.New("gif: can't recognize format")
	}
	if b[10]&0x80 != 0 {
		if _, err := readN(r, 3<<(b[10]&7+1)); err != nil {
			return 0, 0, err
		}
	}
	return int(binary.LittleEndian.Uint16(b[6:8])), int(binary.LittleEndian.Uint16(b[8:10])), nil
}

// jpegSize walks the markers to the frame header (ITU T.81, B.1 and B.2.2):
// fill bytes and restart markers are skipped, other segments by their length.
// Baseline, extended and progressive frames are read, as Go's decoder reads
// them; lossless and arithmetic-coded frames are refused.
func jpegSize(r io.Reader) (int, int, error) {
	b, err := readN(r, 2)
	if err != nil {
		return 0, 0, err
	}
	if b[0] != 0xff || b[1] != 0xd8 {
		return 0, 0, errors.New("jpeg: missing SOI marker")
	}
	one := make([]byte, 1)
	next := func() (byte, error) {
		_, err := io.ReadFull(r, one)
		return one[0], err
	}
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
			return 0, 0, errors.New("jpeg: missing SOF marker")
		}
		l, err := readN(r, 2)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		n := int(binary.BigEndian.Uint16(l)) - 2
		if n < 0 {
			return 0, 0, errors.New("jpeg: short segment length")
		}
		switch {
		case m == 0xc0 || m == 0xc1 || m == 0xc2:
			if n < 6 {
				return 0, 0, errors.New("jpeg: short SOF segment")
			}
			f, err := readN(r, n)
			if err != nil {
				return 0, 0, unexpected(err)
			}
			if nc := int(f[5]); (nc != 1 && nc != 3 && nc != 4) || n != 6+3*nc {
				return 0, 0, fmt.Errorf("jpeg: unsupported number of components %d", nc)
			}
			h, w := int(binary.BigEndian.Uint16(f[1:3])), int(binary.BigEndian.Uint16(f[3:5]))
			if w == 0 || h == 0 {
				return 0, 0, errors.New("jpeg: zero width or height")
			}
			return w, h, nil
		case m == 0xda:
			return 0, 0, errors.New("jpeg: missing SOF marker before the scan")
		case m == 0xc4 || m == 0xdb || m == 0xdd || m == 0xfe || (m >= 0xe0 && m <= 0xef):
			// Tables, restart interval, application data, comments.
			if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
				return 0, 0, unexpected(err)
			}
		case m < 0xc0:
			return 0, 0, fmt.Errorf("jpeg: invalid format: unknown marker 0x%x", m)
		default: // lossless, arithmetic-coded, hierarchical frames; reserved markers
			return 0, 0, fmt.Errorf("jpeg: unsupported marker 0x%x", m)
		}
	}
}

// webpSize reads the RIFF header and the chunks up to the first VP8 (a key
// frame's header), VP8L (the lossless header) or VP8X (the canvas size), as
// the WebP container specification lays them out.
func webpSize(r io.Reader) (int, int, error) {
	b, err := readN(r, 12)
	if err != nil {
		return 0, 0, err
	}
	if string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0, errors.New("webp: invalid format: not a RIFF WEBP file")
	}
	left := int64(binary.LittleEndian.Uint32(b[4:8])) - 4 // what the RIFF size leaves after "WEBP"
	for first := true; ; first = false {
		hd, err := readN(r, 8)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		if first && string(hd[:3]) != "VP8" {
			// The file starts with its image (VP8, VP8L) or the extended header (VP8X).
			return 0, 0, fmt.Errorf("webp: invalid format: first chunk %q is not VP8, VP8L or VP8X", hd[:4])
		}
		size := int64(binary.LittleEndian.Uint32(hd[4:8]))
		if left -= 8; size > left {
			return 0, 0, errors.New("webp: invalid format: chunk longer than the RIFF")
		}
		left -= size + size&1
		w, h, err := webpChunk(r, string(hd[:4]), size)
		if err != nil || w > 0 {
			return w, h, err
		}
	}
}

// webpChunk reads the size from a VP8, VP8L or VP8X chunk, and skips any
// other (w == 0), as the decoder does.
func webpChunk(r io.Reader, fourcc string, size int64) (int, int, error) {
	var w, h int
	switch fourcc {
	case "VP8 ":
		if size < 10 {
			return 0, 0, errors.New("webp: invalid format: short VP8 chunk")
		}
		f, err := readN(r, 10)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		if f[0]&1 != 0 || f[3] != 0x9d || f[4] != 0x01 || f[5] != 0x2a {
			return 0, 0, errors.New("webp: invalid format: VP8 chunk is not a key frame")
		}
		w, h = int(binary.LittleEndian.Uint16(f[6:8])&0x3fff), int(binary.LittleEndian.Uint16(f[8:10])&0x3fff)
		if w == 0 || h == 0 {
			return 0, 0, errors.New("webp: invalid format: zero width or height")
		}
	case "VP8L":
		if size < 5 {
			return 0, 0, errors.New("webp: invalid format: short VP8L chunk")
		}
		f, err := readN(r, 5)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		bits := binary.LittleEndian.Uint32(f[1:5])
		if f[0] != 0x2f || bits>>29 != 0 {
			return 0, 0, errors.New("webp: invalid format: bad VP8L header")
		}
		w, h = int(bits&0x3fff)+1, int(bits>>14&0x3fff)+1
	case "VP8X":
		if size != 10 {
			return 0, 0, errors.New("webp: invalid format: VP8X chunk is not 10 bytes")
		}
		f, err := readN(r, 10)
		if err != nil {
			return 0, 0, unexpected(err)
		}
		u24 := func(p []byte) int { return int(p[0]) | int(p[1])<<8 | int(p[2])<<16 }
		w, h = u24(f[4:7])+1, u24(f[7:10])+1
		if uint64(w)*uint64(h) > 1<<32-1 {
			return 0, 0, errors.New("webp: invalid format: canvas too large")
		}
	default:
		if _, err := io.CopyN(io.Discard, r, size+size&1); err != nil {
			return 0, 0, unexpected(err)
		}
	}
	return w, h, nil
}
