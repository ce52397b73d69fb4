package content

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Problem is one validation failure, naming the record, the block and the
// limit.
type Problem struct {
	RecordID string `json:"record_id,omitempty"`
	// Where is the input path: records[i].messages[m].content[b].
	Where string `json:"where"`
	// Limit names the documented limit, with its source, when one was crossed.
	Limit   string `json:"limit,omitempty"`
	Message string `json:"message"`
}

func (p *Problem) Error() string {
	var b strings.Builder
	if p.RecordID != "" {
		fmt.Fprintf(&b, "record %q: ", p.RecordID)
	}
	b.WriteString(p.Where)
	b.WriteString(": ")
	b.WriteString(p.Message)
	if p.Limit != "" {
		b.WriteString("; limit: ")
		b.WriteString(p.Limit)
	}
	return b.String()
}

func (r *Record) errf(where, limit, format string, a ...any) *Problem {
	return &Problem{RecordID: r.ID, Where: where, Limit: limit, Message: fmt.Sprintf(format, a...)}
}

// Checker validates records for one model on one path.
type Checker struct {
	Path   Path
	Limits Limits
	// Model names the model in errors; Modalities are its input modalities
	// from the catalog ("text", "image", "document").
	Model      string
	Modalities []string
	// Store resolves s3:// sources; nil refuses them.
	Store *Store
	// Keep keeps each s3:// part's bytes on its block (Block.Bytes) so it is
	// read once for the check and the request: on-demand runs, whose caller
	// bounds the bytes held at a time.
	Keep bool
	// PDF holds the model's own PDF rules on top of the path's (zero: the
	// path's document cap applies, text-only reading on Converse).
	PDF PDFRules
}

// PDFRules are a model's PDF rules, from the catalog (model.DocumentRules).
type PDFRules struct {
	// MaxBytes caps one PDF (0: the path's document cap).
	MaxBytes int64
	// ExemptFromCap: the model reads PDFs past the path's document cap.
	ExemptFromCap bool
	// Citations: PDFs are read visually only with citations on (Claude on
	// Converse); checked PDF blocks get Block.Citations.
	Citations bool
	// Source names where the rules come from, for error messages.
	Source string
}

// NewChecker is a Checker with the documented limits of path.
func NewChecker(path Path, model string, modalities []string, store *Store) (*Checker, error) {
	l, err := LimitsFor(path)
	if err != nil {
		return nil, err
	}
	return &Checker{Path: path, Limits: l, Model: model, Modalities: modalities, Store: store}, nil
}

// Validate checks rec and returns its first problem (nil when none). It fills
// each image and document block's Info.
func (c *Checker) Validate(ctx context.Context, rec *Record) error {
	if ps := c.Check(ctx, rec); len(ps) > 0 {
		return ps[0]
	}
	return nil
}

// CheckRecord parses and checks one record's messages: the record, with its
// blocks' Info filled, and every problem found (a parse error is one problem).
func (c *Checker) CheckRecord(ctx context.Context, index int, id string, messages json.RawMessage) (*Record, []*Problem) {
	rec, err := Parse(index, id, messages)
	if err != nil {
		var p *Problem
		if !errors.As(err, &p) {
			p = &Problem{RecordID: id, Where: fmt.Sprintf("records[%d].messages", index), Message: err.Error()}
		}
		return nil, []*Problem{p}
	}
	return rec, c.Check(ctx, rec)
}

// Check checks every block of rec and returns its problems, in order. What
// can be judged without reading a part is judged first: the number of
// images, documents and (by their sizes, from a head of each s3:// object)
// the request's bytes; a record over one of those is refused before any
// part is read, and once a part fails no further s3:// part is read.
func (c *Checker) Check(ctx context.Context, rec *Record) []*Problem {
	if ps := c.precheck(ctx, rec); len(ps) > 0 {
		return ps
	}
	var ps []*Problem
	l := c.Limits
	var images, pages int
	var reqBytes int64
	type pos struct{ m, b int }
	var imagePos []pos
	for m := range rec.Messages {
		msg := &rec.Messages[m]
		for b := range msg.Blocks {
			blk := &msg.Blocks[b]
			where := rec.Where(m, b)
			switch blk.Kind {
			case KindText:
				reqBytes += int64(len(blk.Text))
				continue
			case KindOther:
				if c.Path == PathBedrockConverse {
					ps = append(ps, rec.errf(where, "", "block type is not one %s accepts from a record (text, image, document)", c.Path))
				}
				reqBytes += int64(len(blk.Raw))
				continue
			}
			if len(ps) > 0 && blk.Source == SourceS3 {
				continue // the record is refused already: read no more
			}
			if p := c.checkBinary(ctx, rec, where, msg.Role, blk); p != nil {
				ps = append(ps, p)
				continue
			}
			reqBytes += base64Len(blk.Info.Bytes)
			switch blk.Kind {
			case KindImage:
				images++
				imagePos = append(imagePos, pos{m, b})
			case KindDocument:
				pages += blk.Info.Pages
			}
		}
	}
	// The image and document counts were judged by precheck.
	last := fmt.Sprintf("records[%d].messages", rec.Index)
	if l.ManyImages > 0 && images > l.ManyImages {
		for _, p := range imagePos {
			in := rec.Messages[p.m].Blocks[p.b].Info
			if in.Width > l.ManyImagesSide || in.Height > l.ManyImagesSide {
				ps = append(ps, rec.errf(rec.Where(p.m, p.b), fmt.Sprintf("%s: with more than %d images in a request, each at most %dx%d px%s", c.Path, l.ManyImages, l.ManyImagesSide, l.ManyImagesSide, l.source("images")),
					"image is %dx%d px in a request of %d images", in.Width, in.Height, images))
			}
		}
	}
	if l.MaxPDFPages > 0 && pages > l.MaxPDFPages {
		ps = append(ps, rec.errf(last, fmt.Sprintf("%s: at most %d PDF pages per request%s", c.Path, l.MaxPDFPages, l.source("pages")), "its PDFs have %d pages", pages))
	}
	if l.MaxRequestBytes > 0 && reqBytes > l.MaxRequestBytes {
		ps = append(ps, rec.errf(last, fmt.Sprintf("%s: request body at most %d bytes%s", c.Path, l.MaxRequestBytes, l.source("request")), "its content alone encodes to about %d bytes", reqBytes))
	}
	return ps
}

// precheck counts a record's images and documents and sums the sizes its
// s3:// objects have by a head (base64 parts by their length), and names
// any per-request limit crossed, without reading a part.
func (c *Checker) precheck(ctx context.Context, rec *Record) []*Problem {
	l := c.Limits
	var images, docs int
	var reqBytes int64
	var ps []*Problem
	for m := range rec.Messages {
		for b := range rec.Messages[m].Blocks {
			blk := &rec.Messages[m].Blocks[b]
			switch blk.Kind {
			case KindText:
				reqBytes += int64(len(blk.Text))
				continue
			case KindOther:
				reqBytes += int64(len(blk.Raw))
				continue
			case KindImage:
				images++
			case KindDocument:
				docs++
			}
			switch blk.Source {
			case SourceBase64:
				reqBytes += base64Len(decodedLen(blk.Data))
			case SourceS3:
				if h := c.head(ctx, blk); h.ok {
					reqBytes += base64Len(h.size)
					// A part its head already shows too big is refused
					// before any part before it is read.
					if p := c.headTooBig(rec, rec.Where(m, b), blk, h.size); p != nil {
						ps = append(ps, p)
					}
				}
			}
		}
	}
	last := fmt.Sprintf("records[%d].messages", rec.Index)
	if l.MaxImages > 0 && images > l.MaxImages {
		ps = append(ps, rec.errf(last, fmt.Sprintf("%s: at most %d images per request%s", c.Path, l.MaxImages, l.source("images")), "has %d images", images))
	}
	if l.MaxDocuments > 0 && docs > l.MaxDocuments {
		ps = append(ps, rec.errf(last, fmt.Sprintf("%s: at most %d documents per request%s", c.Path, l.MaxDocuments, l.source("document")), "has %d documents", docs))
	}
	if l.MaxRequestBytes > 0 && reqBytes > l.MaxRequestBytes {
		ps = append(ps, rec.errf(last, fmt.Sprintf("%s: request body at most %d bytes%s", c.Path, l.MaxRequestBytes, l.source("request")), "its content alone encodes to about %d bytes", reqBytes))
	}
	return ps
}

// Weigh is an upper bound on the bytes Check keeps of rec's s3:// parts
// (Keep): their sizes by a head, or the path's per-part limit when the store
// cannot tell. A caller bounding the bytes held at a time weighs first.
func (c *Checker) Weigh(ctx context.Context, rec *Record) int64 {
	var n int64
	for m := range rec.Messages {
		for b := range rec.Messages[m].Blocks {
			blk := &rec.Messages[m].Blocks[b]
			if blk.Source != SourceS3 || (blk.Kind != KindImage && blk.Kind != KindDocument) {
				continue
			}
			if h := c.head(ctx, blk); h.ok {
				n += h.size
			} else if lim := c.maxBytes(blk.Kind, FormatOf(blk.MediaType)); lim > 0 {
				n += lim
			} else {
				n += inspectLimit
			}
		}
	}
	return n
}

// head asks the store once for an s3:// block's size and version.
func (c *Checker) head(ctx context.Context, blk *Block) *head {
	if blk.head == nil {
		h := &head{}
		if c.Store != nil {
			h.size, h.version, h.ok, h.err = c.Store.Head(ctx, blk.URI)
		}
		blk.head = h
	}
	return blk.head
}

func (c *Checker) reads(kind Kind) bool { return slices.Contains(c.Modalities, string(kind)) }

func (c *Checker) checkBinary(ctx context.Context, rec *Record, where, role string, blk *Block) *Problem {
	l := c.Limits
	kind := string(blk.Kind)
	if !c.reads(blk.Kind) {
		return rec.errf(where, "", "model %s does not accept %s input (its input modalities: %s)", c.Model, kind, strings.Join(c.Modalities, ", "))
	}
	if role != "user" {
		return rec.errf(where, "", "%s blocks are accepted only in user messages, not %q", kind, role)
	}
	allowed := l.ImageFormats
	if blk.Kind == KindDocument {
		allowed = l.DocumentFormats
	}
	if len(allowed) == 0 {
		return rec.errf(where, fmt.Sprintf("%s accepts no %s blocks%s", c.Path, kind, l.source(kind)), "%s blocks cannot be sent on this path", kind)
	}
	declared := ""
	if blk.MediaType != "" {
		declared = FormatOf(blk.MediaType)
		if declared == "" || !slices.Contains(allowed, declared) {
			return rec.errf(where, fmt.Sprintf("%s %s formats: %s%s", c.Path, kind, mediaList(allowed), l.source(kind)), "media_type %q is not accepted", blk.MediaType)
		}
	}
	var r io.Reader
	var size int64
	switch blk.Source {
	case SourceBase64:
		r = newB64Reader(blk.Data)
		size = decodedLen(blk.Data)
	case SourceS3:
		h := c.head(ctx, blk)
		var rc io.ReadCloser
		var err error
		switch {
		case h.err != nil:
			return rec.errf(where+".source.uri", "", "%v", h.err)
		case h.ok:
			if p := c.headTooBig(rec, where, blk, h.size); p != nil {
				return p
			}
			rc, err = c.Store.OpenPinned(ctx, blk.URI, h.size, h.version)
			size = h.size
		default:
			rc, size, err = c.Store.Open(ctx, blk.URI)
		}
		if err != nil {
			return rec.errf(where+".source.uri", "", "%v", err)
		}
		defer rc.Close()
		r = rc
		if c.Keep {
			lim := c.maxBytes(blk.Kind, declared)
			if lim <= 0 {
				lim = inspectLimit
			}
			// Sized by what can be read, never by the object's HEAD alone:
			// an object replaced by a huge one must not allocate its size.
			buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), lim)+bytes.MinRead))
			r = io.TeeReader(io.LimitReader(rc, max(lim, size)+1), buf)
			defer func() {
				if blk.Info.Format != "" {
					blk.Bytes = buf.Bytes()
				}
			}()
		}
	}
	// Refuse by declared size before reading a byte of an oversized object
	// (a PDF may have its own cap: only the smaller of the two is sure).
	if max := c.maxBytes(blk.Kind, declared); max > 0 && size > 0 && c.measured(blk.Kind, size) > max && (blk.Kind == KindImage || declared != "" || c.pdfCapNoLarger(max)) {
		return c.sizeProblem(rec, where, blk.Kind, declared, size)
	}
	hint := blk.Name
	if blk.URI != "" {
		hint = blk.URI
	}
	info, err := inspect(r, declared, hint)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return rec.errf(where+".source.data", "", "is not valid base64 (at byte %d)", int64(ce))
		}
		return rec.errf(where, "", "%s %v", kind, err)
	}
	if h := blk.head; h != nil && h.ok {
		info.Version = h.version
	}
	blk.Info = info
	if !slices.Contains(allowed, info.Format) {
		return rec.errf(where, fmt.Sprintf("%s %s formats: %s%s", c.Path, kind, mediaList(allowed), l.source(kind)), "%s is %s", kind, describe(info.Format))
	}
	if (blk.Kind == KindImage) != isImage(info.Format) {
		return rec.errf(where, "", "a %s block holds %s bytes", kind, describe(info.Format))
	}
	if max := c.maxBytes(blk.Kind, info.Format); max > 0 && c.measured(blk.Kind, info.Bytes) > max {
		return c.sizeProblem(rec, where, blk.Kind, info.Format, info.Bytes)
	}
	if blk.Kind == KindDocument && info.Format == PDF && c.Path == PathBedrockConverse {
		blk.Citations, blk.TextOnly = c.PDF.Citations, !c.PDF.Citations
	}
	if blk.Kind == KindImage && l.MaxImageSide > 0 && (info.Width > l.MaxImageSide || info.Height > l.MaxImageSide) {
		return rec.errf(where, fmt.Sprintf("%s: image at most %dx%d px%s", c.Path, l.MaxImageSide, l.MaxImageSide, l.source("image")), "image is %dx%d px", info.Width, info.Height)
	}
	if blk.Kind == KindDocument && l.DocumentNames && blk.Name != "" {
		if msg := badDocumentName(blk.Name); msg != "" {
			return rec.errf(where+".name", "Converse document name: alphanumerics, single whitespace, hyphens, parentheses and square brackets, 1-200 characters (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html)", "%s", msg)
		}
	}
	return nil
}

// pdfCapNoLarger: a PDF may not be larger than max either, so an
// undeclared document over max is refused before it is read.
func (c *Checker) pdfCapNoLarger(max int64) bool {
	return !c.PDF.ExemptFromCap && (c.PDF.MaxBytes == 0 || c.PDF.MaxBytes <= max)
}

// maxBytes is the cap on one block of kind k in format (format "" when
// not known yet): the model's PDF rules replace the path's document cap.
func (c *Checker) maxBytes(k Kind, format string) int64 {
	if k == KindImage {
		return c.Limits.MaxImageBytes
	}
	if format == PDF {
		switch {
		case c.PDF.ExemptFromCap:
			return 0
		case c.PDF.MaxBytes > 0:
			return c.PDF.MaxBytes
		}
	}
	return c.Limits.MaxDocumentBytes
}

// measured is the size a limit is compared with: Anthropic counts an image's
// base64 text.
func (c *Checker) measured(k Kind, n int64) int64 {
	if k == KindImage && c.Limits.ImageBytesBase64 {
		return base64Len(n)
	}
	return n
}

// headTooBig is blk's size problem when the size its head reports settles
// it: an image, or a document whose format is declared or whose PDF cap is
// no larger than the path's (an undeclared document is judged once read).
func (c *Checker) headTooBig(rec *Record, where string, blk *Block, size int64) *Problem {
	declared := FormatOf(blk.MediaType)
	if max := c.maxBytes(blk.Kind, declared); max > 0 && c.measured(blk.Kind, size) > max && (blk.Kind == KindImage || declared != "" || c.pdfCapNoLarger(max)) {
		return c.sizeProblem(rec, where, blk.Kind, declared, size)
	}
	return nil
}

func (c *Checker) sizeProblem(rec *Record, where string, k Kind, format string, n int64) *Problem {
	src := c.Limits.source(string(k))
	if format == PDF && c.PDF.MaxBytes > 0 && c.PDF.Source != "" {
		src = " (" + c.PDF.Source + ")"
	}
	limit := fmt.Sprintf("%s: %s at most %d bytes%s", c.Path, k, c.maxBytes(k, format), src)
	if k == KindImage && c.Limits.ImageBytesBase64 {
		limit = fmt.Sprintf("%s: %s at most %d bytes as base64%s", c.Path, k, c.maxBytes(k, format), src)
		return rec.errf(where, limit, "%s is %d bytes (%d bytes as base64)", k, n, c.measured(k, n))
	}
	return rec.errf(where, limit, "%s is %d bytes", k, n)
}

func base64Len(n int64) int64 { return (n + 2) / 3 * 4 }

func mediaList(fs []string) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = MediaType(f)
	}
	return strings.Join(out, ", ")
}

var docNameOK = regexp.MustCompile(`^[A-Za-z0-9\s\-\(\)\[\]]+$`)

func badDocumentName(n string) string {
	switch {
	case len(n) > 200:
		return fmt.Sprintf("document name is %d characters", len(n))
	case !docNameOK.MatchString(n):
		return fmt.Sprintf("document name %q has a character other than letters, digits, whitespace, hyphens, parentheses and square brackets", n)
	case regexp.MustCompile(`\s\s`).MatchString(n):
		return fmt.Sprintf("document name %q has more than one whitespace character in a row", n)
	}
	return ""
}

// decodedLen is the exact decoded size of padded base64 text.
func decodedLen(s string) int64 {
	n := int64(len(s)) / 4 * 3
	for i := 0; i < 2 && len(s) > i && s[len(s)-1-i] == '='; i++ {
		n--
	}
	return n
}
