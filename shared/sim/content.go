package sim

// Images and documents in requests: which models read them, the limits each
// service documents, and the services' own error wording. This is the
// simulators' own table and code, deliberately separate from the product's
// (shared/content, shared/model): it decodes every image fully with the
// standard decoders, as a service would, rather than reading headers.
// Facts checked 2026-11-30 at the pages named beside them.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // decoders for image.Decode
	_ "image/jpeg"
	_ "image/png"
	"regexp"
	"strings"

	_ "golang.org/x/image/webp"
)

// Modal says which non-text blocks a model reads.
type Modal struct{ Image, Document bool }

// MediaRules are one service's documented content limits.
type MediaRules struct {
	MaxImageBytes int64 // decoded bytes, or base64 text when imageB64
	ImageB64      bool
	MaxSide       int
	MaxImages     int
	ManyImages    int // past this many images, each side ≤ manySide
	ManySide      int
	MaxDocBytes   int64
	MaxDocs       int
	MaxPDFPages   int
	DocFormats    []string
}

var (
	// Claude's rules (https://docs.claude.com/en/docs/build-with-claude/vision,
	// .../pdf-support): 5 MB per image as base64, 8000 px (2000 px past 20
	// images), 100 images, 100 PDF pages. Bedrock's InvokeModel body carries no
	// documents ("Including documents in the request body is not supported when
	// using InvokeModel",
	// https://docs.aws.amazon.com/bedrock/latest/userguide/inference-api-restrictions.html).
	claudeAPIRules     = MediaRules{MaxImageBytes: 5 << 20, ImageB64: true, MaxSide: 8000, MaxImages: 100, ManyImages: 20, ManySide: 2000, MaxPDFPages: 100, DocFormats: []string{"pdf", "text"}}
	bedrockNativeRules = MediaRules{MaxImageBytes: 5 << 20, ImageB64: true, MaxSide: 8000, MaxImages: 100, ManyImages: 20, ManySide: 2000}
)

// SeenPart is what the simulator found in one image or document.
type SeenPart struct {
	MediaType     string
	Width, Height int
	Pages         int
	Bytes         int
	TextOnly      bool // a PDF read as extracted text (Converse without citations)
}

func (p SeenPart) String() string {
	if p.Pages > 0 && p.TextOnly {
		return fmt.Sprintf("%s %d pages as extracted text, %d bytes", p.MediaType, p.Pages, p.Bytes)
	}
	if p.Width > 0 {
		return fmt.Sprintf("%s %dx%d, %d bytes", p.MediaType, p.Width, p.Height, p.Bytes)
	}
	if p.Pages > 0 {
		return fmt.Sprintf("%s %d pages, %d bytes", p.MediaType, p.Pages, p.Bytes)
	}
	return fmt.Sprintf("%s %d bytes", p.MediaType, p.Bytes)
}

// Tokens is Anthropic's published image cost after its downscaling to a
// 1568 px long edge (https://docs.claude.com/en/docs/build-with-claude/vision).
func (p SeenPart) Tokens() int64 {
	if p.Width == 0 && p.TextOnly {
		// "approximately 1,000 tokens for a 3-page PDF" in text-extraction mode
		// (https://docs.claude.com/en/docs/build-with-claude/pdf-support).
		return int64(max(p.Pages, 1)) * 334
	}
	if p.Width == 0 {
		return int64(max(p.Pages, 1)) * 1500
	}
	w, h := float64(p.Width), float64(p.Height)
	if l := max(w, h); l > 1568 {
		w, h = w*1568/l, h*1568/l
	}
	return max(1, int64(w*h/750))
}

// SeenText is the part of an answer that shows what arrived.
func SeenText(seen []SeenPart) string {
	if len(seen) == 0 {
		return ""
	}
	s := make([]string, len(seen))
	for i, p := range seen {
		s[i] = p.String()
	}
	return " [simulated] saw " + strings.Join(s, "; ")
}

// WithSeen adds what arrived to an answer; a JSON answer gets a "seen" field
// so that it stays JSON.
func WithSeen(text string, seen []SeenPart) string {
	if len(seen) == 0 {
		return text
	}
	var obj map[string]any
	if strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &obj) == nil {
		obj["seen"] = strings.TrimPrefix(SeenText(seen), " [simulated] saw ")
		b, _ := json.Marshal(obj)
		return string(b)
	}
	return text + SeenText(seen)
}

func SeenTokens(seen []SeenPart) int64 {
	var n int64
	for _, p := range seen {
		n += p.Tokens()
	}
	return n
}

// SniffImage names an image format by its magic bytes ("" for none).
func SniffImage(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "jpeg"
	case bytes.HasPrefix(b, []byte("GIF8")):
		return "gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "webp"
	}
	return ""
}

// DecodeImage fully decodes an image, as the service does before the model
// sees it: a truncated or corrupt file fails here.
func DecodeImage(b []byte) (string, int, int, error) {
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return "", 0, 0, err
	}
	r := img.Bounds()
	return format, r.Dx(), r.Dy(), nil
}

var pdfPage = regexp.MustCompile(`/Type\s*/Page[^s]`)

func PDFPages(b []byte) int { return len(pdfPage.FindAllIndex(b, -1)) }

// claudeBlock is an image or document block of a Claude Messages body.
type claudeBlock struct {
	Type   string `json:"type"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// ClaudeMedia checks the image and document blocks of a Claude Messages body
// (the Anthropic API, or Claude's native body on Bedrock when bedrock is
// set) and says what it saw. Errors carry the service's wording.
func ClaudeMedia(contents []json.RawMessage, reads Modal, bedrock bool) ([]SeenPart, error) {
	rules := claudeAPIRules
	if bedrock {
		rules = bedrockNativeRules
	}
	var seen []SeenPart
	images, pages := 0, 0
	for m, content := range contents {
		var blocks []claudeBlock
		if json.Unmarshal(content, &blocks) != nil {
			continue // string content
		}
		for b, blk := range blocks {
			if blk.Type != "image" && blk.Type != "document" {
				continue
			}
			at := fmt.Sprintf("messages.%d.content.%d.%s.source", m, b, blk.Type)
			if blk.Type == "image" && !reads.Image || blk.Type == "document" && !reads.Document {
				// Bedrock's Converse wording, recorded in public test logs of
				// Bedrock clients; Anthropic's API has no text-only model left.
				return nil, fmt.Errorf("This model doesn't support the %s content block that you provided. Update the content block and try again.", blk.Type)
			}
			if blk.Source == nil {
				return nil, fmt.Errorf("%s: Field required", at)
			}
			if blk.Type == "document" {
				if bedrock {
					return nil, fmt.Errorf("%s: document blocks are not supported in the InvokeModel request body; use Converse (inference-api-restrictions)", at)
				}
				p, err := claudeDocument(at, blk.Source.Type, blk.Source.MediaType, blk.Source.Data)
				if err != nil {
					return nil, err
				}
				pages += p.Pages
				seen = append(seen, p)
				continue
			}
			if blk.Source.Type != "base64" {
				return nil, fmt.Errorf("%s.type: Input should be 'base64'", at)
			}
			// https://github.com/anthropics/claude-code/issues/8184
			mt := blk.Source.MediaType
			if !strings.HasPrefix(mt, "image/") || !strings.Contains("image/jpeg image/png image/gif image/webp", mt) {
				return nil, fmt.Errorf("%s.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", at)
			}
			if n := int64(len(blk.Source.Data)); rules.ImageB64 && n > rules.MaxImageBytes {
				return nil, fmt.Errorf("%s.base64: image exceeds 5 MB maximum: %d bytes > %d bytes", at, n, rules.MaxImageBytes)
			}
			raw, err := base64.StdEncoding.DecodeString(blk.Source.Data)
			if err != nil {
				return nil, fmt.Errorf("%s.base64.data: invalid base64 data", at)
			}
			// https://github.com/anthropics/claude-code/issues/15746
			if got := SniffImage(raw); got != "" && "image/"+got != mt {
				return nil, fmt.Errorf("%s.base64.data: Image does not match the provided media type %s", at, mt)
			}
			_, w, h, err := DecodeImage(raw)
			if err != nil {
				// https://github.com/anthropics/claude-code/issues/8647
				return nil, fmt.Errorf("Could not process image")
			}
			// https://github.com/anthropics/claude-code/issues/5147
			if w > rules.MaxSide || h > rules.MaxSide {
				return nil, fmt.Errorf("%s.base64.data: At least one of the image dimensions exceed max allowed size: %d pixels", at, rules.MaxSide)
			}
			images++
			seen = append(seen, SeenPart{MediaType: mt, Width: w, Height: h, Bytes: len(raw)})
		}
	}
	if images > rules.MaxImages {
		return nil, fmt.Errorf("messages: too many images: %d > %d", images, rules.MaxImages)
	}
	if images > rules.ManyImages {
		for _, p := range seen {
			if p.Width > rules.ManySide || p.Height > rules.ManySide {
				return nil, fmt.Errorf("messages: At least one of the image dimensions exceed max allowed size for many-image requests: %d pixels", rules.ManySide)
			}
		}
	}
	if pages > rules.MaxPDFPages {
		// Anthropic's wording for the PDF page limit.
		return nil, fmt.Errorf("A maximum of %d PDF pages may be provided.", rules.MaxPDFPages)
	}
	return seen, nil
}

func claudeDocument(at, srcType, mediaType, data string) (SeenPart, error) {
	switch srcType {
	case "text":
		if mediaType != "text/plain" {
			return SeenPart{}, fmt.Errorf("%s.text.media_type: Input should be 'text/plain'", at)
		}
		return SeenPart{MediaType: "text/plain", Bytes: len(data)}, nil
	case "base64":
		if mediaType != "application/pdf" {
			return SeenPart{}, fmt.Errorf("%s.base64.media_type: Input should be 'application/pdf'", at)
		}
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return SeenPart{}, fmt.Errorf("%s.base64.data: invalid base64 data", at)
		}
		if !bytes.HasPrefix(raw, []byte("%PDF-")) || !bytes.Contains(raw[max(0, len(raw)-1024):], []byte("%%EOF")) {
			return SeenPart{}, fmt.Errorf("%s.base64.data: The PDF specified was not valid.", at)
		}
		return SeenPart{MediaType: mediaType, Pages: max(1, PDFPages(raw)), Bytes: len(raw)}, nil
	}
	return SeenPart{}, fmt.Errorf("%s.type: Input should be 'base64' or 'text'", at)
}

// MessageContents is the content of each message of a Messages body.
func MessageContents(messages json.RawMessage) []json.RawMessage {
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(messages, &msgs) // the body's shape is checked elsewhere
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}
