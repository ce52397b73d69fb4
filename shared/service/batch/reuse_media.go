package batch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Media by digest in the reuse key. An s3:// source is keyed by the
// SHA-256 of its bytes, not by its URI: an object replaced behind the same
// URI (an upload link used again) must not find the answer about the old
// bytes, and the same bytes under another name are the same record.
//
// Not by the ETag alone, although a HEAD is far cheaper than a read: S3's
// ETag is the MD5 of the bytes only for single-part uploads without SSE-KMS
// or SSE-C, a multipart upload's depends on its part sizes (S3 User Guide,
// "Checking object integrity", read 2026-12), and fsblob's tag is the
// file's inode and time; keyed so, the same bytes at another URI would be a
// miss. The version (size and ETag, one HEAD: blob.Versioned) is what the
// digest is remembered by instead: cache/<owner>/media/<hash of URI, size
// and tag>.json holds the SHA-256 of that version, read with the version
// pinned (a replacement in between fails the read, never files a wrong
// digest). So a resubmission costs a HEAD and a small read per object,
// and only a new or changed object is read in full.

// mediaMemo is what cache/<owner>/media/<version>.json holds.
type mediaMemo struct {
	SHA256 string `json:"sha256"`
}

// digester finds the digests of one submit's s3:// sources, each URI once.
type digester struct {
	s     *Service
	owner string
	store *content.Store
	mu    sync.Mutex
	byURI map[string]*digestCall
}

type digestCall struct {
	once sync.Once
	sum  string
	err  error
}

func (s *Service) newDigester(owner string) *digester {
	return &digester{s: s, owner: owner, byURI: map[string]*digestCall{},
		store: &content.Store{Opener: BlobOpener{Blobs: s.Blobs}, Prefix: UploadArea(s.Bucket, owner)}}
}

// key is in's reuse key with its s3:// sources by digest; ok false when
// one cannot be read (the record is then neither looked up nor
// remembered: the media check that follows names the problem).
func (d *digester) key(ctx context.Context, req *SubmitRequest, in job.Input) (key string, ok bool) {
	if !hasS3Source(in.Messages) {
		return reuseKey(req, in), true
	}
	msgs, err := d.byDigest(ctx, in.Messages)
	if err != nil {
		return "", false
	}
	in.Messages = msgs
	return reuseKey(req, in), true
}

// hasS3Source is a cheap filter: only messages naming an s3:// URI can
// hold an s3 source.
func hasS3Source(msgs json.RawMessage) bool {
	return bytes.Contains(msgs, []byte(`"s3://`))
}

// byDigest is msgs with every source {"type":"s3","uri":...} turned into
// {"type":"s3","sha256":...}.
func (d *digester) byDigest(ctx context.Context, msgs json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(msgs))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch t := v.(type) {
		case map[string]any:
			if src, ok := t["source"].(map[string]any); ok && src["type"] == content.SourceS3 {
				if uri, ok := src["uri"].(string); ok {
					sum, err := d.sum(ctx, uri)
					if err != nil {
						return err
					}
					delete(src, "uri")
					src["sha256"] = sum
				}
			}
			for _, c := range t {
				if err := walk(c); err != nil {
					return err
				}
			}
		case []any:
			for _, c := range t {
				if err := walk(c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// sum is the SHA-256 (hex) of the object at uri, found once per submit.
func (d *digester) sum(ctx context.Context, uri string) (string, error) {
	d.mu.Lock()
	c := d.byURI[uri]
	if c == nil {
		c = &digestCall{}
		d.byURI[uri] = c
	}
	d.mu.Unlock()
	c.once.Do(func() { c.sum, c.err = d.compute(ctx, uri) })
	return c.sum, c.err
}

func (d *digester) compute(ctx context.Context, uri string) (string, error) {
	size, tag, pinned, err := d.store.Head(ctx, uri)
	if err != nil {
		return "", err
	}
	if !pinned || tag == "" {
		return d.read(ctx, uri, -1, "") // no version to remember it by
	}
	memo := d.memoURI(uri, size, tag)
	if sum := d.readMemo(ctx, memo); sum != "" {
		return sum, nil
	}
	sum, err := d.read(ctx, uri, size, tag)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(mediaMemo{SHA256: sum})
	// A memo not written costs the next submit one more read, no more.
	_, _ = d.s.Blobs.Put(ctx, memo, bytes.NewReader(b), "application/json")
	return sum, nil
}

// read hashes the object, pinned to the version (size, tag) when given.
func (d *digester) read(ctx context.Context, uri string, size int64, tag string) (string, error) {
	var rc io.ReadCloser
	var err error
	if tag != "" {
		rc, err = d.store.OpenPinned(ctx, uri, size, tag)
	} else {
		rc, _, err = d.store.Open(ctx, uri)
	}
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		return "", fmt.Errorf("reuse: read %s: %w", uri, err)
	}
	if tag != "" && n != size {
		return "", fmt.Errorf("reuse: %s: %w", uri, content.ErrChanged)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (d *digester) memoURI(uri string, size int64, tag string) string {
	v := sha256.Sum256([]byte(uri + "\x00" + strconv.FormatInt(size, 10) + "\x00" + tag))
	return blob.Join(d.s.Bucket, strings.TrimSuffix(config.PrefixCache, "/"), service.OwnerTag(d.owner), "media", hex.EncodeToString(v[:])+".json")
}

// readMemo is the digest a memo holds ("" for none, or a torn one).
func (d *digester) readMemo(ctx context.Context, uri string) string {
	rc, err := d.s.Blobs.Open(ctx, uri, 0)
	if err != nil {
		return "" // none, or unreadable: the object is read instead
	}
	defer rc.Close()
	var m mediaMemo
	if json.NewDecoder(io.LimitReader(rc, 4096)).Decode(&m) != nil || len(m.SHA256) != 2*sha256.Size {
		return ""
	}
	return m.SHA256
}
