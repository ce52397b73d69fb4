package content

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

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

// imageSize agrees with image.DecodeConfig (the decoders it replaces) on every
// sample, on every cut of its first 200 bytes and on single-byte corruptions
// of the header: the same size when both read one, and a refusal (by
// imageSize, or by the whole check) when the decoder fails. Where the
// decoders take a zero dimension, imageSize is stricter and refuses it.
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
				case derr == nil && err != nil && cfg.Width != 0 && cfg.Height != 0:
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
