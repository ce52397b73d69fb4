package bedrock

// Converse's image and document blocks: the limits Converse documents and
// what a model reads (its row's input modalities, bedrock_models.go).

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// Converse: "up to 20 images ... no more than 3.75 MB, 8000 px, and 8000 px";
// "up to five documents ... no more than 4.5 MB"
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html);
// formats from API_runtime_ImageBlock.html and API_runtime_DocumentBlock.html.
var converseRules = sim.MediaRules{MaxImageBytes: 3_750_000, MaxSide: 8000, MaxImages: 20,
	MaxDocBytes: 4_500_000, MaxDocs: 5, MaxPDFPages: 100,
	DocFormats: []string{"pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"}}

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
func converseMedia(inv invocation, req converseRequest) ([]sim.SeenPart, error) {
	reads := bedrockReads(inv)
	r := converseRules
	var seen []sim.SeenPart
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
				if n := len(img.Source.Bytes); int64(n) > r.MaxImageBytes {
					return nil, fmt.Errorf("%s.image.source.Bytes: image is %d bytes; the maximum image size is 3.75 MB", at, n)
				}
				// https://github.com/aws-samples/amazon-bedrock-client-for-mac/issues/130
				if got := sim.SniffImage(img.Source.Bytes); got != "" && got != img.Format {
					return nil, fmt.Errorf("The model returned the following errors: %s.image.source.Bytes: The image was specified using the image/%s media type, but the image appears to be a image/%s image", at, img.Format, got)
				}
				_, w, h, err := sim.DecodeImage(img.Source.Bytes)
				if err != nil {
					return nil, fmt.Errorf("The model returned the following errors: Could not process image")
				}
				if w > r.MaxSide || h > r.MaxSide {
					return nil, fmt.Errorf("%s.image: image is %dx%d px; the maximum height and width are %d px", at, w, h, r.MaxSide)
				}
				images++
				seen = append(seen, sim.SeenPart{MediaType: "image/" + img.Format, Width: w, Height: h, Bytes: len(img.Source.Bytes)})
			case blk.Document != nil:
				if !reads.Document {
					return nil, fmt.Errorf("This model doesn't support the document content block that you provided. Update the content block and try again.")
				}
				d := blk.Document
				if !strings.Contains(" "+strings.Join(r.DocFormats, " ")+" ", " "+d.Format+" ") {
					return nil, fmt.Errorf("1 validation error detected: Value '%s' at 'messages.%d.member.content.%d.member.document.format' failed to satisfy constraint: Member must satisfy enum value set: [%s]", d.Format, m+1, b+1, strings.Join(r.DocFormats, ", "))
				}
				if !converseDocName.MatchString(d.Name) || len(d.Name) > 200 {
					return nil, fmt.Errorf("%s.document.name: The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character.", at)
				}
				if n := len(d.Source.Bytes); int64(n) > r.MaxDocBytes && !docCapExempt(inv.base, d.Format) {
					return nil, fmt.Errorf("%s.document.source.Bytes: document is %d bytes; the maximum document size is 4.5 MB", at, n)
				}
				p := sim.SeenPart{MediaType: d.Format, Bytes: len(d.Source.Bytes)}
				if d.Format == "pdf" {
					if !bytes.HasPrefix(d.Source.Bytes, []byte("%PDF-")) {
						return nil, fmt.Errorf("The model returned the following errors: %s.document.source.Bytes: The PDF specified was not valid.", at)
					}
					p.MediaType, p.Pages = "application/pdf", max(1, sim.PDFPages(d.Source.Bytes))
					// Claude reads a PDF visually on Converse only with citations on;
					// otherwise Converse extracts its text.
					p.TextOnly = d.Citations == nil || !d.Citations.Enabled || !strings.HasPrefix(inv.base, "anthropic.")
					pages += p.Pages
				}
				docs++
				seen = append(seen, p)
			}
		}
	}
	switch {
	case images > r.MaxImages:
		return nil, fmt.Errorf("messages: %d images in the request; you can include up to %d images", images, r.MaxImages)
	case docs > r.MaxDocs:
		return nil, fmt.Errorf("messages: %d documents in the request; you can include up to %d documents", docs, r.MaxDocs)
	case pages > r.MaxPDFPages && strings.HasPrefix(inv.base, "anthropic."):
		return nil, fmt.Errorf("The model returned the following errors: A maximum of %d PDF pages may be provided.", r.MaxPDFPages)
	}
	return seen, nil
}

// bedrockReads is what a Bedrock model reads; an unknown model is served
// permissively.
func bedrockReads(inv invocation) sim.Modal {
	if !inv.known {
		return sim.Modal{Image: true, Document: true}
	}
	return inv.m.reads()
}
