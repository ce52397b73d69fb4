package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/report"
)

// DocRef is one object of a source.
type DocRef struct {
	Key  string
	Size int64
}

// Source lists and opens a pipeline's documents.
type Source interface {
	List(ctx context.Context) ([]DocRef, error)
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// BlobSource reads documents under an s3:// prefix (S3, or fsblob locally).
type BlobSource struct {
	Blobs  blob.Store
	Prefix string
}

// List lists the objects under the prefix; keys are relative to it.
func (s BlobSource) List(ctx context.Context) ([]DocRef, error) {
	objs, err := s.Blobs.List(ctx, s.Prefix)
	if err != nil {
		return nil, fmt.Errorf("list source %s: %w", s.Prefix, err)
	}
	out := make([]DocRef, 0, len(objs))
	for _, o := range objs {
		out = append(out, DocRef{Key: strings.TrimPrefix(strings.TrimPrefix(o.URI, s.Prefix), "/"), Size: o.Size})
	}
	return out, nil
}

// Open streams one document.
func (s BlobSource) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.Blobs.Open(ctx, blob.Join(s.Prefix, key), 0)
}

// DirSource reads documents from a local folder (make dev, make demo).
type DirSource struct{ Dir string }

// List walks the folder in lexical order.
func (s DirSource) List(ctx context.Context) ([]DocRef, error) {
	var out []DocRef
	if _, err := os.Stat(s.Dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // like an empty S3 prefix: the run reports that there is nothing to do
	}
	err := filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.Dir, p)
		out = append(out, DocRef{Key: filepath.ToSlash(rel), Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list source folder %s: %w", s.Dir, err)
	}
	return out, nil
}

// Open opens one file.
func (s DirSource) Open(_ context.Context, key string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(s.Dir, filepath.FromSlash(key)))
}

// Document is what a prompt template sees.
type Document struct {
	Key      string // source key; a .jsonl line is "<file>#<line>"
	Name     string // base name
	Kind     string // txt, md, json, jsonl
	Text     string // the document text (a .json/.jsonl document's raw JSON)
	JSON     any    // the parsed document for json and jsonl, else nil
	Pipeline string
	Date     string
}

// data is what a prompt template sees: the fields by name.
func (d Document) data() map[string]any {
	return map[string]any{"Key": d.Key, "Name": d.Name, "Kind": d.Kind, "Text": d.Text, "JSON": d.JSON, "Pipeline": d.Pipeline, "Date": d.Date}
}

// RecordID is the stable record id of a document key, so reruns line up.
func RecordID(key string) string {
	h := sha256.Sum256([]byte(key))
	return "d" + hex.EncodeToString(h[:12])
}

// Built is the outcome of reading a source: the records and what was skipped.
type Built struct {
	Records []job.Input
	// Media are the images and PDFs, rendered into records by the runner
	// (it copies each into the pipeline's upload area first).
	Media     []MediaDoc
	Keys      map[string]string // record id → document key
	Skipped   []report.Skipped
	Documents int
}

// Build lists the source and renders one record per document. A document that
// cannot be used (unsupported type, too big, unreadable, not valid JSON, or the
// template fails on it) is skipped with its reason; it never aborts the run.
func Build(ctx context.Context, p *Pipeline, src Source, date string) (*Built, error) {
	return build(ctx, p, src, date, 0)
}

// build is Build stopping once stop records (or media files) are usable (0:
// read everything): run_pipeline only needs to know that one is.
func build(ctx context.Context, p *Pipeline, src Source, date string, stop int) (*Built, error) {
	tmpl, err := p.template()
	if err != nil {
		return nil, job.Fieldf("prompt", "pipeline %s: %v", p.Name, err)
	}
	refs, err := src.List(ctx)
	if err != nil {
		return nil, err
	}
	b := &Built{Keys: map[string]string{}}
	skip := func(key, format string, a ...any) {
		b.Skipped = append(b.Skipped, report.Skipped{Key: key, Reason: fmt.Sprintf(format, a...)})
	}
	for _, ref := range refs {
		if stop > 0 && len(b.Records)+len(b.Media) >= stop {
			break
		}
		kind := strings.TrimPrefix(strings.ToLower(path.Ext(ref.Key)), ".")
		switch {
		case kind == "txt", kind == "md", kind == "json", kind == "jsonl":
		case mediaKinds[kind]:
			b.Documents++
			if err := b.addMedia(p, tmpl, ref, kind, date); err != nil {
				skip(ref.Key, "%v", err)
			}
			continue
		default:
			b.Documents++
			skip(ref.Key, "unsupported document type %q; sources hold .txt, .md, .json, .jsonl, images (.png, .jpg, .gif, .webp) and .pdf", path.Ext(ref.Key))
			continue
		}
		if ref.Size > p.MaxDocumentBytes && kind != "jsonl" {
			b.Documents++
			skip(ref.Key, "%d bytes is over the pipeline's max_document_bytes of %d", ref.Size, p.MaxDocumentBytes)
			continue
		}
		docs, err := read(ctx, src, ref, kind, p.MaxDocumentBytes)
		if err != nil {
			b.Documents++
			skip(ref.Key, "unreadable: %v", err)
			continue
		}
		for _, d := range docs {
			b.Documents++
			if d.err != nil {
				skip(d.Key, "%v", d.err)
				continue
			}
			d.Pipeline, d.Date = p.Name, date
			var buf bytes.Buffer
			if err := tmpl.Execute(&buf, d.Document.data()); err != nil {
				skip(d.Key, "prompt template failed on document %s: %v", d.Key, err)
				continue
			}
			id := RecordID(d.Key)
			b.Keys[id] = d.Key
			b.Records = append(b.Records, job.Input{ID: id, Prompt: buf.String()})
		}
	}
	return b, nil
}

type docOrErr struct {
	Document
	err error
}

// read loads one source object as one document, or one per line for .jsonl.
func read(ctx context.Context, src Source, ref DocRef, kind string, maxBytes int64) ([]docOrErr, error) {
	rc, err := src.Open(ctx, ref.Key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	name := path.Base(ref.Key)
	if kind == "jsonl" {
		var out []docOrErr
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 64<<10), int(maxBytes)+1)
		line := 0
		for sc.Scan() {
			line++
			raw := bytes.TrimSpace(sc.Bytes())
			if len(raw) == 0 {
				continue
			}
			d := docOrErr{Document: Document{Key: fmt.Sprintf("%s#%d", ref.Key, line), Name: name, Kind: kind, Text: string(raw)}}
			if err := json.Unmarshal(raw, &d.JSON); err != nil {
				d.err = fmt.Errorf("line %d is not valid JSON: %v", line, err)
			}
			out = append(out, d)
		}
		if errors.Is(sc.Err(), bufio.ErrTooLong) {
			return out, fmt.Errorf("line %d is over the pipeline's max_document_bytes of %d", line+1, maxBytes)
		}
		return out, sc.Err()
	}
	raw, err := io.ReadAll(io.LimitReader(rc, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > maxBytes {
		return nil, fmt.Errorf("over the pipeline's max_document_bytes of %d", maxBytes)
	}
	if !utf8.Valid(raw) {
		return nil, errors.New("not UTF-8 text")
	}
	d := docOrErr{Document: Document{Key: ref.Key, Name: name, Kind: kind, Text: string(raw)}}
	if kind == "json" {
		if err := json.Unmarshal(raw, &d.JSON); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", err)
		}
	}
	if strings.TrimSpace(d.Text) == "" {
		return nil, errors.New("empty document")
	}
	return []docOrErr{d}, nil
}
