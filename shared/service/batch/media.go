package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Images and documents in records (shared/content): a submit checks every
// record whose messages carry image or document blocks against the model's
// input modalities, the bytes' real format and the documented limits of the
// path the record takes (Converse, in a Bedrock batch job or on demand; the
// Messages API in an Anthropic batch), plus the model's own document rules
// from the catalog (per-model PDF caps, citations for visual PDF reading),
// and refuses the whole submit on any problem. A message holding a document
// and no text gets a short text block (Converse refuses it otherwise) and the
// job a warning. Batch input lines carry a placeholder where their messages
// go; writing the line renders the messages there, reading s3:// parts
// streaming, so no part is held whole in memory.

// BlobOpener is content.Opener over the service's object storage: S3 on AWS,
// fsblob under make dev. Sizes are not asked for (0): the Checker measures the
// bytes as it reads them.
type BlobOpener struct{ Blobs service.Blobs }

// Open implements content.Opener.
func (o BlobOpener) Open(ctx context.Context, uri string) (io.ReadCloser, int64, error) {
	rc, err := o.Blobs.Open(ctx, uri, 0)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, 0, content.ErrNotInUploadArea
	}
	if err != nil {
		return nil, 0, err
	}
	return rc, 0, nil
}

// Head implements content.Pinner when the store can pin versions (S3 and
// fsblob can); otherwise size -1 and no version, and the Checker measures
// by reading.
func (o BlobOpener) Head(ctx context.Context, uri string) (int64, string, error) {
	v, ok := o.Blobs.(blob.Versioned)
	if !ok {
		return -1, "", nil
	}
	ver, err := v.Stat(ctx, uri)
	if errors.Is(err, blob.ErrNotFound) {
		return 0, "", content.ErrNotInUploadArea
	}
	return ver.Size, ver.Tag, err
}

// OpenPinned implements content.Pinner.
func (o BlobOpener) OpenPinned(ctx context.Context, uri string, size int64, version string) (io.ReadCloser, error) {
	v, ok := o.Blobs.(blob.Versioned)
	if !ok {
		return nil, errors.New("this store cannot pin an object's version")
	}
	rc, err := v.OpenVersion(ctx, uri, blob.Version{Size: size, Tag: version})
	switch {
	case errors.Is(err, blob.ErrChanged):
		return nil, content.ErrChanged
	case errors.Is(err, blob.ErrNotFound):
		return nil, content.ErrChanged // deleted since the check
	}
	return rc, err
}

// UploadArea is the caller's upload prefix, where create_upload places
// objects: the only place a record's s3:// source may point.
func UploadArea(bucket, owner string) string {
	return blob.Join(bucket, "uploads", service.OwnerTag(owner)) + "/"
}

// maxListedProblems bounds the problems one error lists.
const maxListedProblems = 20

// Media checks and renders the images and documents of one submit's records.
type Media struct {
	path     content.Path
	model    string
	title    string
	checker  *content.Checker // nil when path is ""
	renderer *content.Renderer
	recs     map[int]*content.Record // checked records by index (inline submits)
	offsets  map[int]int             // where the placeholder sits in the encoded line
	summary  content.Summary
	problems []*content.Problem
	// textBlocks: documents needing a text block beside them get one.
	textBlocks bool
	warnings   []string
	// bad holds the records with problems: a dry run reports them and does
	// not encode them (their blocks were never measured).
	bad map[int]bool
	// noSystem: the model takes no system prompt; system (the job's) or the
	// record's own goes first in the first user turn, as the encoder does
	// for the placeholder it is rendered over.
	noSystem bool
	system   string
}

// media is the unexported name the submit uses.
type media = Media

// hasMedia is a cheap filter: only messages that name an image, a document
// or a source can hold one (a text's own quotes are escaped).
func hasMedia(msgs json.RawMessage) bool {
	return bytes.Contains(msgs, []byte(`"source"`)) || bytes.Contains(msgs, []byte(`"image"`)) || bytes.Contains(msgs, []byte(`"document"`))
}

func recordHasMedia(r *content.Record) bool {
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Kind == content.KindImage || b.Kind == content.KindDocument {
				return true
			}
		}
	}
	return false
}

// mediaPath is the content path a submit's records take; "" when the model
// and mode carry no images or documents here.
func mediaPath(req *SubmitRequest, lim service.BatchLimits, m *model.Model) content.Path {
	if req.Mode == job.ModeOnDemand {
		return content.PathBedrockConverse
	}
	if lim.MediaPath == "" || m == nil {
		return ""
	}
	return content.Path(lim.MediaPath)
}

// NewMedia is the checker and renderer of a validated submit (req.Mode and
// req.Provider settled): s3:// sources must lie in req.Owner's upload area.
func (s *Service) NewMedia(req *SubmitRequest, lim service.BatchLimits) (*Media, error) {
	m, _ := s.LookupModel(req.Model)
	md := &Media{path: mediaPath(req, lim, m), model: req.Model, title: lim.Title, recs: map[int]*content.Record{}, offsets: map[int]int{}}
	if md.path == "" {
		return md, nil
	}
	var mods []string
	if m != nil {
		mods = m.InputModalities
	}
	store := &content.Store{Opener: BlobOpener{Blobs: s.Blobs}, Prefix: UploadArea(s.Bucket, req.Owner)}
	ch, err := content.NewChecker(md.path, req.Model, mods, store)
	if err != nil {
		return nil, err
	}
	md.noSystem, md.system = m != nil && m.NoSystemPrompt && md.path == content.PathBedrockConverse, req.Params.System
	if d := documentRules(m); d != nil && md.path == content.PathBedrockConverse {
		ch.PDF = content.PDFRules{MaxBytes: d.MaxPDFBytes, ExemptFromCap: d.PDFExemptFromCap, Citations: d.CitationsForPDF, Source: m.FactsSource}
		md.textBlocks = d.RequiresText
	}
	md.checker = ch
	md.renderer = &content.Renderer{Path: md.path, Store: store}
	return md, nil
}

// Check parses and checks record i: nil, nil when it has no image or
// document blocks (it is encoded as it is); otherwise the record with its
// blocks measured, and its problems. The summary counts it.
func (md *Media) Check(ctx context.Context, i int, r job.Input) (*content.Record, []*content.Problem) {
	if len(r.Messages) == 0 || !hasMedia(r.Messages) {
		return nil, nil
	}
	rec, err := content.Parse(i, r.ID, r.Messages)
	if err != nil {
		var p *content.Problem
		if !errors.As(err, &p) {
			p = &content.Problem{RecordID: r.ID, Where: fmt.Sprintf("records[%d].messages", i), Message: err.Error()}
		}
		md.add(nil, []*content.Problem{p})
		md.markBad(i)
		return nil, []*content.Problem{p}
	}
	if !recordHasMedia(rec) {
		return nil, nil
	}
	var ps []*content.Problem
	if md.checker == nil {
		ps = []*content.Problem{{RecordID: r.ID, Where: fmt.Sprintf("records[%d].messages", i),
			Message: fmt.Sprintf("model %s takes no images or documents on %s", md.model, md.title)}}
	} else {
		ps = md.checker.Check(ctx, rec)
	}
	if len(ps) == 0 && md.textBlocks && content.EnsureDocumentText(rec.Messages) && len(md.warnings) == 0 {
		md.warnings = append(md.warnings, content.TextAddedWarning)
	}
	md.add(rec, ps)
	if len(ps) > 0 {
		md.markBad(i)
	}
	return rec, ps
}

func (md *Media) markBad(i int) {
	if md.bad == nil {
		md.bad = map[int]bool{}
	}
	md.bad[i] = true
}

// documentRules is the model's document rules from the catalog (nil: none).
func documentRules(m *model.Model) *model.DocumentRules {
	if m == nil {
		return nil
	}
	return m.Documents
}

// checkMedia checks every record of an inline submit. Problems are kept on
// the result (a dry run reports them); submits refuse with err.
func (s *Service) checkMedia(ctx context.Context, req *SubmitRequest, lim service.BatchLimits) (*media, error) {
	var md *media
	for i := range req.Records {
		r := &req.Records[i]
		if len(r.Messages) == 0 || !hasMedia(r.Messages) {
			continue
		}
		if md == nil {
			var err error
			if md, err = s.NewMedia(req, lim); err != nil {
				return nil, err
			}
		}
		if rec, ps := md.Check(ctx, i, *r); rec != nil && len(ps) == 0 {
			md.recs[i] = rec
		}
	}
	return md, nil
}

func (md *Media) add(rec *content.Record, ps []*content.Problem) {
	md.summary.Add(rec, ps)
	md.problems = append(md.problems, ps...)
}

// Warnings say how checked records were changed to fit the model.
func (md *Media) Warnings() []string {
	if md == nil {
		return nil
	}
	return md.warnings
}

// Problems are the problems found so far.
func (md *Media) Problems() []*content.Problem { return md.problems }

// err is the submit's refusal: the first problems, each naming the record id,
// the block and the limit.
func (md *Media) err() error {
	if md == nil || len(md.problems) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s) with images or documents; nothing was submitted", len(md.problems))
	for i, p := range md.problems {
		if i == maxListedProblems {
			fmt.Fprintf(&b, "; and %d more", len(md.problems)-i)
			break
		}
		b.WriteString("; ")
		b.WriteString(p.Error())
	}
	return job.Fieldf("records", "%s", b.String())
}

// placeholder stands for record i's messages in its encoded line until the
// line is written: a valid Claude messages array, so the encoder accepts it.
func placeholder(i int) []byte {
	return []byte(fmt.Sprintf(`[{"role":"user","content":"%s"}]`, placeholderMark(i)))
}

// placeholderMark is the text of record i's placeholder, which every encoder
// carries into the line whatever shape it gives the messages.
func placeholderMark(i int) []byte {
	return []byte(fmt.Sprintf("mcpbatch-media-placeholder-%08d", i))
}

// encode encodes record i with the placeholder for its messages when it has
// checked images or documents (ok false: it has none).
func (md *Media) encode(i int, in job.Input, enc func(job.Input) ([]byte, error)) ([]byte, int, bool, error) {
	if md == nil {
		return nil, 0, false, nil
	}
	rec, ok := md.recs[i]
	if !ok {
		return nil, 0, false, nil
	}
	line, off, size, err := md.Encode(i, in, rec, enc)
	if err != nil {
		return nil, 0, true, err
	}
	md.offsets[i] = off
	return line, size, true, nil
}

// Encode encodes record i (whose checked record is rec) around a placeholder
// for its messages: the line, where the messages array holding the
// placeholder starts (the encoder may have reshaped the placeholder, as the
// Converse encoder does, but keeps it the whole "messages" value), and a
// bound on the line's rendered length (for the split).
func (md *Media) Encode(i int, in job.Input, rec *content.Record, enc func(job.Input) ([]byte, error)) (line []byte, off, size int, err error) {
	md.foldSystem(in, rec)
	ph := placeholder(i)
	in.Messages = ph
	if line, err = enc(in); err != nil {
		return nil, 0, 0, err
	}
	mark := bytes.Index(line, placeholderMark(i))
	key := -1
	if mark >= 0 {
		key = bytes.LastIndex(line[:mark], []byte(`"messages":`))
	}
	if key < 0 {
		return nil, 0, 0, fmt.Errorf("records[%d]: the provider's encoder did not carry messages as given", i)
	}
	off = key + len(`"messages":`)
	end := valueEnd(line, off)
	if end < 0 {
		return nil, 0, 0, fmt.Errorf("records[%d]: the provider's encoder wrote broken JSON around the messages", i)
	}
	return line, off, len(line) - (end - off) + renderedBound(rec), nil
}

// foldSystem puts the system prompt first in the first user turn of a
// record for a model that takes none (once: a record may be encoded twice).
func (md *Media) foldSystem(in job.Input, rec *content.Record) {
	sys := md.system
	if in.System != "" {
		sys = in.System
	}
	if !md.noSystem || sys == "" || len(rec.Messages) == 0 {
		return
	}
	first := &rec.Messages[0]
	if len(first.Blocks) > 0 && first.Blocks[0].Kind == content.KindText && first.Blocks[0].Text == sys {
		return
	}
	first.Blocks = append([]content.Block{{Kind: content.KindText, Text: sys}}, first.Blocks...)
}

// valueEnd is the index just past the JSON array or object starting at b[i]
// (strings skipped with their escapes), or -1.
func valueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// renderedBound is an upper bound on the length of rec's rendered messages:
// base64 parts are exact, text may grow by JSON escaping (at most 6×).
func renderedBound(rec *content.Record) int {
	n := 2
	for _, m := range rec.Messages {
		n += 40 + len(m.Role)
		for i := range m.Blocks {
			b := &m.Blocks[i]
			n += 200 + len(b.CacheControl) + 6*len(b.Name)
			switch b.Kind {
			case content.KindText:
				n += 6 * len(b.Text)
			case content.KindOther:
				n += len(b.Raw)
			default:
				if f := b.Info.Format; f == content.TXT || f == content.MD || f == content.CSV || f == content.HTML {
					n += int(6 * b.Info.Bytes)
				} else {
					n += int((b.Info.Bytes + 2) / 3 * 4)
				}
			}
		}
	}
	return n
}

// writeLine writes record i's line, rendering its messages in place of the
// placeholder when it has one.
func (md *Media) writeLine(ctx context.Context, w *bufio.Writer, i int, line []byte) error {
	if md != nil {
		if off, ok := md.offsets[i]; ok {
			return md.Write(ctx, w, i, md.recs[i], line, off)
		}
	}
	_, err := w.Write(line)
	return err
}

// Write writes a line from Encode with rec's messages rendered in place of
// the placeholder, s3:// parts read streaming.
func (md *Media) Write(ctx context.Context, w *bufio.Writer, i int, rec *content.Record, line []byte, off int) error {
	end := valueEnd(line, off)
	if end < 0 {
		return fmt.Errorf("records[%d]: no messages placeholder at offset %d", i, off)
	}
	w.Write(line[:off])
	if err := md.renderer.WriteMessages(ctx, w, rec.Messages); err != nil {
		return fmt.Errorf("records[%d]: %w", i, err)
	}
	_, err := w.Write(line[end:])
	return err
}
