package batch

import (
	"bufio"
	"bytes"
	"context"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

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
