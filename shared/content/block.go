package content

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Kind is a content block's type.
type Kind string

const (
	KindText     Kind = "text"
	KindImage    Kind = "image"
	KindDocument Kind = "document"
	// KindOther is any other Claude block (tool_use, tool_result, thinking...):
	// carried verbatim on the Claude paths, refused on Converse.
	KindOther Kind = "other"
)

// Source types of an image or document block.
const (
	SourceBase64 = "base64"
	SourceS3     = "s3"
)

// Block is one content block.
type Block struct {
	Kind Kind
	// Text is a text block's text.
	Text string
	// Source is "base64" or "s3" for images and documents.
	Source string
	// MediaType is the declared media type (may be empty for s3 sources: then
	// the bytes decide).
	MediaType string
	// Data is the base64 payload of a base64 source, without line breaks.
	Data string
	// URI is the s3://bucket/key of an s3 source.
	URI string
	// Name is a document's name (Converse requires one; Claude calls it title).
	Name string
	// CacheControl is carried to the Claude paths as given.
	CacheControl json.RawMessage
	// Raw is a KindOther block as given.
	Raw json.RawMessage
	// Citations asks Converse to read a PDF with citations on: Claude reads a
	// PDF visually (page images and text) on Converse only then; without it
	// Converse extracts the text alone. Set by a Checker from the model's
	// document rules.
	Citations bool
	// TextOnly: the path extracts the PDF's text and sends no page images
	// (Converse without citations), which the estimate counts.
	TextOnly bool

	// Filled by a Checker: what the bytes are.
	Info Info
	// Bytes is an s3:// part as read by a Checker with Keep set: read once,
	// checked, and rendered from here.
	Bytes []byte

	head *head // the s3:// object's size and version, once asked
}

type head struct {
	size    int64
	version string
	ok      bool
	err     error
}

// Message is one turn.
type Message struct {
	Role   string
	Blocks []Block
}

// Record is one record's conversation, with where it sits in the input for
// error messages.
type Record struct {
	Index    int
	ID       string
	Messages []Message
}

// Where names block b of message m of this record as the input spells it.
func (r *Record) Where(m, b int) string {
	return fmt.Sprintf("records[%d].messages[%d].content[%d]", r.Index, m, b)
}

type wireSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URI       string `json:"uri"`
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	Source       *wireSource     `json:"source"`
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// Parse reads a record's messages array (string content is one text block).
// index and id name the record in errors.
func Parse(index int, id string, messages json.RawMessage) (*Record, error) {
	rec := &Record{Index: index, ID: id}
	l := &lexer{b: messages}
	field := fmt.Sprintf("records[%d].messages", index)
	if l.peek() != '[' {
		return nil, rec.errf(field, "", "must be an array of {role, content}")
	}
	err := l.array(func(m int) error {
		msg := Message{}
		if l.peek() != '{' {
			return rec.errf(fmt.Sprintf("%s[%d]", field, m), "", "must be an object {role, content}")
		}
		err := l.object(func(k string) error {
			var err error
			switch k {
			case "role":
				msg.Role, err = l.str()
			case "content":
				where := fmt.Sprintf("%s[%d].content", field, m)
				switch l.peek() {
				case '"':
					var s string
					if s, err = l.str(); err == nil {
						msg.Blocks = []Block{{Kind: KindText, Text: s}}
					}
				case '[':
					err = l.array(func(b int) error {
						var w wireBlock
						if l.peek() != '{' {
							return rec.errf(rec.Where(m, b), "", "must be a content block object")
						}
						raw, err := l.readBlock(&w)
						if err != nil {
							return rec.errf(rec.Where(m, b), "", "%v", err)
						}
						blk, err := parseBlock(&w, raw)
						if err != nil {
							return rec.errf(rec.Where(m, b), "", "%v", err)
						}
						msg.Blocks = append(msg.Blocks, blk)
						return nil
					})
				default:
					return rec.errf(where, "", "must be a string or an array of blocks")
				}
			default:
				_, err = l.skip()
			}
			return err
		})
		if err != nil {
			return err
		}
		rec.Messages = append(rec.Messages, msg)
		return nil
	})
	if err == nil && l.peek() != 0 {
		err = fmt.Errorf("%w: trailing data at offset %d", errSyntax, l.i)
	}
	if err != nil {
		var p *Problem
		if errors.As(err, &p) {
			return nil, p
		}
		return nil, rec.errf(field, "", "%v", err)
	}
	return rec, nil
}

func parseBlock(w *wireBlock, raw []byte) (Block, error) {
	switch w.Type {
	case "text":
		if w.Text == nil {
			return Block{}, fmt.Errorf(`text block needs "text"`)
		}
		return Block{Kind: KindText, Text: *w.Text, CacheControl: w.CacheControl}, nil
	case "image", "document":
		if w.Source == nil {
			return Block{}, fmt.Errorf(`%s block needs "source"`, w.Type)
		}
		blk := Block{Kind: Kind(w.Type), Source: w.Source.Type, MediaType: w.Source.MediaType, Name: w.Name, CacheControl: w.CacheControl}
		if blk.Name == "" {
			blk.Name = w.Title
		}
		switch w.Source.Type {
		case SourceBase64:
			if w.Source.Data == "" {
				return Block{}, fmt.Errorf(`source.data is required for a base64 source`)
			}
			if w.Source.MediaType == "" {
				return Block{}, fmt.Errorf(`source.media_type is required for a base64 source`)
			}
			blk.Data = w.Source.Data
			if strings.IndexByte(blk.Data, '\n') >= 0 || strings.IndexByte(blk.Data, '\r') >= 0 { // services want one unbroken string
				blk.Data = strings.NewReplacer("\r", "", "\n", "").Replace(blk.Data)
			}
		case SourceS3:
			if !strings.HasPrefix(w.Source.URI, "s3://") {
				return Block{}, fmt.Errorf(`source.uri must be an s3:// URI, got %q`, w.Source.URI)
			}
			blk.URI = w.Source.URI
		default:
			return Block{}, fmt.Errorf(`source.type must be "base64" or "s3", got %q`, w.Source.Type)
		}
		return blk, nil
	case "":
		return Block{}, fmt.Errorf(`"type" is required`)
	default:
		return Block{Kind: KindOther, Raw: append(json.RawMessage(nil), raw...)}, nil
	}
}

// b64Reader decodes unbroken, padded base64 text a chunk at a time; without
// the line-break filtering of base64.NewDecoder it runs at Decode's speed.
type b64Reader struct {
	s       string
	pos     int
	in, buf []byte
	out     []byte // decoded, not yet read
	err     error
}

const b64Chunk = 48 << 10 // a multiple of 4

func newB64Reader(s string) *b64Reader { return &b64Reader{s: s} }

func (r *b64Reader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.pos == len(r.s) {
			return 0, io.EOF
		}
		if r.in == nil {
			r.in = make([]byte, b64Chunk)
			r.buf = make([]byte, base64.StdEncoding.DecodedLen(b64Chunk))
		}
		in := r.in[:copy(r.in, r.s[r.pos:])]
		n, err := base64.StdEncoding.Decode(r.buf, in)
		if ce, ok := err.(base64.CorruptInputError); ok {
			r.err = base64.CorruptInputError(int64(ce) + int64(r.pos))
		} else if err != nil {
			r.err = err
		}
		r.pos += len(in)
		r.out = r.buf[:n]
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// DocumentPrompt is the text block added beside a document that a message
// carries alone: Converse refuses a message holding a document and no text
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html,
// checked 2026-12-01).
const DocumentPrompt = "Please read the attached document."

// TextAddedWarning is the job warning when EnsureDocumentText added a block.
const TextAddedWarning = "Converse refuses a message holding a document and no text: a text block \"" + DocumentPrompt + "\" was added beside such documents"

// EnsureDocumentText adds a DocumentPrompt text block to every message that
// holds a document and no text, and reports whether it added any.
func EnsureDocumentText(msgs []Message) bool {
	added := false
	for m := range msgs {
		doc, text := false, false
		for _, b := range msgs[m].Blocks {
			doc = doc || b.Kind == KindDocument
			text = text || b.Kind == KindText
		}
		if doc && !text {
			msgs[m].Blocks = append(msgs[m].Blocks, Block{Kind: KindText, Text: DocumentPrompt})
			added = true
		}
	}
	return added
}
