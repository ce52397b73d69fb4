package content

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	_ "golang.org/x/image/webp" // the reference imageSize is held to
)

// imageSamples are images of every format in the shapes their encoders make,
// plus a VP8X WebP and a progressive-marker JPEG built by hand.
func imageSamples(t testing.TB) map[string][]byte {
	out := map[string][]byte{
		"png 8x8": mkPNG(t, 8, 8), "png 1x300": mkPNG(t, 1, 300), "jpeg 8x8": mkJPEG(t, 8, 8), "jpeg 640x3": mkJPEG(t, 640, 3),
		"gif 8x8": mkGIF(t, 8, 8), "webp lossless 4x4": mkWebP(4, 4, [4]uint8{}), "webp lossless 300x2": mkWebP(300, 2, [4]uint8{255, 1, 2, 3}),
	}
	enc := func(name string, f func(*bytes.Buffer) error) {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		out[name] = b.Bytes()
	}
	gray := image.NewGray16(image.Rect(0, 0, 5, 7))
	enc("png gray16", func(b *bytes.Buffer) error { return png.Encode(b, gray) })
	pal := image.NewPaletted(image.Rect(0, 0, 9, 2), palette.Plan9)
	enc("png paletted", func(b *bytes.Buffer) error { return png.Encode(b, pal) })
	enc("gif local palette only", func(b *bytes.Buffer) error {
		return gif.EncodeAll(b, &gif.GIF{Image: []*image.Paletted{image.NewPaletted(image.Rect(0, 0, 3, 4), color.Palette{color.Black, color.White})}, Delay: []int{0}})
	})
	enc("jpeg gray", func(b *bytes.Buffer) error { return jpeg.Encode(b, image.NewGray(image.Rect(0, 0, 17, 9)), nil) })
	// A progressive frame (SOF2) is read like a baseline one.
	prog := bytes.Replace(out["jpeg 8x8"], []byte{0xff, 0xc0}, []byte{0xff, 0xc2}, 1)
	out["jpeg progressive marker"] = prog
	// VP8X: flags, reserved, canvas 800x600 (minus one, 24-bit), then the image chunk.
	vp8x := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\x1f\x03\x00\x57\x02\x00")
	inner := mkWebP(800, 600, [4]uint8{})[12:]
	vp8x = append(vp8x, inner...)
	n := len(vp8x) - 8
	vp8x[4], vp8x[5], vp8x[6], vp8x[7] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	out["webp extended 800x600"] = vp8x
	return out
}

// stricter is where imageSize refuses on purpose what the decoders read: a
// WebP whose first chunk is not exactly VP8, VP8L or VP8X (the container
// specification; the decoder skips a chunk whose name merely starts "VP8").
func stricter(b []byte) bool {
	if sniff(b) != WEBP || len(b) < 16 {
		return false
	}
	c := string(b[12:16])
	return c != "VP8 " && c != "VP8L" && c != "VP8X"
}

// imageSize agrees with image.DecodeConfig (the decoders it replaces) on every
// sample, on every cut of its first 200 bytes and on single-byte corruptions
// of the header: the same size when both read one, and a refusal (by
// imageSize, or by the whole check) when the decoder fails. Where the
// decoders take a zero dimension, imageSize is stricter and refuses it
// (providers take no empty image), and see stricter.
func TestImageSizeAgreesWithDecoders(t *testing.T) {
	for name, data := range imageSamples(t) {
		t.Run(name, func(t *testing.T) {
			format := sniff(data)
			check := func(what string, b []byte) {
				cfg, _, derr := image.DecodeConfig(bytes.NewReader(b))
				w, h, err := imageSize(bytes.NewReader(b), format)
				switch {
				case derr == nil && err == nil && (w != cfg.Width || h != cfg.Height):
					t.Errorf("%s: %dx%d, decoder %dx%d", what, w, h, cfg.Width, cfg.Height)
				case derr != nil && err == nil:
					// Go's JPEG decoder reads on from the frame header to the
					// first scan when there is no JFIF marker; a file cut there
					// is refused by the check of its end instead.
					if _, ierr := inspect(bytes.NewReader(b), "", ""); ierr == nil {
						t.Errorf("%s: read %dx%d and accepted where the decoder refused: %v", what, w, h, derr)
					}
				case derr == nil && err != nil && cfg.Width != 0 && cfg.Height != 0 && !stricter(b):
					t.Errorf("%s: refused (%v) where the decoder read %dx%d", what, err, cfg.Width, cfg.Height)
				}
			}
			check("whole", data)
			for cut := range min(len(data), 200) {
				check(fmt.Sprintf("first %d bytes", cut), data[:cut])
			}
			for i := range min(len(data), 40) {
				for _, v := range []byte{0x00, 0xff, data[i] ^ 0x01} {
					b := bytes.Clone(data)
					b[i] = v
					if sniff(b) == format {
						check(fmt.Sprintf("byte %d = %#x", i, v), b)
					}
				}
			}
		})
	}
}

// Files the decoders refuse, found by fuzzing imageSize against them: each is
// refused as a bad image, and a read error is not blamed on the image.
func TestImageSizeRefuses(t *testing.T) {
	hexb := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name, format, hex, want string
	}{
		{"jpeg 12-bit precision", JPEG, "ffd8ffe000104a46494600010100000100010000ffc1000b0c0010001001011100ffd9", "precision"},
		{"jpeg without a scan", JPEG, "ffd8ffc0000b080010001001011100ffd9", "missing SOF or SOS"},
		{"jpeg repeated component id", JPEG, "ffd8ffc00011080010001003011100011100011100ffda", "repeated component"},
		{"jpeg sampling factor 0", JPEG, "ffd8ffc0000b080010001001010000ffda", "sampling factor"},
		{"jpeg quantization table 4", JPEG, "ffd8ffc0000b080010001001011104ffda", "quantization table"},
		{"jpeg second frame header", JPEG, "ffd8ffc0000b080010001001011100ffc0000b080010001001011100ffda", "second SOF"},
		{"png chunk after PLTE with a bad checksum", PNG, "89504e470d0a1a0a0000000d494844520000000100000001080300000028cb34bb00000003504c5445000000a77a3dda0000000374455874610062dc49a23a0000000949444154789c6200000000ffff306b3e130000000049454e44ae426082", "tEXt checksum"},
		{"png palette too big for depth 1", PNG, "89504e470d0a1a0a0000000d4948445200000001000000010103000000" + "25db56ca" + "00000009504c5445000000ffffff7f7f7f" + "00000000", "bad PLTE length"},
		{"png 2^31-1 squared", PNG, pngHeader(t, 0x7fffffff, 0x7fffffff), "dimension overflow"},
		{"webp canvas over 2^31-1 pixels", WEBP, "524946461600000057454250565038580a0000000000000004b50004b500", "canvas too large"},
		{"webp first chunk VP8\\", WEBP, "5249464638000000574542505650385c0a000000100000001f0300570220414c5048", "first chunk"},
		{"gif 0x0", GIF, "474946383961000000000000003b", "zero width or height"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := hexb(c.hex)
			_, _, err := imageSize(bytes.NewReader(b), c.format)
			var fe *formatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a format error saying %q", err, c.want)
			}
		})
	}
	// A stream that breaks (an S3 reset) is a read error, not a bad image.
	_, err := inspect(io.MultiReader(bytes.NewReader(mkJPEG(t, 8, 8)[:30]), iotest.ErrReader(errors.New("connection reset by peer"))), JPEG, "")
	if err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("broken stream: %v, want cannot be read", err)
	}
}

// pngHeader is the hex of a PNG signature and an IHDR of w×h, 8-bit gray, CRC right.
func pngHeader(t *testing.T, w, h uint32) string {
	ihdr := binary.BigEndian.AppendUint32([]byte("IHDR"), w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 0, 0, 0, 0)
	b := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0d"), ihdr...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(ihdr))
	return hex.EncodeToString(b)
}
