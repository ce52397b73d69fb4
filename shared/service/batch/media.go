package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
	m, _ := s.Models.LookupModel(req.Model)
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
