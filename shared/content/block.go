package content

import (
	"bytes"
	"encoding/json"
	"fmt"
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

	// Filled by a Checker: what the bytes are.
	Info Info
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

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Parse reads a record's messages array (string content is one text block).
// index and id name the record in errors.
func Parse(index int, id string, messages json.RawMessage) (*Record, error) {
	rec := &Record{Index: index, ID: id}
	var msgs []wireMessage
	if err := json.Unmarshal(messages, &msgs); err != nil {
		return nil, rec.errf(fmt.Sprintf("records[%d].messages", index), "", "must be an array of {role, content}: %v", err)
	}
	for m, wm := range msgs {
		msg := Message{Role: wm.Role}
		c := bytes.TrimSpace(wm.Content)
		switch {
		case len(c) > 0 && c[0] == '"':
			var s string
			if err := json.Unmarshal(c, &s); err != nil {
				return nil, rec.errf(fmt.Sprintf("records[%d].messages[%d].content", index, m), "", "bad string: %v", err)
			}
			msg.Blocks = []Block{{Kind: KindText, Text: s}}
		case len(c) > 0 && c[0] == '[':
			var raws []json.RawMessage
			if err := json.Unmarshal(c, &raws); err != nil {
				return nil, rec.errf(fmt.Sprintf("records[%d].messages[%d].content", index, m), "", "must be a string or an array of blocks: %v", err)
			}
			for b, raw := range raws {
				blk, err := parseBlock(raw)
				if err != nil {
					return nil, rec.errf(rec.Where(m, b), "", "%v", err)
				}
				msg.Blocks = append(msg.Blocks, blk)
			}
		default:
			return nil, rec.errf(fmt.Sprintf("records[%d].messages[%d].content", index, m), "", "must be a string or an array of blocks")
		}
		rec.Messages = append(rec.Messages, msg)
	}
	return rec, nil
}

func parseBlock(raw json.RawMessage) (Block, error) {
	var w wireBlock
	if err := json.Unmarshal(raw, &w); err != nil {
		return Block{}, fmt.Errorf("must be a content block object: %v", err)
	}
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
			if strings.ContainsAny(blk.Data, "\r\n") { // services want one unbroken string
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
