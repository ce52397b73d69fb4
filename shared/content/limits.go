package content

import (
	"fmt"
	"slices"
)

// Path is a provider path: where a record is going and so which wire shape and
// which documented limits apply.
type Path string

const (
	// PathBedrockBatchClaude is the Claude native (InvokeModel) body inside a
	// Bedrock batch inference JSONL record.
	PathBedrockBatchClaude Path = "bedrock-batch-claude"
	// PathBedrockConverse is a bedrock-runtime Converse request (on-demand runs).
	PathBedrockConverse Path = "bedrock-converse"
	// PathAnthropic is an Anthropic Messages API request (Message Batches).
	PathAnthropic Path = "anthropic"
)

// Paths lists every path LimitsFor knows.
var Paths = []Path{PathBedrockBatchClaude, PathBedrockConverse, PathAnthropic}

// Limits are the documented content limits of one path. Zero means "no
// documented limit". Sizes are bytes.
type Limits struct {
	ImageFormats    []string
	DocumentFormats []string
	// MaxImageBytes is per image; ImageBytesBase64 says it is measured on the
	// base64 text rather than the decoded bytes.
	MaxImageBytes    int64
	ImageBytesBase64 bool
	MaxImageSide     int // pixels, width and height each
	MaxImages        int // per request
	// Past ManyImages images in one request, each side must be ≤ ManyImagesSide.
	ManyImages, ManyImagesSide int
	MaxDocumentBytes           int64
	MaxDocuments               int // per request
	MaxPDFPages                int // per request, all PDFs together
	MaxRequestBytes            int64
	// DocumentNames applies Converse's DocumentBlock name rule.
	DocumentNames bool
	// Sources holds the URL each limit was read from, by field name.
	Sources map[string]string
}

const (
	mb = 1_000_000 // AWS quotes decimal megabytes; using them is the stricter reading
	// mib is Anthropic's megabyte: its error reads "image exceeds 5 MB maximum:
	// N bytes > 5242880 bytes" (quoted in https://github.com/aipoch/open-science/pull/225).
	mib = 1 << 20
)

var allImages = []string{PNG, JPEG, GIF, WEBP}

// Checked 2026-11-30 against the pages named beside each value.
var limits = map[Path]Limits{
	PathBedrockBatchClaude: {
		// Bedrock imposes no image limits of its own on InvokeModel and defers to
		// the model provider's: for Claude 8000x8000 px, and past 20 images
		// 2000x2000 (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-api-restrictions.html,
		// https://docs.claude.com/en/docs/build-with-claude/vision).
		ImageFormats: allImages,
		// "Including documents in the request body is not supported when using
		// InvokeModel" (inference-api-restrictions.html): a batch of Claude
		// native bodies carries no documents; send them through Converse.
		DocumentFormats:  nil,
		MaxImageBytes:    5 * mib,
		ImageBytesBase64: true,
		MaxImageSide:     8000,
		MaxImages:        100,
		ManyImages:       20,
		ManyImagesSide:   2000,
		// "The maximum size of the payload you can send in a request is 20MB."
		MaxRequestBytes: 20 * mb,
		Sources: map[string]string{
			"images":   "https://docs.claude.com/en/docs/build-with-claude/vision",
			"image":    "https://docs.aws.amazon.com/bedrock/latest/userguide/inference-api-restrictions.html",
			"document": "https://docs.aws.amazon.com/bedrock/latest/userguide/inference-api-restrictions.html",
			"request":  "https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html",
		},
	},
	PathBedrockConverse: {
		// Converse: "You can include up to 20 images. Each image's size, height,
		// and width must be no more than 3.75 MB, 8000 px, and 8000 px"; "up to
		// five documents. Each document's size must be no more than 4.5 MB"
		// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html;
		// ImageBlock/DocumentBlock formats from API_runtime_ImageBlock.html and
		// API_runtime_DocumentBlock.html). Claude's 100 PDF pages per request is
		// restated on inference-api-restrictions.html, which also exempts PDFs
		// from the 4.5 MB cap for Claude 4 and later and Nova: the catalog's
		// per-model document rules (Checker.PDF) apply that.
		ImageFormats:     allImages,
		DocumentFormats:  []string{PDF, CSV, DOC, DOCX, XLS, XLSX, HTML, TXT, MD},
		MaxImageBytes:    3_750_000,
		MaxImageSide:     8000,
		MaxImages:        20,
		MaxDocumentBytes: 4_500_000,
		MaxDocuments:     5,
		MaxPDFPages:      100,
		DocumentNames:    true,
		Sources: map[string]string{
			"image":    "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html",
			"images":   "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html",
			"document": "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html",
			"pages":    "https://docs.aws.amazon.com/bedrock/latest/userguide/inference-api-restrictions.html",
		},
	},
	PathAnthropic: {
		// Vision: up to 100 images per API request (200k-context models), each at
		// most 8000x8000 px, 2000x2000 past 20 images, 5 MB each; 32 MB request
		// (https://docs.claude.com/en/docs/build-with-claude/vision). PDFs: 100
		// pages and 32 MB per request
		// (https://docs.claude.com/en/docs/build-with-claude/pdf-support); plain
		// text documents are the "text" source of the same document block
		// (https://docs.claude.com/en/docs/build-with-claude/citations).
		ImageFormats:     allImages,
		DocumentFormats:  []string{PDF, TXT, MD, CSV, HTML},
		MaxImageBytes:    5 * mib,
		ImageBytesBase64: true,
		MaxImageSide:     8000,
		MaxImages:        100,
		ManyImages:       20,
		ManyImagesSide:   2000,
		MaxPDFPages:      100,
		MaxRequestBytes:  32 * mib,
		Sources: map[string]string{
			"image":    "https://docs.claude.com/en/docs/build-with-claude/vision",
			"images":   "https://docs.claude.com/en/docs/build-with-claude/vision",
			"document": "https://docs.claude.com/en/docs/build-with-claude/pdf-support",
			"pages":    "https://docs.claude.com/en/docs/build-with-claude/pdf-support",
			"request":  "https://docs.claude.com/en/api/overview#request-size-limits",
		},
	},
}

// LimitsFor is the documented limits of a path.
func LimitsFor(p Path) (Limits, error) {
	l, ok := limits[p]
	if !ok {
		return Limits{}, fmt.Errorf("content: unknown provider path %q (known: %v)", p, Paths)
	}
	l.ImageFormats = slices.Clone(l.ImageFormats)
	l.DocumentFormats = slices.Clone(l.DocumentFormats)
	return l, nil
}

func (l Limits) source(what string) string {
	if s := l.Sources[what]; s != "" {
		return " (" + s + ")"
	}
	return ""
}
