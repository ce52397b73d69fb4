package batch

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// readCounter is the upload store with every byte read from it counted (it
// offers only the plain Blobs methods).
type readCounter struct {
	service.Blobs
	n atomic.Int64
}

func (c *readCounter) Open(ctx context.Context, uri string, off int64) (io.ReadCloser, error) {
	rc, err := c.Blobs.Open(ctx, uri, off)
	return counted(rc, err, &c.n)
}

// counted is rc with the bytes read from it added to n.
func counted(rc io.ReadCloser, err error, n *atomic.Int64) (io.ReadCloser, error) {
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{countingReader{rc, n}, rc}, nil
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

var png1x1, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")

func uploadStore(t *testing.T) (*readCounter, *content.Store) {
	t.Helper()
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &readCounter{Blobs: fs}
	return c, &content.Store{Opener: BlobOpener{Blobs: c}, Prefix: "s3://b/uploads/u/"}
}

func s3Blocks(uris ...string) json.RawMessage {
	var blocks []any
	for _, u := range uris {
		blocks = append(blocks, map[string]any{"type": "image", "source": map[string]any{"type": "s3", "uri": u}})
	}
	raw, _ := json.Marshal([]any{map[string]any{"role": "user", "content": append(blocks, map[string]any{"type": "text", "text": "Describe."})}})
	return raw
}

// TestRenderReadsOnlyTheCheckedObject: an upload replaced after its check
// (the upload link used again) by a much bigger file is refused when the
// request is written, having read no more than the checked size.
func TestRenderReadsOnlyTheCheckedObject(t *testing.T) {
	ctx := context.Background()
	blobs, st := uploadStore(t)
	const uri = "s3://b/uploads/u/a.png"
	if _, err := blobs.Put(ctx, uri, bytes.NewReader(png1x1), "image/png"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []content.Path{content.PathBedrockConverse, content.PathAnthropic} {
		ch, err := content.NewChecker(path, "m", []string{"text", "image"}, st)
		if err != nil {
			t.Fatal(err)
		}
		rec, ps := ch.CheckRecord(ctx, 0, "r", s3Blocks(uri))
		if len(ps) > 0 {
			t.Fatal(ps[0])
		}
		big := append(append([]byte{}, png1x1...), bytes.Repeat([]byte{0}, 32<<20)...)
		if _, err := blobs.Put(ctx, uri, bytes.NewReader(big), "image/png"); err != nil {
			t.Fatal(err)
		}
		blobs.n.Store(0)
		r := &content.Renderer{Path: path, Store: st}
		err = r.WriteMessages(ctx, io.Discard, rec.Messages)
		if err == nil || !strings.Contains(err.Error(), "changed since it was validated") {
			t.Fatalf("%s: rendering a swapped object: %v", path, err)
		}
		if n := blobs.n.Load(); n > int64(len(png1x1))+1 {
			t.Fatalf("%s: read %d bytes of the swapped object; the checked one had %d", path, n, len(png1x1))
		}
		if _, err := blobs.Put(ctx, uri, bytes.NewReader(png1x1), "image/png"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckCountsBeforeReading: a record over the per-request image count is
// refused without reading any of its s3:// parts (a dry run too).
func TestCheckCountsBeforeReading(t *testing.T) {
	ctx := context.Background()
	blobs, st := uploadStore(t)
	var uris []string
	for i := range 41 {
		u := fmt.Sprintf("s3://b/uploads/u/%02d.png", i)
		if _, err := blobs.Put(ctx, u, bytes.NewReader(png1x1), "image/png"); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, u)
	}
	ch, err := content.NewChecker(content.PathBedrockConverse, "m", []string{"text", "image"}, st)
	if err != nil {
		t.Fatal(err)
	}
	_, ps := ch.CheckRecord(ctx, 0, "r", s3Blocks(uris...))
	if len(ps) == 0 || !strings.Contains(ps[0].Error(), "has 41 images") {
		t.Fatalf("problems %v, want the image count first", ps)
	}
	if n := blobs.n.Load(); n != 0 {
		t.Fatalf("read %d bytes of parts of a record refused by its count", n)
	}
}
