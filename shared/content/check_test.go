package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

const prefix = "s3://uploads-bucket/uploads/alice/"

func imgBlock(mt string, data []byte) map[string]any {
	return map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": mt, "data": b64(data)}}
}

func docBlock(mt, name string, data []byte) map[string]any {
	b := map[string]any{"type": "document", "source": map[string]any{"type": "base64", "media_type": mt, "data": b64(data)}}
	if name != "" {
		b["name"] = name
	}
	return b
}

func s3Block(kind, uri string) map[string]any {
	return map[string]any{"type": kind, "source": map[string]any{"type": "s3", "uri": uri}}
}

func userMsg(blocks ...map[string]any) []map[string]any {
	return []map[string]any{{"role": "user", "content": blocks}}
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func repeatBlock(n int, b map[string]any) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = b
	}
	return out
}

var multimodal = []string{"text", "image", "document"}

func TestBadInput(t *testing.T) {
	smallPNG := mkPNG(t, 8, 8)
	objs := &memOpener{objs: map[string][]byte{
		prefix + "ok.png": smallPNG,
		"s3://uploads-bucket/uploads/bob/secret.png": smallPNG,
		"s3://uploads-bucket/uploads/alice2/x.png":   smallPNG,
	}}
	store := &Store{Opener: objs, Prefix: prefix}
	text := map[string]any{"type": "text", "text": "describe"}
	cases := []struct {
		name       string
		path       Path
		modalities []string
		msgs       any
		where      string
		want       string
		limit      string
	}{
		{"image to a text-only model", PathBedrockConverse, []string{"text"},
			userMsg(text, imgBlock("image/png", smallPNG)), "records[4].messages[0].content[1]",
			"model test-model does not accept image input (its input modalities: text)", ""},
		{"document to an image model", PathAnthropic, []string{"text", "image"},
			userMsg(docBlock("application/pdf", "", mkPDF(1, 0, ""))), "records[4].messages[0].content[0]",
			"does not accept document input", ""},
		{"corrupt image", PathBedrockConverse, multimodal,
			userMsg(imgBlock("image/png", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 40)...))), "records[4].messages[0].content[0]",
			"not a decodable png image", ""},
		{"truncated image", PathAnthropic, multimodal,
			userMsg(imgBlock("image/jpeg", mkJPEG(t, 30, 30)[:300])), "records[4].messages[0].content[0]",
			"truncated jpeg", ""},
		{"media_type contradicted by bytes", PathBedrockBatchClaude, multimodal,
			userMsg(imgBlock("image/gif", smallPNG)), "records[4].messages[0].content[0]",
			"media type image/gif is contradicted by the bytes, which are png", ""},
		{"media_type not accepted", PathAnthropic, multimodal,
			userMsg(imgBlock("image/bmp", smallPNG)), "records[4].messages[0].content[0]",
			`media_type "image/bmp" is not accepted`, "anthropic image formats: image/png, image/jpeg, image/gif, image/webp"},
		{"over pixel limit", PathBedrockConverse, multimodal,
			userMsg(imgBlock("image/png", mkPNG(t, 8001, 1))), "records[4].messages[0].content[0]",
			"image is 8001x1 px", "bedrock-converse: image at most 8000x8000 px (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html)"},
		{"over byte limit converse", PathBedrockConverse, multimodal,
			userMsg(imgBlock("image/png", padPNG(smallPNG, 3_750_001))), "records[4].messages[0].content[0]",
			fmt.Sprintf("image is %d bytes", len(padPNG(smallPNG, 3_750_001))), "bedrock-converse: image at most 3750000 bytes"},
		{"over byte limit anthropic counts base64", PathAnthropic, multimodal,
			userMsg(imgBlock("image/png", padPNG(smallPNG, 4_000_000))), "records[4].messages[0].content[0]",
			fmt.Sprintf("(%d bytes as base64)", base64Len(int64(len(padPNG(smallPNG, 4_000_000))))), "anthropic: image at most 5242880 bytes as base64"},
		{"too many images", PathBedrockConverse, multimodal,
			userMsg(repeatBlock(21, imgBlock("image/png", smallPNG))...), "records[4].messages",
			"has 21 images", "bedrock-converse: at most 20 images per request"},
		{"past 20 images the side limit drops", PathAnthropic, multimodal,
			userMsg(append(repeatBlock(20, imgBlock("image/png", smallPNG)), imgBlock("image/png", mkPNG(t, 2001, 4)))...), "records[4].messages[0].content[20]",
			"image is 2001x4 px in a request of 21 images", "each at most 2000x2000 px"},
		{"too many documents", PathBedrockConverse, multimodal,
			userMsg(repeatBlock(6, docBlock("text/csv", "data", []byte("a,b\n")))...), "records[4].messages",
			"has 6 documents", "at most 5 documents per request"},
		{"too many PDF pages", PathAnthropic, multimodal,
			userMsg(docBlock("application/pdf", "", mkPDF(101, 0, ""))), "records[4].messages",
			"its PDFs have 101 pages", "anthropic: at most 100 PDF pages per request"},
		{"document on the Bedrock native body", PathBedrockBatchClaude, multimodal,
			userMsg(docBlock("application/pdf", "", mkPDF(1, 0, ""))), "records[4].messages[0].content[0]",
			"document blocks cannot be sent on this path", "bedrock-batch-claude accepts no document blocks"},
		{"docx on anthropic", PathAnthropic, multimodal,
			userMsg(docBlock(MediaType(DOCX), "", mkOffice(t, DOCX))), "records[4].messages[0].content[0]",
			"is not accepted", "anthropic document formats"},
		{"bad document name", PathBedrockConverse, multimodal,
			userMsg(docBlock("text/plain", "notes.txt", []byte("x"))), "records[4].messages[0].content[0].name",
			`document name "notes.txt" has a character other than`, "Converse document name"},
		{"document name double space", PathBedrockConverse, multimodal,
			userMsg(docBlock("text/plain", "a  b", []byte("x"))), "records[4].messages[0].content[0].name",
			"more than one whitespace character in a row", ""},
		{"invalid base64", PathAnthropic, multimodal,
			userMsg(map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBOR$$$"}}), "records[4].messages[0].content[0].source.data",
			"is not valid base64", ""},
		{"image in an assistant turn", PathAnthropic, multimodal,
			[]map[string]any{{"role": "user", "content": "hi"}, {"role": "assistant", "content": []map[string]any{imgBlock("image/png", smallPNG)}}}, "records[4].messages[1].content[0]",
			`accepted only in user messages, not "assistant"`, ""},
		{"s3 outside the prefix", PathBedrockConverse, multimodal,
			userMsg(s3Block("image", "s3://uploads-bucket/uploads/bob/secret.png")), "records[4].messages[0].content[0].source.uri",
			"s3://uploads-bucket/uploads/bob/secret.png: no such object in your upload area", ""},
		{"s3 sibling prefix", PathBedrockConverse, multimodal,
			userMsg(s3Block("image", "s3://uploads-bucket/uploads/alice2/x.png")), "records[4].messages[0].content[0].source.uri",
			"no such object in your upload area", ""},
		{"s3 climbing out", PathBedrockConverse, multimodal,
			userMsg(s3Block("image", prefix+"../bob/secret.png")), "records[4].messages[0].content[0].source.uri",
			"no such object in your upload area", ""},
		{"s3 missing", PathBedrockConverse, multimodal,
			userMsg(s3Block("image", prefix+"gone.png")), "records[4].messages[0].content[0].source.uri",
			"s3://uploads-bucket/uploads/alice/gone.png: no such object in your upload area", ""},
		{"tool block on converse", PathBedrockConverse, multimodal,
			userMsg(map[string]any{"type": "tool_result", "tool_use_id": "x", "content": "y"}), "records[4].messages[0].content[0]",
			"block type is not one bedrock-converse accepts", ""},
		{"unknown source type", PathAnthropic, multimodal,
			userMsg(map[string]any{"type": "image", "source": map[string]any{"type": "url", "url": "https://x"}}), "records[4].messages[0].content[0]",
			`source.type must be "base64" or "s3", got "url"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, err := Parse(4, "rec-7", mustJSON(t, c.msgs))
			var p *Problem
			if err == nil {
				ch, cerr := NewChecker(c.path, "test-model", c.modalities, store)
				if cerr != nil {
					t.Fatal(cerr)
				}
				err = ch.Validate(context.Background(), rec)
			}
			if !errors.As(err, &p) {
				t.Fatalf("err = %v (%T), want a *Problem", err, err)
			}
			if p.RecordID != "rec-7" || p.Where != c.where {
				t.Fatalf("names record %q at %q, want rec-7 at %q (%v)", p.RecordID, p.Where, c.where, err)
			}
			if !strings.Contains(p.Message, c.want) || !strings.Contains(p.Limit, c.limit) {
				t.Fatalf("problem %v\nwant message containing %q and limit containing %q", err, c.want, c.limit)
			}
			if !strings.HasPrefix(err.Error(), `record "rec-7": `+c.where+": ") {
				t.Fatalf("error text %q does not lead with the record and block", err)
			}
		})
	}
	// The outside-the-prefix answer never touched S3, so it cannot tell whether
	// bob's key exists; and it reads exactly like a missing key of one's own.
	for _, uri := range objs.opens {
		if !strings.HasPrefix(uri, prefix) || strings.Contains(uri, "..") {
			t.Fatalf("%s, outside the prefix, was opened", uri)
		}
	}
}

func TestUploadAreaAnswersAlike(t *testing.T) {
	objs := &memOpener{objs: map[string][]byte{"s3://b/uploads/bob/exists.png": mkPNG(t, 2, 2)}}
	s := &Store{Opener: objs, Prefix: "s3://b/uploads/alice"}
	_, _, e1 := s.Open(context.Background(), "s3://b/uploads/bob/exists.png")
	_, _, e2 := s.Open(context.Background(), "s3://b/uploads/bob/missing.png")
	_, _, e3 := s.Open(context.Background(), "s3://b/uploads/alice/missing.png")
	strip := func(err error, uri string) string { return strings.TrimPrefix(err.Error(), uri) }
	if a, b, c := strip(e1, "s3://b/uploads/bob/exists.png"), strip(e2, "s3://b/uploads/bob/missing.png"), strip(e3, "s3://b/uploads/alice/missing.png"); a != b || b != c {
		t.Fatalf("answers differ: %q %q %q", a, b, c)
	}
	for _, e := range []error{e1, e2, e3} {
		if !errors.Is(e, ErrNotInUploadArea) {
			t.Fatalf("%v is not ErrNotInUploadArea", e)
		}
	}
}

func TestValidRecordsPassEveryPath(t *testing.T) {
	objs := &memOpener{objs: map[string][]byte{
		prefix + "a.webp": mkWebP(64, 48, [4]uint8{255, 1, 2, 3}),
		prefix + "i.pdf":  mkPDF(2, 0, ""),
	}}
	store := &Store{Opener: objs, Prefix: prefix}
	for _, path := range Paths {
		t.Run(string(path), func(t *testing.T) {
			blocks := []map[string]any{
				imgBlock("image/png", mkPNG(t, 64, 48)), imgBlock("image/jpeg", mkJPEG(t, 64, 48)),
				imgBlock("image/gif", mkGIF(t, 64, 48)), s3Block("image", prefix+"a.webp"),
			}
			if path != PathBedrockBatchClaude {
				blocks = append(blocks, s3Block("document", prefix+"i.pdf"), docBlock("text/plain", "Notes", []byte("ok")))
			}
			rec, err := Parse(0, "r0", mustJSON(t, userMsg(append(blocks, map[string]any{"type": "text", "text": "go"})...)))
			if err != nil {
				t.Fatal(err)
			}
			ch, _ := NewChecker(path, "m", multimodal, store)
			if ps := ch.Check(context.Background(), rec); len(ps) > 0 {
				t.Fatalf("problems: %v", ps)
			}
			for _, b := range rec.Messages[0].Blocks[:4] {
				if b.Info.Width != 64 || b.Info.Height != 48 {
					t.Fatalf("%s: %dx%d", b.Info.Format, b.Info.Width, b.Info.Height)
				}
			}
		})
	}
}

func TestLimitsHaveSources(t *testing.T) {
	for _, p := range Paths {
		l, err := LimitsFor(p)
		if err != nil {
			t.Fatal(err)
		}
		for k, u := range l.Sources {
			if !strings.HasPrefix(u, "https://") {
				t.Errorf("%s %s: source %q", p, k, u)
			}
		}
		for what, set := range map[string]bool{"image": l.MaxImageBytes > 0, "images": l.MaxImages > 0, "request": l.MaxRequestBytes > 0, "pages": l.MaxPDFPages > 0} {
			if set && l.Sources[what] == "" {
				t.Errorf("%s: limit %q has no source", p, what)
			}
		}
	}
	if _, err := LimitsFor("bedrock-foo"); err == nil {
		t.Fatal("unknown path accepted")
	}
}

func TestStringContentIsOneTextBlock(t *testing.T) {
	rec, err := Parse(0, "a", json.RawMessage(`[{"role":"user","content":"hello"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rec.Messages); got != fmt.Sprint([]Message{{Role: "user", Blocks: []Block{{Kind: KindText, Text: "hello"}}}}) {
		t.Fatal(got)
	}
}

func TestCheckRecordAndStoreBlock(t *testing.T) {
	objs := &memOpener{objs: map[string][]byte{prefix + "scan.jpg": mkJPEG(t, 20, 10), prefix + "inv.pdf": mkPDF(2, 0, "")}}
	store := &Store{Opener: objs, Prefix: prefix}
	ctx := context.Background()
	img, err := store.Block(ctx, prefix+"scan.jpg", "")
	if err != nil || img.Kind != KindImage {
		t.Fatalf("scan.jpg: %+v %v", img, err)
	}
	doc, err := store.Block(ctx, prefix+"inv.pdf", "inv")
	if err != nil || doc.Kind != KindDocument {
		t.Fatalf("inv.pdf: %+v %v", doc, err)
	}
	ch, _ := NewChecker(PathBedrockConverse, "m", multimodal, store)
	rec := &Record{ID: "p1", Messages: []Message{{Role: "user", Blocks: []Block{img, doc, {Kind: KindText, Text: "extract"}}}}}
	if ps := ch.Check(ctx, rec); len(ps) > 0 {
		t.Fatal(ps)
	}
	if rec.Messages[0].Blocks[1].Info.Pages != 2 {
		t.Fatalf("pages %d", rec.Messages[0].Blocks[1].Info.Pages)
	}
	if _, ps := ch.CheckRecord(ctx, 3, "bad", json.RawMessage(`[{"role":"user","content":7}]`)); len(ps) != 1 || ps[0].RecordID != "bad" || ps[0].Where != "records[3].messages[0].content" {
		t.Fatalf("parse problem %v", ps)
	}
	if _, err := store.Block(ctx, "s3://uploads-bucket/uploads/bob/x.png", ""); !errors.Is(err, ErrNotInUploadArea) {
		t.Fatalf("outside: %v", err)
	}
}

// A model's PDF rules on Converse: its own cap (or none), and whether PDFs
// are read visually (citations on, the larger estimate) or as extracted text.
func TestPDFRules(t *testing.T) {
	small := mkPDF(2, 1000, "")
	big := mkPDF(2, 4_600_000, "") // over Converse's 4.5 MB document cap
	for _, tc := range []struct {
		name      string
		rules     PDFRules
		pdf       []byte
		wantLimit string // "" passes
		citations bool
		tokens    int64 // estimate of the PDF block
	}{
		{name: "Claude 4+: exempt from the cap, read visually", rules: PDFRules{ExemptFromCap: true, Citations: true}, pdf: big, citations: true, tokens: 2 * 3000},
		{name: "Nova: exempt, text extraction", rules: PDFRules{ExemptFromCap: true}, pdf: big, tokens: 2 * 1500},
		{name: "Claude 3: the 4.5 MB cap", rules: PDFRules{MaxBytes: 4_500_000, Citations: true, Source: "catalog row"}, pdf: big, wantLimit: "document at most 4500000 bytes (catalog row)"},
		{name: "no rules: the path's cap", pdf: big, wantLimit: "document at most 4500000 bytes"},
		{name: "own smaller cap", rules: PDFRules{MaxBytes: 1000}, pdf: small, wantLimit: "document at most 1000 bytes"},
		{name: "within the cap, visual", rules: PDFRules{MaxBytes: 4_500_000, Citations: true}, pdf: small, citations: true, tokens: 2 * 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := NewChecker(PathBedrockConverse, "m", multimodal, nil)
			if err != nil {
				t.Fatal(err)
			}
			ch.PDF = tc.rules
			rec, ps := ch.CheckRecord(context.Background(), 0, "r", mustJSON(t, userMsg(docBlock("application/pdf", "report", tc.pdf), map[string]any{"type": "text", "text": "Summarise"})))
			if tc.wantLimit != "" {
				if len(ps) != 1 || !strings.Contains(ps[0].Limit, tc.wantLimit) {
					t.Fatalf("problems %v, want one naming %q", ps, tc.wantLimit)
				}
				return
			}
			if len(ps) > 0 {
				t.Fatalf("problems %v", ps)
			}
			b := &rec.Messages[0].Blocks[0]
			if b.Citations != tc.citations || BlockTokens(b) != tc.tokens {
				t.Errorf("citations %v tokens %d, want %v %d", b.Citations, BlockTokens(b), tc.citations, tc.tokens)
			}
		})
	}
}

// A message holding a document and no text gets a text block; one with text keeps its blocks.
func TestEnsureDocumentText(t *testing.T) {
	msgs := []Message{
		{Role: "user", Blocks: []Block{{Kind: KindDocument}}},
		{Role: "assistant", Blocks: []Block{{Kind: KindText, Text: "ok"}}},
		{Role: "user", Blocks: []Block{{Kind: KindDocument}, {Kind: KindText, Text: "and this?"}}},
	}
	if !EnsureDocumentText(msgs) {
		t.Fatal("no block added")
	}
	if n := len(msgs[0].Blocks); n != 2 || msgs[0].Blocks[1].Text != DocumentPrompt || len(msgs[2].Blocks) != 2 {
		t.Errorf("messages %+v", msgs)
	}
	if EnsureDocumentText(msgs) {
		t.Error("added a block twice")
	}
}

// hugeHead answers HEAD with a size far past what it serves, as an object
// replaced after its check by a huge one (up to the upload maximum) would.
type hugeHead struct{ memOpener }

func (h *hugeHead) Head(context.Context, string) (int64, string, error) { return 512 << 20, "v1", nil }
func (h *hugeHead) OpenPinned(ctx context.Context, uri string, _ int64, _ string) (io.ReadCloser, error) {
	rc, _, err := h.Open(ctx, uri)
	return rc, err
}

// TestKeepAllocatesWhatCanBeRead: keeping a part's bytes allocates at most
// what the checker reads of it (64 MiB for a PDF with no cap), not the size
// its HEAD reports (before: 512 MiB allocated for a 0.5 KB object).
func TestKeepAllocatesWhatCanBeRead(t *testing.T) {
	uri := prefix + "big.pdf"
	pdf := mkPDF(1, 0, "")
	c, err := NewChecker(PathBedrockConverse, "test-model", multimodal, &Store{Opener: &hugeHead{memOpener{objs: map[string][]byte{uri: pdf}}}, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	c.Keep, c.PDF = true, PDFRules{ExemptFromCap: true}
	raw, _ := json.Marshal(userMsg(map[string]any{"type": "document", "name": "big", "source": map[string]any{"type": "s3", "uri": uri, "media_type": "application/pdf"}}))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _ = c.CheckRecord(context.Background(), 0, "r", raw)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 100<<20 {
		t.Fatalf("checking a %d-byte PDF whose HEAD says 512 MiB allocated %d MiB", len(pdf), n>>20)
	}
}

// headSizes is a store that pins versions, its heads answering from sizes
// where set (else the stored length).
type headSizes struct {
	memOpener
	sizes map[string]int64
}

func (h *headSizes) Head(_ context.Context, uri string) (int64, string, error) {
	if n, ok := h.sizes[uri]; ok {
		return n, "v1", nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return int64(len(h.objs[uri])), "v1", nil
}
func (h *headSizes) OpenPinned(ctx context.Context, uri string, _ int64, _ string) (io.ReadCloser, error) {
	rc, _, err := h.Open(ctx, uri)
	return rc, err
}

// TestPartTooBigByHeadRefusedFirst: a record whose last image is too big by
// its head alone is refused before any of its parts is read (before: the 19
// images before it were read first).
func TestPartTooBigByHeadRefusedFirst(t *testing.T) {
	png := mkPNG(t, 8, 8)
	st := &headSizes{memOpener: memOpener{objs: map[string][]byte{}}, sizes: map[string]int64{prefix + "huge.png": 50_000_000}}
	var blocks []map[string]any
	for i := range 19 {
		uri := fmt.Sprintf("%simg%02d.png", prefix, i)
		st.objs[uri] = png
		blocks = append(blocks, s3Block("image", uri))
	}
	st.objs[prefix+"huge.png"] = png
	blocks = append(blocks, s3Block("image", prefix+"huge.png"))
	c, err := NewChecker(PathBedrockConverse, "test-model", multimodal, &Store{Opener: st, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	_, ps := c.CheckRecord(context.Background(), 0, "r", mustJSON(t, userMsg(blocks...)))
	if len(ps) != 1 || !strings.Contains(ps[0].Where, "content[19]") || !strings.Contains(ps[0].Error(), "50000000") {
		t.Fatalf("problems %v, want the 20th image refused by its size", ps)
	}
	if len(st.opens) != 0 {
		t.Fatalf("%d parts read before the refusal, want none", len(st.opens))
	}
}
