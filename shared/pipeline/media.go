package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/pipeline/prompt"
	"github.com/mcpbatch/mcpbatch/shared/report"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// Images and PDFs in a pipeline's documents folder: each becomes one record
// whose content is the file (an image or document block referencing a copy in
// the pipeline's own upload area, so the submit's checks hold it like any
// caller's upload) and the rendered prompt. The template sees Kind (png, jpg,
// gif, webp, pdf), Key and Name; Text is empty. A file the model or path
// cannot take (format, size, pixels, a document on a path without documents)
// is skipped with the checker's reason; it never fails the run.

// mediaKinds are the extensions read as images and PDFs.
var mediaKinds = map[string]bool{"png": true, "jpg": true, "jpeg": true, "gif": true, "webp": true, "pdf": true}

// MediaDoc is one image or PDF of a run.
type MediaDoc struct {
	ID, Key, Name, Kind, Prompt string
	Size                        int64
}

func (b *Built) addMedia(p *Pipeline, tmpl *prompt.Template, ref DocRef, kind, date string) error {
	if ref.Size > transfer.MaxMediaBytes {
		return fmt.Errorf("%d bytes is over the %d-byte limit of one image or document", ref.Size, transfer.MaxMediaBytes)
	}
	d := Document{Key: ref.Key, Name: path.Base(ref.Key), Kind: kind, Pipeline: p.Name, Date: date}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, d.data()); err != nil {
		return fmt.Errorf("prompt template failed on document %s: %v", ref.Key, err)
	}
	b.Media = append(b.Media, MediaDoc{ID: RecordID(ref.Key), Key: ref.Key, Name: d.Name, Kind: kind, Prompt: buf.String(), Size: ref.Size})
	return nil
}

// docName fits a file name to the document-name rule of Converse
// (alphanumerics, single spaces, hyphens, parentheses, brackets).
var notNameChar = regexp.MustCompile(`[^A-Za-z0-9\-\(\)\[\]]+`)

func docName(file string) string {
	n := strings.TrimSpace(notNameChar.ReplaceAllString(file, " "))
	if n == "" {
		n = "document"
	}
	return n[:min(len(n), 200)]
}

// mediaRecords copies each image or PDF into the pipeline's upload area and
// makes its record; a file that cannot be read or is neither is skipped.
func (r *Runner) mediaRecords(ctx context.Context, p *Pipeline, src Source, date string, b *Built) {
	if len(b.Media) == 0 {
		return
	}
	area := batch.UploadArea(r.Bucket, Owner(p.Name)) + "runs/" + date + "/"
	store := &content.Store{Opener: batch.BlobOpener{Blobs: r.Blobs}, Prefix: area}
	for _, m := range b.Media {
		uri := area + m.ID + "." + m.Kind
		rc, err := src.Open(ctx, m.Key)
		if err == nil {
			_, err = r.Blobs.Put(ctx, uri, rc, "application/octet-stream")
			rc.Close()
		}
		if err != nil {
			b.Skipped = append(b.Skipped, report.Skipped{Key: m.Key, Reason: fmt.Sprintf("unreadable: %v", err)})
			continue
		}
		blk, err := store.Block(ctx, uri, docName(m.Name))
		if err != nil {
			b.Skipped = append(b.Skipped, report.Skipped{Key: m.Key, Reason: err.Error()})
			continue
		}
		src := map[string]any{"type": blk.Kind, "source": map[string]any{"type": "s3", "uri": blk.URI}}
		if blk.Kind == content.KindDocument {
			src["title"] = blk.Name
		}
		msgs, _ := json.Marshal([]any{map[string]any{"role": "user", "content": []any{src, map[string]any{"type": "text", "text": m.Prompt}}}})
		b.Records = append(b.Records, job.Input{ID: m.ID, Messages: msgs})
		b.Keys[m.ID] = m.Key
	}
}

// dryRunner checks records without submitting them.
type dryRunner interface {
	DryRun(ctx context.Context, req batch.SubmitRequest) (*batch.DryRunResult, error)
}

// dropRefused skips the records the submit would refuse for their images or
// documents, with the checker's words, so one bad file never fails the run.
func (r *Runner) dropRefused(ctx context.Context, req batch.SubmitRequest, b *Built) error {
	if len(b.Media) == 0 || len(b.Records) == 0 {
		return nil
	}
	dr, ok := r.Svc.(dryRunner)
	if !ok {
		return nil
	}
	res, err := dr.DryRun(ctx, req)
	if err != nil || res.Content == nil || len(res.Content.Problems) == 0 {
		return err
	}
	bad := map[string]string{}
	for _, p := range res.Content.Problems {
		if _, seen := bad[p.RecordID]; !seen {
			bad[p.RecordID] = p.Message + limitOf(p)
		}
	}
	kept := b.Records[:0]
	for _, rec := range b.Records {
		if why, ok := bad[rec.ID]; ok {
			b.Skipped = append(b.Skipped, report.Skipped{Key: b.Keys[rec.ID], Reason: why})
			delete(b.Keys, rec.ID)
			continue
		}
		kept = append(kept, rec)
	}
	b.Records = kept
	return nil
}

func limitOf(p *content.Problem) string {
	if p.Limit == "" {
		return ""
	}
	return "; limit: " + p.Limit
}
