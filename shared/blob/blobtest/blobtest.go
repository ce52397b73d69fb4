// Package blobtest is the contract every blob.Store adapter passes: run it from
// each adapter's tests with a constructor and a bucket that exists.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
)

// BigObjectBytes is the size of the streamed object: above one 8 MiB part, so
// S3 adapters go through a multipart upload.
const BigObjectBytes = 12 << 20

// Run runs the contract. newStore is called once per subtest; every subtest
// writes under its own prefix in bucket, so a shared bucket is fine.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store, bucket string) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s blob.Store, base string)
	}{
		{"put and open round trip", testRoundTrip},
		{"open with offset", testOffset},
		{"not found", testNotFound},
		{"list order and prefix", testList},
		{"delete", testDelete},
		{"overwrite", testOverwrite},
		{"failed put keeps the old object", testFailedPut},
		{"invalid uris", testInvalid},
		{"presigned get", testPresign},
		{"big object streamed from a generator", testBig},
		{"versioned: a replaced object is refused, never read past its size", testVersioned},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := fmt.Sprintf("s3://%s/contract-%d-%d", bucket, time.Now().UnixNano(), i)
			tt.run(t, newStore(t), base)
		})
	}
}

func put(t *testing.T, s blob.Store, uri, body string) {
	t.Helper()
	n, err := s.Put(context.Background(), uri, strings.NewReader(body), "application/x-ndjson")
	if err != nil {
		t.Fatalf("Put %s: %v", uri, err)
	}
	if n != int64(len(body)) {
		t.Fatalf("Put %s wrote %d bytes, want %d", uri, n, len(body))
	}
}

func read(t *testing.T, s blob.Store, uri string, offset int64) string {
	t.Helper()
	rc, err := s.Open(context.Background(), uri, offset)
	if err != nil {
		t.Fatalf("Open %s at %d: %v", uri, offset, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return string(b)
}

func testRoundTrip(t *testing.T, s blob.Store, base string) {
	for _, body := range []string{"", "x", "{\"a\":1}\n{\"b\":2}\n", strings.Repeat("0123456789", 10_000)} {
		uri := blob.Join(base, "records.jsonl")
		put(t, s, uri, body)
		if got := read(t, s, uri, 0); got != body {
			t.Fatalf("read back %d bytes, want %d", len(got), len(body))
		}
	}
	// Byte-oriented readers work as well as strings (no Seek or ReadAt to lean on).
	uri := blob.Join(base, "deep/nested/key with spaces+plus.out")
	n, err := s.Put(context.Background(), uri, io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")), "")
	if err != nil || n != 4 {
		t.Fatalf("Put from a plain reader = %d, %v", n, err)
	}
	if got := read(t, s, uri, 0); got != "abcd" {
		t.Fatalf("read back %q", got)
	}
}

func testOffset(t *testing.T, s blob.Store, base string) {
	const body = "line one\nline two\nline three\n"
	uri := blob.Join(base, "o.jsonl")
	put(t, s, uri, body)
	tests := []struct {
		offset int64
		want   string
	}{
		{0, body},
		{1, body[1:]},
		{9, body[9:]},
		{int64(len(body) - 1), "\n"},
		{int64(len(body)), ""},
		{int64(len(body) + 100), ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.offset), func(t *testing.T) {
			if got := read(t, s, uri, tt.offset); got != tt.want {
				t.Fatalf("Open at %d = %q, want %q", tt.offset, got, tt.want)
			}
		})
	}
	if _, err := s.Open(context.Background(), uri, -1); err == nil {
		t.Fatal("Open at a negative offset succeeded")
	}
}

func testNotFound(t *testing.T, s blob.Store, base string) {
	for _, offset := range []int64{0, 10} {
		_, err := s.Open(context.Background(), blob.Join(base, "missing.jsonl.out"), offset)
		if !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("Open missing at %d = %v, want ErrNotFound", offset, err)
		}
	}
	put(t, s, blob.Join(base, "file"), "x")
	if _, err := s.Open(context.Background(), blob.Join(base, "file/below"), 0); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open below an object = %v, want ErrNotFound", err)
	}
	if _, err := s.Open(context.Background(), base, 0); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open of a prefix = %v, want ErrNotFound", err)
	}
}

func testList(t *testing.T, s blob.Store, base string) {
	keys := map[string]string{
		"out/job1/b.jsonl.out":       "bb",
		"out/job1/a.jsonl.out":       "a",
		"out/job1/manifest.json.out": "{}",
		"out/job1/sub/c.jsonl.out":   "ccc",
		"out/job1.x":                 "dot",
		"out/job10/a":                "10",
		"out/job2/a":                 "2",
	}
	for k, v := range keys {
		put(t, s, blob.Join(base, k), v)
	}
	tests := []struct {
		prefix string
		want   []string // keys relative to base, with sizes checked from the map
	}{
		{"out/job1/", []string{"out/job1/a.jsonl.out", "out/job1/b.jsonl.out", "out/job1/manifest.json.out", "out/job1/sub/c.jsonl.out"}},
		// A partial last element matches by string prefix, in whole-key order ("." < "/" < "0").
		{"out/job1", []string{"out/job1.x", "out/job1/a.jsonl.out", "out/job1/b.jsonl.out", "out/job1/manifest.json.out", "out/job1/sub/c.jsonl.out", "out/job10/a"}},
		{"out/job1/m", []string{"out/job1/manifest.json.out"}},
		{"out/job3/", nil},
		{"nothing-here/", nil},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			got, err := s.List(context.Background(), blob.Join(base, tt.prefix)+suffix(tt.prefix))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range got {
				k := strings.TrimPrefix(o.URI, base+"/")
				names = append(names, k)
				if want := int64(len(keys[k])); o.Size != want {
					t.Errorf("%s: Size = %d, want %d", k, o.Size, want)
				}
			}
			if fmt.Sprint(names) != fmt.Sprint(tt.want) {
				t.Fatalf("List = %q, want %q", names, tt.want)
			}
		})
	}
}

// suffix keeps a trailing slash that blob.Join trims.
func suffix(prefix string) string {
	if strings.HasSuffix(prefix, "/") {
		return "/"
	}
	return ""
}

func testDelete(t *testing.T, s blob.Store, base string) {
	ctx := context.Background()
	uri := blob.Join(base, "d/x.jsonl")
	put(t, s, uri, "x")
	if err := s.Delete(ctx, uri); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, uri, 0); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, uri); err != nil {
		t.Fatalf("Delete of a missing object = %v, want nil", err)
	}
	if objs, err := s.List(ctx, base+"/"); err != nil || len(objs) != 0 {
		t.Fatalf("List after Delete = %v, %v", objs, err)
	}
	// The folder a deleted key lived in does not block a key of that name.
	put(t, s, blob.Join(base, "d"), "now a file")
	if got := read(t, s, blob.Join(base, "d"), 0); got != "now a file" {
		t.Fatalf("read back %q", got)
	}
}

func testOverwrite(t *testing.T, s blob.Store, base string) {
	uri := blob.Join(base, "w.out")
	for _, body := range []string{"first version", "second, longer version of the object", "3rd"} {
		put(t, s, uri, body)
		if got := read(t, s, uri, 0); got != body {
			t.Fatalf("after overwrite read %q, want %q", got, body)
		}
	}
	objs, err := s.List(context.Background(), base+"/")
	if err != nil || len(objs) != 1 || objs[0].Size != 3 {
		t.Fatalf("List = %v, %v; want one object of 3 bytes", objs, err)
	}
}

// failingReader yields n bytes and then fails, or cancels a context and goes on.
type failingReader struct {
	left   int
	err    error
	cancel context.CancelFunc
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.left <= 0 {
		if f.cancel != nil {
			f.cancel()
			f.cancel = nil
			time.Sleep(10 * time.Millisecond) // let the cancellation reach the transport
		} else if f.err != nil {
			return 0, f.err
		}
	}
	n := min(len(p), max(f.left, 1024))
	for i := range p[:n] {
		p[i] = 'z'
	}
	f.left -= n
	if f.left < -(4 << 20) {
		return n, io.EOF // with a cancelled context, end eventually in any case
	}
	return n, nil
}

func testFailedPut(t *testing.T, s blob.Store, base string) {
	tests := []struct {
		name string
		src  func(cancel context.CancelFunc) io.Reader
	}{
		{"reader error", func(context.CancelFunc) io.Reader {
			return &failingReader{left: 100 << 10, err: errors.New("source broke")}
		}},
		{"reader error after a part", func(context.CancelFunc) io.Reader {
			return &failingReader{left: 9 << 20, err: errors.New("source broke")}
		}},
		{"context cancelled", func(cancel context.CancelFunc) io.Reader {
			return &failingReader{left: 100 << 10, cancel: cancel}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uri := blob.Join(base, strings.ReplaceAll(tt.name, " ", "-"))
			put(t, s, uri, "old")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if _, err := s.Put(ctx, uri, tt.src(cancel), ""); err == nil {
				t.Fatal("Put succeeded")
			}
			if got := read(t, s, uri, 0); got != "old" {
				t.Fatalf("after a failed Put read %d bytes, want the old object", len(got))
			}
		})
	}
	uri := blob.Join(base, "never-written")
	if _, err := s.Put(context.Background(), uri, &failingReader{left: 10, err: errors.New("x")}, ""); err == nil {
		t.Fatal("Put succeeded")
	}
	if _, err := s.Open(context.Background(), uri, 0); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open after a failed first Put = %v, want ErrNotFound", err)
	}
}

func testInvalid(t *testing.T, s blob.Store, base string) {
	ctx := context.Background()
	bucket, _, _ := blob.ParseURI(base)
	for _, uri := range []string{"", "not-a-uri", "http://x/y", "s3://", "s3:///key", "s3://" + bucket, "s3://" + bucket + "/"} {
		t.Run(uri, func(t *testing.T) {
			if _, err := s.Put(ctx, uri, strings.NewReader("x"), ""); err == nil {
				t.Error("Put succeeded")
			}
			if _, err := s.Open(ctx, uri, 0); err == nil || errors.Is(err, blob.ErrNotFound) {
				t.Errorf("Open = %v, want an invalid-uri error", err)
			}
			if err := s.Delete(ctx, uri); err == nil {
				t.Error("Delete succeeded")
			}
		})
	}
	if _, err := s.List(ctx, "not-a-uri"); err == nil {
		t.Error("List of an invalid uri succeeded")
	}
}

func testPresign(t *testing.T, s blob.Store, base string) {
	const body = "{\"report\":true}\n"
	uri := blob.Join(base, "report/index.html")
	put(t, s, uri, body)
	u, err := s.PresignGet(context.Background(), uri, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := fetch(t, u); got != body {
		t.Fatalf("GET %s = %q, want %q", u, got, body)
	}
}

// fetch reads a presigned URL: file:// from fsblob, http(s):// from S3.
func fetch(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("presigned URL %q: %v", raw, err)
	}
	switch u.Scheme {
	case "file":
		b, err := os.ReadFile(u.Path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	case "http", "https":
		resp, err := http.Get(raw)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %s", raw, resp.Status, b)
		}
		return string(b)
	}
	t.Fatalf("presigned URL %q has an unexpected scheme", raw)
	return ""
}

// Generator yields n pseudo-random bytes lazily from a seed, so big objects are
// never held in memory; the same seed yields the same bytes.
type Generator struct {
	rng  *rand.ChaCha8
	left int64
}

// NewGenerator yields n bytes from seed.
func NewGenerator(seed byte, n int64) *Generator {
	var s [32]byte
	s[0] = seed
	return &Generator{rng: rand.NewChaCha8(s), left: n}
}

func (g *Generator) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n, _ := g.rng.Read(p)
	g.left -= int64(n)
	return n, nil
}

func digest(t *testing.T, r io.Reader) ([32]byte, int64) {
	t.Helper()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, n
}

func testBig(t *testing.T, s blob.Store, base string) {
	ctx := context.Background()
	uri := blob.Join(base, "big.jsonl.out")
	n, err := s.Put(ctx, uri, NewGenerator(7, BigObjectBytes), "application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	if n != BigObjectBytes {
		t.Fatalf("Put wrote %d bytes, want %d", n, BigObjectBytes)
	}
	want, _ := digest(t, NewGenerator(7, BigObjectBytes))
	tests := []struct {
		name   string
		offset int64
	}{
		{"whole", 0},
		{"from inside the second part", 9<<20 + 123},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := s.Open(ctx, uri, tt.offset)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			got, size := digest(t, rc)
			exp := want
			if tt.offset > 0 {
				g := NewGenerator(7, BigObjectBytes)
				if _, err := io.CopyN(io.Discard, g, tt.offset); err != nil {
					t.Fatal(err)
				}
				exp, _ = digest(t, g)
			}
			if size != BigObjectBytes-tt.offset || !bytes.Equal(got[:], exp[:]) {
				t.Fatalf("read %d bytes with sha256 %x, want %d bytes with %x", size, got, BigObjectBytes-tt.offset, exp)
			}
		})
	}
	objs, err := s.List(ctx, uri)
	if err != nil || len(objs) != 1 || objs[0].Size != BigObjectBytes {
		t.Fatalf("List = %v, %v", objs, err)
	}
}

// testVersioned: a store that pins versions (blob.Versioned) reads the
// version it was asked for, at most its size, from an offset too, and
// refuses a replaced object (a bigger one included) with ErrChanged.
func testVersioned(t *testing.T, s blob.Store, base string) {
	v, ok := s.(blob.Versioned)
	if !ok {
		t.Skip("store does not pin versions")
	}
	ctx := context.Background()
	uri := base + "/pinned.png"
	put(t, s, uri, "checked bytes")
	if _, err := v.Stat(ctx, base+"/absent"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat of a missing object: %v", err)
	}
	ver, err := v.Stat(ctx, uri)
	if err != nil || ver.Size != int64(len("checked bytes")) || ver.Tag == "" {
		t.Fatalf("Stat = %+v, %v", ver, err)
	}
	rc, err := v.OpenVersion(ctx, uri, ver)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "checked bytes" {
		t.Fatalf("read %q", got)
	}
	// A read resumed mid-object reads the rest of the same version.
	for _, off := range []int64{8, ver.Size} {
		rc, err := v.OpenVersionAt(ctx, uri, ver, off)
		if err != nil {
			t.Fatalf("OpenVersionAt %d: %v", off, err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if want := "checked bytes"[off:]; string(got) != want {
			t.Fatalf("OpenVersionAt %d read %q, want %q", off, got, want)
		}
	}
	put(t, s, uri, "checked bytes, and a great deal more after them")
	if rc, err := v.OpenVersionAt(ctx, uri, ver, 8); !errors.Is(err, blob.ErrChanged) {
		if err == nil {
			b, _ := io.ReadAll(rc)
			rc.Close()
			t.Fatalf("resumed a read of the replaced object (%q)", b)
		}
		t.Fatalf("OpenVersionAt of a replaced object: %v, want ErrChanged", err)
	}
	if rc, err := v.OpenVersion(ctx, uri, ver); !errors.Is(err, blob.ErrChanged) {
		if err == nil {
			b, _ := io.ReadAll(rc)
			rc.Close()
			t.Fatalf("opened the replaced object (%d bytes read)", len(b))
		}
		t.Fatalf("OpenVersion of a replaced object: %v, want ErrChanged", err)
	}
}
