package content

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// Renderer writes checked messages in one path's wire shape. s3:// parts are
// read from Store and base64-encoded straight into the output, so at most one
// encoder's buffers are held whatever the part's size.
type Renderer struct {
	Path  Path
	Store *Store
}

// WriteMessages writes the "messages" array of the path's request body:
// Claude's native shape for bedrock-batch-claude and anthropic, Converse's
// for bedrock-converse. Blocks must have been checked (their Info filled).
func (r *Renderer) WriteMessages(ctx context.Context, w io.Writer, msgs []Message) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.WriteByte('[')
	for m, msg := range msgs {
		if m > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(`{"role":`)
		writeJSONString(bw, msg.Role)
		bw.WriteString(`,"content":[`)
		for b := range msg.Blocks {
			if b > 0 {
				bw.WriteByte(',')
			}
			blk := &msg.Blocks[b]
			var err error
			if r.Path == PathBedrockConverse {
				err = r.converseBlock(ctx, bw, blk, m, b)
			} else {
				err = r.claudeBlock(ctx, bw, blk)
			}
			if err != nil {
				return fmt.Errorf("messages[%d].content[%d]: %w", m, b, err)
			}
		}
		bw.WriteString(`]}`)
	}
	bw.WriteByte(']')
	return bw.Flush()
}

// Messages is WriteMessages into memory, for bodies built with json.Marshal.
func (r *Renderer) Messages(ctx context.Context, msgs []Message) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := r.WriteMessages(ctx, &buf, msgs); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (r *Renderer) claudeBlock(ctx context.Context, w *bufio.Writer, b *Block) error {
	switch b.Kind {
	case KindText:
		w.WriteString(`{"type":"text","text":`)
		writeJSONString(w, b.Text)
		r.cacheControl(w, b)
		return w.WriteByte('}')
	case KindOther:
		_, err := w.Write(b.Raw)
		return err
	}
	if b.Info.Format == "" {
		return errors.New("block was not checked before rendering")
	}
	textDoc := b.Kind == KindDocument && isText(b.Info.Format)
	fmt.Fprintf(w, `{"type":%q,"source":{"type":`, b.Kind)
	if textDoc {
		// Claude's plain-text document source carries the text itself.
		w.WriteString(`"text","media_type":"text/plain","data":"`)
		if err := r.copyPart(ctx, &jsonEscaper{w: w}, b); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, `"base64","media_type":%q,"data":"`, MediaType(b.Info.Format))
		if err := r.copyBase64(ctx, w, b); err != nil {
			return err
		}
	}
	w.WriteString(`"}`)
	if b.Kind == KindDocument && b.Name != "" {
		w.WriteString(`,"title":`)
		writeJSONString(w, b.Name)
	}
	r.cacheControl(w, b)
	return w.WriteByte('}')
}

func (r *Renderer) cacheControl(w *bufio.Writer, b *Block) {
	if len(b.CacheControl) > 0 {
		w.WriteString(`,"cache_control":`)
		w.Write(b.CacheControl)
	}
}

func (r *Renderer) converseBlock(ctx context.Context, w *bufio.Writer, b *Block, m, i int) error {
	switch b.Kind {
	case KindText:
		w.WriteString(`{"text":`)
		writeJSONString(w, b.Text)
		return w.WriteByte('}')
	case KindOther:
		return errors.New("only text, image and document blocks can be sent through Converse")
	}
	if b.Info.Format == "" {
		return errors.New("block was not checked before rendering")
	}
	if b.Kind == KindImage {
		fmt.Fprintf(w, `{"image":{"format":%q,"source":{"bytes":"`, b.Info.Format)
	} else {
		fmt.Fprintf(w, `{"document":{"format":%q,"name":`, b.Info.Format)
		writeJSONString(w, DocumentName(b, m, i))
		w.WriteString(`,"source":{"bytes":"`)
	}
	if err := r.copyBase64(ctx, w, b); err != nil {
		return err
	}
	w.WriteString(`"}`)
	if b.Kind == KindDocument && b.Citations {
		w.WriteString(`,"citations":{"enabled":true}`)
	}
	_, err := w.WriteString(`}}`)
	return err
}

// DocumentName is the name Converse requires: the block's own, or one made
// from its position.
func DocumentName(b *Block, m, i int) string {
	if b.Name != "" {
		return b.Name
	}
	return fmt.Sprintf("document %d-%d", m+1, i+1)
}

// copyBase64 writes the part's base64 text: as given for a base64 source,
// encoded on the fly for s3.
func (r *Renderer) copyBase64(ctx context.Context, w io.Writer, b *Block) error {
	if b.Source == SourceBase64 {
		_, err := io.WriteString(w, b.Data)
		return err
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	if err := r.copyPart(ctx, enc, b); err != nil {
		return err
	}
	return enc.Close()
}

// copyPart writes the part's decoded bytes, checking that an s3 object is
// still the one that was validated (same length, same format).
func (r *Renderer) copyPart(ctx context.Context, w io.Writer, b *Block) error {
	var src io.Reader
	switch {
	case b.Source == SourceBase64:
		src = newB64Reader(b.Data)
	case b.Bytes != nil:
		src = bytes.NewReader(b.Bytes)
	default:
		// The version checked, and no more than its size: a replacement
		// (the upload link used again) is refused, not copied.
		rc, err := r.Store.OpenPinned(ctx, b.URI, b.Info.Bytes, b.Info.Version)
		if err != nil {
			return err
		}
		defer rc.Close()
		src = rc
	}
	g := &guard{r: src}
	n, err := io.Copy(w, g)
	if err != nil {
		return fmt.Errorf("reading %s: %w", orURI(b), err)
	}
	if n != b.Info.Bytes || !sameFamily(sniff(g.head[:g.nhead]), b.Info.Format) {
		return fmt.Errorf("%s changed since it was validated", orURI(b))
	}
	return nil
}

func orURI(b *Block) string {
	if b.URI != "" {
		return b.URI
	}
	return "source.data"
}

func sameFamily(sniffed, format string) bool {
	switch {
	case sniffed == format:
		return true
	case sniffed == "zip":
		return format == DOCX || format == XLSX
	case sniffed == "ole2":
		return format == DOC || format == XLS
	case sniffed == "":
		return isText(format)
	}
	return false
}

type guard struct {
	r     io.Reader
	head  [16]byte
	nhead int
}

func (g *guard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if g.nhead < len(g.head) {
		g.nhead += copy(g.head[g.nhead:], p[:n])
	}
	return n, err
}

// writeJSONString writes s as a JSON string without HTML escaping.
func writeJSONString(w *bufio.Writer, s string) {
	w.WriteByte('"')
	(&jsonEscaper{w: w}).WriteString(s)
	w.WriteByte('"')
}

// jsonEscaper escapes what it is given for the inside of a JSON string.
// Multi-byte UTF-8 passes through unchanged, so a rune cut between two writes
// is still reassembled correctly.
type jsonEscaper struct{ w *bufio.Writer }

const hexDigits = "0123456789abcdef"

func (e *jsonEscaper) Write(p []byte) (int, error) {
	start := 0
	for i, c := range p {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		e.w.Write(p[start:i])
		switch c {
		case '"', '\\':
			e.w.WriteByte('\\')
			e.w.WriteByte(c)
		case '\n':
			e.w.WriteString(`\n`)
		case '\r':
			e.w.WriteString(`\r`)
		case '\t':
			e.w.WriteString(`\t`)
		default:
			e.w.WriteString(`\u00`)
			e.w.WriteByte(hexDigits[c>>4])
			e.w.WriteByte(hexDigits[c&0xf])
		}
		start = i + 1
	}
	_, err := e.w.Write(p[start:])
	return len(p), err
}

func (e *jsonEscaper) WriteString(s string) { e.Write([]byte(s)) }

// ConverseMessages builds the SDK's Converse messages for an on-demand call.
// Parts are read into memory here (a part a Checker kept is used as it is):
// a Converse request is one record, and the SDK serialises from []byte.
func (r *Renderer) ConverseMessages(ctx context.Context, msgs []Message) ([]brtypes.Message, error) {
	return r.ConverseMessagesWith(ctx, msgs, func(b *Block) ([]byte, error) {
		if b.Bytes != nil {
			return b.Bytes, nil
		}
		var buf bytes.Buffer
		buf.Grow(int(b.Info.Bytes))
		if err := r.copyPart(ctx, &buf, b); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	})
}

// ConverseMessagesWith is ConverseMessages with each image's or document's
// bytes given by data: a caller streaming the request body passes stand-ins
// it replaces on the wire.
func (r *Renderer) ConverseMessagesWith(ctx context.Context, msgs []Message, data func(*Block) ([]byte, error)) ([]brtypes.Message, error) {
	out := make([]brtypes.Message, 0, len(msgs))
	for m, msg := range msgs {
		bm := brtypes.Message{Role: brtypes.ConversationRole(msg.Role)}
		for i := range msg.Blocks {
			b := &msg.Blocks[i]
			switch b.Kind {
			case KindText:
				bm.Content = append(bm.Content, &brtypes.ContentBlockMemberText{Value: b.Text})
				continue
			case KindOther:
				return nil, fmt.Errorf("messages[%d].content[%d]: only text, image and document blocks can be sent through Converse", m, i)
			}
			if b.Info.Format == "" {
				return nil, fmt.Errorf("messages[%d].content[%d]: block was not checked before rendering", m, i)
			}
			data, err := data(b)
			if err != nil {
				return nil, fmt.Errorf("messages[%d].content[%d]: %w", m, i, err)
			}
			if b.Kind == KindImage {
				bm.Content = append(bm.Content, &brtypes.ContentBlockMemberImage{Value: brtypes.ImageBlock{
					Format: brtypes.ImageFormat(b.Info.Format),
					Source: &brtypes.ImageSourceMemberBytes{Value: data},
				}})
			} else {
				name := DocumentName(b, m, i)
				doc := brtypes.DocumentBlock{
					Format: brtypes.DocumentFormat(b.Info.Format),
					Name:   &name,
					Source: &brtypes.DocumentSourceMemberBytes{Value: data},
				}
				if b.Citations {
					on := true
					doc.Citations = &brtypes.CitationsConfig{Enabled: &on}
				}
				bm.Content = append(bm.Content, &brtypes.ContentBlockMemberDocument{Value: doc})
			}
		}
		out = append(out, bm)
	}
	return out, nil
}
