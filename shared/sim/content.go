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

// modal says which non-text blocks a model reads.
type Modal struct{ Image, Document bool }

// mediaRules are one service's documented content limits.
type mediaRules struct {
	maxImageBytes int64 // decoded bytes, or base64 text when imageB64
	imageB64      bool
	maxSide       int
	maxImages     int
	manyImages    int // past this many images, each side ≤ manySide
	manySide      int
	maxDocBytes   int64
	maxDocs       int
	maxPDFPages   int
	docFormats    []string
}

var (
	// Converse: "up to 20 images ... no more than 3.75 MB, 8000 px, and 8000 px";
	// "up to five documents ... no more than 4.5 MB"
	// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html);
	// formats from API_runtime_ImageBlock.html and API_runtime_DocumentBlock.html.
	converseRules = mediaRules{maxImageBytes: 3_750_000, maxSide: 8000, maxImages: 20,
		maxDocBytes: 4_500_000, maxDocs: 5, maxPDFPages: 100,
		docFormats: []string{"pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"}}
	// Claude's rules (https://docs.claude.com/en/docs/build-with-claude/vision,
	// .../pdf-support): 5 MB per image as base64, 8000 px (2000 px past 20
	// images), 100 images, 100 PDF pages. Bedrock's InvokeModel body carries no
	// documents ("Including documents in the request body is not supported when
	// using InvokeModel",
	// https://docs.aws.amazon.com/bedrock/latest/userguide/inference-api-restrictions.html).
	claudeAPIRules     = mediaRules{maxImageBytes: 5 << 20, imageB64: true, maxSide: 8000, maxImages: 100, manyImages: 20, manySide: 2000, maxPDFPages: 100, docFormats: []string{"pdf", "text"}}
	bedrockNativeRules = mediaRules{maxImageBytes: 5 << 20, imageB64: true, maxSide: 8000, maxImages: 100, manyImages: 20, manySide: 2000}
)

// seenPart is what the simulator found in one image or document.
type SeenPart struct {
	mediaType     string
	width, height int
	pages         int
	bytes         int
	textOnly      bool // a PDF read as extracted text (Converse without citations)
}

func (p SeenPart) String() string {
	if p.pages > 0 && p.textOnly {
		return fmt.Sprintf("%s %d pages as extracted text, %d bytes", p.mediaType, p.pages, p.bytes)
	}
	if p.width > 0 {
		return fmt.Sprintf("%s %dx%d, %d bytes", p.mediaType, p.width, p.height, p.bytes)
	}
	if p.pages > 0 {
		return fmt.Sprintf("%s %d pages, %d bytes", p.mediaType, p.pages, p.bytes)
	}
	return fmt.Sprintf("%s %d bytes", p.mediaType, p.bytes)
}

// tokens is Anthropic's published image cost after its downscaling to a
// 1568 px long edge (https://docs.claude.com/en/docs/build-with-claude/vision).
func (p SeenPart) Tokens() int64 {
	if p.width == 0 && p.textOnly {
		// "approximately 1,000 tokens for a 3-page PDF" in text-extraction mode
		// (https://docs.claude.com/en/docs/build-with-claude/pdf-support).
		return int64(max(p.pages, 1)) * 334
	}
	if p.width == 0 {
		return int64(max(p.pages, 1)) * 1500
	}
	w, h := float64(p.width), float64(p.height)
	if l := max(w, h); l > 1568 {
		w, h = w*1568/l, h*1568/l
	}
	return max(1, int64(w*h/750))
}

// seenText is the part of an answer that shows what arrived.
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

// withSeen adds what arrived to an answer; a JSON answer gets a "seen" field
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

// sniffImage names an image format by its magic bytes ("" for none).
func sniffImage(b []byte) string {
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

// decodeImage fully decodes an image, as the service does before the model
// sees it: a truncated or corrupt file fails here.
func decodeImage(b []byte) (string, int, int, error) {
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return "", 0, 0, err
	}
	r := img.Bounds()
	return format, r.Dx(), r.Dy(), nil
}

var pdfPage = regexp.MustCompile(`/Type\s*/Page[^s]`)

func pdfPages(b []byte) int { return len(pdfPage.FindAllIndex(b, -1)) }

// claudeBlock is an image or document block of a Claude Messages body.
type claudeBlock struct {
	Type   string `json:"type"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// claudeMedia checks the image and document blocks of a Claude Messages body
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
				pages += p.pages
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
			if n := int64(len(blk.Source.Data)); rules.imageB64 && n > rules.maxImageBytes {
				return nil, fmt.Errorf("%s.base64: image exceeds 5 MB maximum: %d bytes > %d bytes", at, n, rules.maxImageBytes)
			}
			raw, err := base64.StdEncoding.DecodeString(blk.Source.Data)
			if err != nil {
				return nil, fmt.Errorf("%s.base64.data: invalid base64 data", at)
			}
			// https://github.com/anthropics/claude-code/issues/15746
			if got := sniffImage(raw); got != "" && "image/"+got != mt {
				return nil, fmt.Errorf("%s.base64.data: Image does not match the provided media type %s", at, mt)
			}
			_, w, h, err := decodeImage(raw)
			if err != nil {
				// https://github.com/anthropics/claude-code/issues/8647
				return nil, fmt.Errorf("Could not process image")
			}
			// https://github.com/anthropics/claude-code/issues/5147
			if w > rules.maxSide || h > rules.maxSide {
				return nil, fmt.Errorf("%s.base64.data: At least one of the image dimensions exceed max allowed size: %d pixels", at, rules.maxSide)
			}
			images++
			seen = append(seen, SeenPart{mediaType: mt, width: w, height: h, bytes: len(raw)})
		}
	}
	if images > rules.maxImages {
		return nil, fmt.Errorf("messages: too many images: %d > %d", images, rules.maxImages)
	}
	if images > rules.manyImages {
		for _, p := range seen {
			if p.width > rules.manySide || p.height > rules.manySide {
				return nil, fmt.Errorf("messages: At least one of the image dimensions exceed max allowed size for many-image requests: %d pixels", rules.manySide)
			}
		}
	}
	if pages > rules.maxPDFPages {
		// Anthropic's wording for the PDF page limit.
		return nil, fmt.Errorf("A maximum of %d PDF pages may be provided.", rules.maxPDFPages)
	}
	return seen, nil
}

func claudeDocument(at, srcType, mediaType, data string) (SeenPart, error) {
	switch srcType {
	case "text":
		if mediaType != "text/plain" {
			return SeenPart{}, fmt.Errorf("%s.text.media_type: Input should be 'text/plain'", at)
		}
		return SeenPart{mediaType: "text/plain", bytes: len(data)}, nil
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
		return SeenPart{mediaType: mediaType, pages: max(1, pdfPages(raw)), bytes: len(raw)}, nil
	}
	return SeenPart{}, fmt.Errorf("%s.type: Input should be 'base64' or 'text'", at)
}

// Converse's image and document blocks; the SDK sends bytes as base64, which
// encoding/json decodes into []byte.
type converseImage struct {
	Format string `json:"format"`
	Source struct {
		Bytes []byte `json:"bytes"`
	} `json:"source"`
}

type converseDocument struct {
	Format string `json:"format"`
	Name   string `json:"name"`
	Source struct {
		Bytes []byte `json:"bytes"`
	} `json:"source"`
	Citations *struct {
		Enabled bool `json:"enabled"`
	} `json:"citations"`
}

// converseDocName: "alphanumeric characters, whitespace characters (no more
// than one in a row), hyphens, parentheses, and square brackets"
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html).
var converseDocName = regexp.MustCompile(`^[A-Za-z0-9\-\(\)\[\]]+(\s[A-Za-z0-9\-\(\)\[\]]+)*$`)

// converseMedia checks a Converse request's image and document blocks.
// Wording for the size, count and name limits was not found in a stored
// source; the limits themselves are documented.
func converseMedia(inv invocation, req converseRequest) ([]SeenPart, error) {
	reads := bedrockReads(inv)
	r := converseRules
	var seen []SeenPart
	images, docs, pages := 0, 0, 0
	for m, msg := range req.Messages {
		for b, blk := range msg.Content {
			at := fmt.Sprintf("messages.%d.content.%d", m, b)
			switch {
			case blk.Image != nil:
				if !reads.Image {
					return nil, fmt.Errorf("This model doesn't support the image content block that you provided. Update the content block and try again.")
				}
				img := blk.Image
				if !strings.Contains(" png jpeg gif webp ", " "+img.Format+" ") {
					return nil, fmt.Errorf("1 validation error detected: Value '%s' at 'messages.%d.member.content.%d.member.image.format' failed to satisfy constraint: Member must satisfy enum value set: [png, jpeg, gif, webp]", img.Format, m+1, b+1)
				}
				if n := len(img.Source.Bytes); int64(n) > r.maxImageBytes {
					return nil, fmt.Errorf("%s.image.source.bytes: image is %d bytes; the maximum image size is 3.75 MB", at, n)
				}
				// https://github.com/aws-samples/amazon-bedrock-client-for-mac/issues/130
				if got := sniffImage(img.Source.Bytes); got != "" && got != img.Format {
					return nil, fmt.Errorf("The model returned the following errors: %s.image.source.bytes: The image was specified using the image/%s media type, but the image appears to be a image/%s image", at, img.Format, got)
				}
				_, w, h, err := decodeImage(img.Source.Bytes)
				if err != nil {
					return nil, fmt.Errorf("The model returned the following errors: Could not process image")
				}
				if w > r.maxSide || h > r.maxSide {
					return nil, fmt.Errorf("%s.image: image is %dx%d px; the maximum height and width are %d px", at, w, h, r.maxSide)
				}
				images++
				seen = append(seen, SeenPart{mediaType: "image/" + img.Format, width: w, height: h, bytes: len(img.Source.Bytes)})
			case blk.Document != nil:
				if !reads.Document {
					return nil, fmt.Errorf("This model doesn't support the document content block that you provided. Update the content block and try again.")
				}
				d := blk.Document
				if !strings.Contains(" "+strings.Join(r.docFormats, " ")+" ", " "+d.Format+" ") {
					return nil, fmt.Errorf("1 validation error detected: Value '%s' at 'messages.%d.member.content.%d.member.document.format' failed to satisfy constraint: Member must satisfy enum value set: [%s]", d.Format, m+1, b+1, strings.Join(r.docFormats, ", "))
				}
				if !converseDocName.MatchString(d.Name) || len(d.Name) > 200 {
					return nil, fmt.Errorf("%s.document.name: The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character.", at)
				}
				if n := len(d.Source.Bytes); int64(n) > r.maxDocBytes && !docCapExempt(inv.base, d.Format) {
					return nil, fmt.Errorf("%s.document.source.bytes: document is %d bytes; the maximum document size is 4.5 MB", at, n)
				}
				p := SeenPart{mediaType: d.Format, bytes: len(d.Source.Bytes)}
				if d.Format == "pdf" {
					if !bytes.HasPrefix(d.Source.Bytes, []byte("%PDF-")) {
						return nil, fmt.Errorf("The model returned the following errors: %s.document.source.bytes: The PDF specified was not valid.", at)
					}
					p.mediaType, p.pages = "application/pdf", max(1, pdfPages(d.Source.Bytes))
					// Claude reads a PDF visually on Converse only with citations on;
					// otherwise Converse extracts its text.
					p.textOnly = d.Citations == nil || !d.Citations.Enabled || !strings.HasPrefix(inv.base, "anthropic.")
					pages += p.pages
				}
				docs++
				seen = append(seen, p)
			}
		}
	}
	switch {
	case images > r.maxImages:
		return nil, fmt.Errorf("messages: %d images in the request; you can include up to %d images", images, r.maxImages)
	case docs > r.maxDocs:
		return nil, fmt.Errorf("messages: %d documents in the request; you can include up to %d documents", docs, r.maxDocs)
	case pages > r.maxPDFPages && strings.HasPrefix(inv.base, "anthropic."):
		return nil, fmt.Errorf("The model returned the following errors: A maximum of %d PDF pages may be provided.", r.maxPDFPages)
	}
	return seen, nil
}

// messageContents is the content of each message of a Messages body.
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

// bedrockReads is what a Bedrock model reads; an unknown model is served
// permissively.
func bedrockReads(inv invocation) Modal {
	if !inv.known {
		return Modal{true, true}
	}
	return inv.m.reads()
}
