// Package fsblob is the blob.Store port over a local folder, for `make dev` and
// tests: s3://bucket/key maps to <Root>/bucket/key.
//
// Writes go to a temporary file under <Root>/.tmp and are renamed into place, so
// a reader never sees half an object. Content types are not kept. A key that is
// a prefix folder of another key ("a" and "a/b") cannot exist at the same time,
// unlike in S3.
//
// Symlinks are refused: a root that is a symlink, or a symlinked folder or file
// anywhere under it, is an error for every operation, so no key reaches a file
// outside the root (make dev serves these objects to MCP callers).
package fsblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
)

var _ blob.Store = (*Store)(nil)

// tmpDir holds writes in progress; bucket names cannot start with '.', so it never clashes.
const tmpDir = ".tmp"

// Store keeps objects as files under Root.
type Store struct {
	// Root is the absolute folder holding one sub-folder per bucket.
	Root string
}

// New returns a Store rooted at root, creating the folder.
func New(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("fsblob: root %q: %w", root, err)
	}
	if st, err := os.Lstat(abs); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("fsblob: root %s is a symlink: give the folder it points to", abs)
	}
	if err := os.MkdirAll(filepath.Join(abs, tmpDir), 0o755); err != nil {
		return nil, fmt.Errorf("fsblob: create root: %w", err)
	}
	s := &Store{Root: abs}
	if err := s.noSymlinks(filepath.Join(abs, tmpDir)); err != nil {
		return nil, fmt.Errorf("fsblob: root %s: %w", abs, err)
	}
	return s, nil
}

// noSymlinks refuses a path under Root any existing element of which (Root
// excluded, p included) is a symlink. Elements that do not exist yet are fine:
// Put creates them as plain folders.
func (s *Store) noSymlinks(p string) error {
	rel, err := filepath.Rel(s.Root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not under the root", p)
	}
	cur := s.Root
	for _, el := range strings.Split(rel, string(filepath.Separator)) {
		if el == "." || el == "" {
			continue
		}
		cur = filepath.Join(cur, el)
		st, err := os.Lstat(cur)
		if err != nil {
			if missing(err) {
				return nil
			}
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			r, _ := filepath.Rel(s.Root, cur)
			return fmt.Errorf("%s under the root is a symlink (refused: it could lead outside the root)", filepath.ToSlash(r))
		}
	}
	return nil
}

// Put streams r to a temporary file and renames it over uri.
func (s *Store) Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error) {
	p, err := s.objectPath(uri)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("fsblob: put %s: %w", uri, err)
	}
	tmps := filepath.Join(s.Root, tmpDir)
	if err := os.MkdirAll(tmps, 0o755); err != nil {
		return 0, fmt.Errorf("fsblob: put %s: %w", uri, err)
	}
	if err := s.noSymlinks(tmps); err != nil {
		return 0, fmt.Errorf("fsblob: put %s: %w", uri, err)
	}
	f, err := os.CreateTemp(tmps, "put-*")
	if err != nil {
		return 0, fmt.Errorf("fsblob: put %s: %w", uri, err)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	n, err := io.Copy(f, ctxReader{ctx: ctx, r: r})
	if err != nil {
		return n, fmt.Errorf("fsblob: put %s after %d bytes: %w", uri, n, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return n, fmt.Errorf("fsblob: put %s: %w", uri, err)
	}
	if err := f.Close(); err != nil {
		return n, fmt.Errorf("fsblob: put %s: %w", uri, err)
	}
	if err := renameInto(f.Name(), p); err != nil {
		return n, fmt.Errorf("fsblob: put %s: %w", uri, err)
	}
	committed = true
	return n, nil
}

// renameInto moves a finished file into place, creating folders. A concurrent
// Delete may prune an empty folder between MkdirAll and Rename, hence the retries.
func renameInto(tmp, p string) error {
	var err error
	for range 3 {
		if err = os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err = os.Rename(tmp, p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// Open opens the object and seeks to offset; an offset at or past the end reads nothing.
func (s *Store) Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error) {
	p, err := s.objectPath(uri)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("fsblob: open %s: negative offset %d", uri, offset)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fsblob: open %s: %w", uri, err)
	}
	f, err := os.Open(p)
	if err != nil {
		if missing(err) {
			return nil, fmt.Errorf("fsblob: open %s: %w", uri, blob.ErrNotFound)
		}
		return nil, fmt.Errorf("fsblob: open %s: %w", uri, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("fsblob: open %s: %w", uri, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("fsblob: open %s: %w", uri, blob.ErrNotFound)
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("fsblob: open %s at %d: %w", uri, offset, err)
		}
	}
	return f, nil
}

var _ blob.Versioned = (*Store)(nil)

// Stat implements blob.Versioned. Put replaces a file by renaming a new one
// over it, so the tag (inode, size, modification time) changes with every Put.
func (s *Store) Stat(ctx context.Context, uri string) (blob.Version, error) {
	rc, err := s.Open(ctx, uri, 0)
	if err != nil {
		return blob.Version{}, err
	}
	defer rc.Close()
	st, err := rc.(*os.File).Stat()
	if err != nil {
		return blob.Version{}, fmt.Errorf("fsblob: stat %s: %w", uri, err)
	}
	return blob.Version{Size: st.Size(), Tag: fileTag(st)}, nil
}

// OpenVersion implements blob.Versioned: the open file must still carry v's
// tag, and at most v.Size bytes of it are read.
func (s *Store) OpenVersion(ctx context.Context, uri string, v blob.Version) (io.ReadCloser, error) {
	return s.OpenVersionAt(ctx, uri, v, 0)
}

// OpenVersionAt implements blob.Versioned: OpenVersion from offset on.
func (s *Store) OpenVersionAt(ctx context.Context, uri string, v blob.Version, offset int64) (io.ReadCloser, error) {
	if offset < 0 || offset > v.Size {
		return nil, fmt.Errorf("fsblob: open %s at %d: outside the version's %d bytes", uri, offset, v.Size)
	}
	rc, err := s.Open(ctx, uri, 0)
	if err != nil {
		return nil, err
	}
	f := rc.(*os.File)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("fsblob: open %s: %w", uri, err)
	}
	if st.Size() != v.Size || fileTag(st) != v.Tag {
		f.Close()
		return nil, fmt.Errorf("fsblob: open %s: %w", uri, blob.ErrChanged)
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("fsblob: open %s at %d: %w", uri, offset, err)
		}
	}
	return limitedFile{Reader: io.LimitReader(f, v.Size-offset), File: f}, nil
}

type limitedFile struct {
	io.Reader
	*os.File
}

func (l limitedFile) Read(p []byte) (int, error) { return l.Reader.Read(p) }

func fileTag(st os.FileInfo) string {
	tag := fmt.Sprintf("%x-%x", st.Size(), st.ModTime().UnixNano())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		tag += fmt.Sprintf("-%x", sys.Ino)
	}
	return tag
}

// List walks the folder of the prefix and returns the files whose keys start with it, in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]blob.Object, error) {
	bucket, key, err := blob.ParseURI(prefix)
	if err != nil {
		return nil, fmt.Errorf("fsblob: list: %w", err)
	}
	if err := validBucket(bucket); err != nil {
		return nil, fmt.Errorf("fsblob: list %s: %w", prefix, err)
	}
	// Walk only the folder the prefix names; its last element may be a partial name.
	dirKey := ""
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		dirKey = key[:i]
	}
	if dirKey != "" {
		if err := validKey(dirKey); err != nil {
			return nil, fmt.Errorf("fsblob: list %s: %w", prefix, err)
		}
	}
	bucketDir := filepath.Join(s.Root, bucket)
	walkDir := filepath.Join(bucketDir, filepath.FromSlash(dirKey))
	if err := s.noSymlinks(walkDir); err != nil {
		return nil, fmt.Errorf("fsblob: list %s: %w", prefix, err)
	}
	var out []blob.Object
	err = filepath.WalkDir(walkDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if missing(err) {
				return nil // the folder or a file vanished under us: it is simply not listed
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(bucketDir, p)
		if err != nil {
			return err
		}
		k := filepath.ToSlash(rel)
		if !strings.HasPrefix(k, key) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if missing(err) {
				return nil
			}
			return err
		}
		out = append(out, blob.Object{URI: "s3://" + bucket + "/" + k, Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fsblob: list %s: %w", prefix, err)
	}
	// Walk order is per folder; S3 order is by the whole key ("a.b" before "a/b").
	slices.SortFunc(out, func(a, b blob.Object) int { return strings.Compare(a.URI, b.URI) })
	return out, nil
}

// Delete removes the object and any folders it leaves empty.
func (s *Store) Delete(ctx context.Context, uri string) error {
	p, err := s.objectPath(uri)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fsblob: delete %s: %w", uri, err)
	}
	st, err := os.Lstat(p)
	if err != nil {
		if missing(err) {
			return nil
		}
		return fmt.Errorf("fsblob: delete %s: %w", uri, err)
	}
	if st.IsDir() {
		return nil // a folder is not an object
	}
	if err := os.Remove(p); err != nil && !missing(err) {
		return fmt.Errorf("fsblob: delete %s: %w", uri, err)
	}
	bucket, _, _ := blob.ParseURI(uri)
	stop := filepath.Join(s.Root, bucket)
	for dir := filepath.Dir(p); dir != stop && strings.HasPrefix(dir, stop); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty (or gone): stop pruning
		}
	}
	return nil
}

// PresignGet returns a file:// URL; the local file needs no signature, so ttl is unused.
func (s *Store) PresignGet(ctx context.Context, uri string, ttl time.Duration) (string, error) {
	p, err := s.objectPath(uri)
	if err != nil {
		return "", err
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String(), nil
}

// objectPath maps s3://bucket/key to a path under Root, refusing anything that could escape it.
func (s *Store) objectPath(uri string) (string, error) {
	bucket, key, err := blob.ParseURI(uri)
	if err != nil {
		return "", fmt.Errorf("fsblob: %w", err)
	}
	if err := validBucket(bucket); err != nil {
		return "", fmt.Errorf("fsblob: %s: %w", uri, err)
	}
	if err := validKey(key); err != nil {
		return "", fmt.Errorf("fsblob: %s: %w", uri, err)
	}
	p := filepath.Join(s.Root, bucket, filepath.FromSlash(key))
	if !strings.HasPrefix(p, s.Root+string(filepath.Separator)) {
		return "", fmt.Errorf("fsblob: %s: escapes the root", uri)
	}
	if err := s.noSymlinks(p); err != nil {
		return "", fmt.Errorf("fsblob: %s: %w", uri, err)
	}
	return p, nil
}

func validBucket(b string) error {
	if b == "" || strings.HasPrefix(b, ".") || strings.ContainsAny(b, "/\\\x00") {
		return fmt.Errorf("invalid bucket name %q", b)
	}
	return nil
}

// validKey accepts keys whose every "/"-separated element is a plain file name.
func validKey(k string) error {
	if k == "" {
		return errors.New("empty key")
	}
	if strings.HasPrefix(k, "/") {
		return fmt.Errorf("key %q is absolute", k)
	}
	if strings.ContainsRune(k, 0) {
		return fmt.Errorf("key %q holds a NUL byte", k)
	}
	for _, el := range strings.Split(k, "/") {
		switch el {
		case "":
			return fmt.Errorf("key %q has an empty path element", k)
		case ".", "..":
			return fmt.Errorf("key %q has a %q element", k, el)
		}
	}
	return nil
}

// missing reports errors that mean "no such object": a missing file, or a file
// where a folder of the path was expected.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// ctxReader stops a copy when the context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
