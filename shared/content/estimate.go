package content

import (
	"math"
	"unicode/utf8"
)

// Token estimates, before anything runs. They are approximations for a dry
// run's cost figure, not counts: the exact count comes from the provider
// (https://docs.claude.com/en/docs/build-with-claude/token-counting).
const (
	// charsPerToken: text is estimated at one token per 4 characters, the
	// usual rule of thumb for English; code and non-Latin scripts run higher.
	charsPerToken = 4
	// Claude scales an image down, keeping its aspect ratio, until its long
	// edge is at most 1568 px and it costs at most about 1,600 tokens, then
	// charges width*height/750 tokens
	// (https://docs.claude.com/en/docs/build-with-claude/vision, "Evaluate
	// image size" and "Calculate image costs").
	imageLongEdge  = 1568
	imageMaxTokens = 1600
	pixelsPerToken = 750
	// A PDF page costs 1,500-3,000 text tokens depending on density, plus the
	// page image (https://docs.claude.com/en/docs/build-with-claude/pdf-support,
	// "Estimate your costs"); the dry run takes the upper end so that budgets
	// are not exceeded.
	pdfTokensPerPage = 3000
	// pdfTextTokensPerPage: Converse without citations extracts a PDF's text
	// only ("approximately 1,000 tokens for a 3-page PDF" against 7,000 read
	// visually, same page); the dry run takes the dense end of the text range.
	pdfTextTokensPerPage = 1500
	// officeBytesPerToken: DOC/DOCX/XLS/XLSX are estimated from their file size
	// (compressed XML or binary records carry roughly a character of text per
	// two bytes, so one token per 8 bytes). A rough figure, flagged as such.
	officeBytesPerToken = 8
)

// TextTokens estimates the tokens of a text.
func TextTokens(s string) int64 {
	return int64(math.Ceil(float64(utf8.RuneCountInString(s)) / charsPerToken))
}

// ImageTokens is Anthropic's published formula after its own downscaling.
func ImageTokens(w, h int) int64 {
	if w <= 0 || h <= 0 {
		return 0
	}
	fw, fh := float64(w), float64(h)
	if long := math.Max(fw, fh); long > imageLongEdge {
		s := imageLongEdge / long
		fw, fh = math.Floor(fw*s), math.Floor(fh*s)
	}
	if fw*fh/pixelsPerToken > imageMaxTokens {
		s := math.Sqrt(imageMaxTokens * pixelsPerToken / (fw * fh))
		fw, fh = math.Floor(fw*s), math.Floor(fh*s)
	}
	return int64(math.Ceil(fw * fh / pixelsPerToken))
}

// BlockTokens estimates one checked block (Info filled by a Checker).
func BlockTokens(b *Block) int64 {
	switch b.Kind {
	case KindText:
		return TextTokens(b.Text)
	case KindOther:
		return int64(math.Ceil(float64(len(b.Raw)) / charsPerToken))
	case KindImage:
		return ImageTokens(b.Info.Width, b.Info.Height)
	}
	switch {
	case b.Info.Format == PDF && b.TextOnly:
		return int64(max(b.Info.Pages, 1)) * pdfTextTokensPerPage
	case b.Info.Format == PDF:
		return int64(max(b.Info.Pages, 1)) * pdfTokensPerPage
	case isText(b.Info.Format):
		return int64(math.Ceil(float64(b.Info.Runes) / charsPerToken))
	default:
		return int64(math.Ceil(float64(b.Info.Bytes) / officeBytesPerToken))
	}
}

// RecordTokens estimates a checked record's input tokens (messages only).
func RecordTokens(r *Record) int64 {
	var n int64
	for _, m := range r.Messages {
		for i := range m.Blocks {
			n += BlockTokens(&m.Blocks[i])
		}
	}
	return n
}

// Summary is what a dry run reports about the content of a set of records.
type Summary struct {
	Records int `json:"records"`
	// Blocks counts blocks by kind (text, image, document, other).
	Blocks map[Kind]int `json:"blocks"`
	// Formats counts images and documents by format (png, pdf, ...).
	Formats map[string]int `json:"formats,omitempty"`
	// Bytes is the decoded size of all images and documents.
	Bytes                int64      `json:"bytes"`
	EstimatedInputTokens int64      `json:"estimated_input_tokens"`
	Problems             []*Problem `json:"problems,omitempty"`
}

// Add counts a record after Check, with the problems Check returned (r may
// be nil when it did not parse).
func (s *Summary) Add(r *Record, problems []*Problem) {
	if s.Blocks == nil {
		s.Blocks = map[Kind]int{}
	}
	if s.Formats == nil {
		s.Formats = map[string]int{}
	}
	s.Records++
	s.Problems = append(s.Problems, problems...)
	if r == nil {
		return
	}
	for _, m := range r.Messages {
		for i := range m.Blocks {
			b := &m.Blocks[i]
			s.Blocks[b.Kind]++
			if b.Info.Format != "" {
				s.Formats[b.Info.Format]++
				s.Bytes += b.Info.Bytes
			}
		}
	}
	s.EstimatedInputTokens += RecordTokens(r)
}
