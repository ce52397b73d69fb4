package bedrockrt

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// A Converse request with images and documents is ~4/3 of their bytes, and
// the SDK builds the whole JSON body in memory (base64 included) before
// sending it. Instead, each part stands in the SDK's messages as a short
// placeholder; after the SDK serialised the request, the body is swapped for
// one that writes each part's base64 where its placeholder's stood, encoded
// as it is sent. The body is seekable (the signer reads it once for its
// SHA-256, then it is sent), so the parts are held once, as bytes, and
// nothing the size of the request is ever built.

// part is one image or document of a streamed body: raw bytes to encode, or
// base64 text as the caller gave it.
type part struct {
	mark string // the placeholder's base64, as the SDK writes it
	raw  []byte
	b64  string
}

func (p *part) size() int64 {
	if p.raw != nil {
		return int64(base64.StdEncoding.EncodedLen(len(p.raw)))
	}
	return int64(len(p.b64))
}

// parts collects the parts of one request.
type parts struct {
	nonce string
	list  []*part
}

func newParts() *parts {
	var b [9]byte
	rand.Read(b[:])
	return &parts{nonce: hex.EncodeToString(b[:])}
}

// placeholder registers a part and returns the bytes that stand for it: a
// multiple of 3 long, so its base64 has no padding and is found verbatim.
func (ps *parts) placeholder(p *part) []byte {
	ph := []byte(fmt.Sprintf("mcpbatch-part-%s-%06d", ps.nonce, len(ps.list)))
	for len(ph)%3 != 0 {
		ph = append(ph, '.')
	}
	p.mark = base64.StdEncoding.EncodeToString(ph)
	ps.list = append(ps.list, p)
	return ph
}

// options swap the serialised body of the call for the streamed one (none
// when the call has no parts: ps nil).
func (ps *parts) options() []func(*bedrockruntime.Options) {
	if ps == nil {
		return nil
	}
	return []func(*bedrockruntime.Options){func(o *bedrockruntime.Options) {
		o.APIOptions = append(slices.Clip(o.APIOptions), func(st *middleware.Stack) error {
			return st.Serialize.Insert(ps, "OperationSerializer", middleware.After)
		})
	}}
}

// ID implements middleware.SerializeMiddleware.
func (ps *parts) ID() string { return "mcpbatch.StreamParts" }

// HandleSerialize replaces the SDK's body (small: placeholders only) with a
// partsBody.
func (ps *parts) HandleSerialize(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (middleware.SerializeOutput, middleware.Metadata, error) {
	req, ok := in.Request.(*smithyhttp.Request)
	if !ok {
		return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("stream parts: unexpected request %T", in.Request)
	}
	small, err := io.ReadAll(req.GetStream())
	if err != nil {
		return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("stream parts: %w", err)
	}
	body, err := ps.body(string(small))
	if err != nil {
		return middleware.SerializeOutput{}, middleware.Metadata{}, err
	}
	if req, err = req.SetStream(body); err != nil {
		return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("stream parts: %w", err)
	}
	in.Request = req
	return next.HandleSerialize(ctx, in)
}

// body splits the serialised JSON at each placeholder.
func (ps *parts) body(small string) (*partsBody, error) {
	b := &partsBody{}
	rest := small
	for _, p := range ps.list {
		quoted := `"` + p.mark + `"`
		i := strings.Index(rest, quoted)
		if i < 0 || strings.Contains(rest[i+len(quoted):], quoted) {
			return nil, errors.New("stream parts: the serialised request does not carry each part's placeholder once")
		}
		b.segs = append(b.segs, seg{text: rest[:i+1]}, seg{part: p})
		rest = rest[i+len(quoted)-1:]
	}
	b.segs = append(b.segs, seg{text: rest})
	for _, s := range b.segs {
		b.total += s.size()
	}
	return b, nil
}

type seg struct {
	text string
	part *part
}

func (s seg) size() int64 {
	if s.part != nil {
		return s.part.size()
	}
	return int64(len(s.text))
}

// partsBody is the request body: text and parts, base64 produced as read.
type partsBody struct {
	segs  []seg
	total int64
	pos   int64
	enc   []byte // encoded bytes of the current raw chunk
	encAt int64  // body offset of enc[0]
}

// encChunk is how much raw input is encoded at a time (a multiple of 3).
const encChunk = 48 << 10

func (b *partsBody) Read(p []byte) (int, error) {
	if b.pos >= b.total {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && b.pos < b.total {
		start := int64(0)
		var s seg
		for _, s = range b.segs {
			if b.pos < start+s.size() {
				break
			}
			start += s.size()
		}
		off := b.pos - start
		var c int
		switch {
		case s.part == nil:
			c = copy(p[n:], s.text[off:])
		case s.part.raw == nil:
			c = copy(p[n:], s.part.b64[off:])
		default:
			if b.enc == nil || b.pos < b.encAt || b.pos >= b.encAt+int64(len(b.enc)) {
				g := off / 4 * 3 // raw offset of the 4-character group holding pos
				end := min(g+encChunk, int64(len(s.part.raw)))
				b.enc = base64.StdEncoding.AppendEncode(b.enc[:0], s.part.raw[g:end])
				b.encAt = start + g/3*4
			}
			c = copy(p[n:], b.enc[b.pos-b.encAt:])
		}
		n += c
		b.pos += int64(c)
	}
	return n, nil
}

// Len is the unread length (as bytes.Reader's), which the SDK takes for
// Content-Length.
func (b *partsBody) Len() int { return int(b.total - b.pos) }

// Seek lets the signer rewind after hashing.
func (b *partsBody) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += b.pos
	case io.SeekEnd:
		off += b.total
	}
	if off < 0 || off > b.total {
		return b.pos, fmt.Errorf("stream parts: seek to %d of %d", off, b.total)
	}
	b.pos = off
	b.enc = b.enc[:0]
	return off, nil
}
