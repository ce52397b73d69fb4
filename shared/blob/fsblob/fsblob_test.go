package fsblob_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/blob/blobtest"
	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
)

func TestContract(t *testing.T) {
	root := t.TempDir()
	blobtest.Run(t, func(t *testing.T) blob.Store {
		s, err := fsblob.New(root)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, "mcpbatch-test")
}

func TestKeysCannotEscapeRoot(t *testing.T) {
	parent := t.TempDir()
	s, err := fsblob.New(filepath.Join(parent, "root"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, uri := range []string{
		"s3://b/../../outside",
		"s3://b/a/../../../outside",
		"s3://../outside",
		"s3://b//etc/passwd",
		"s3://b/./x",
		"s3://b/x/",
		"s3://.tmp/x",
		"s3://b/x\x00y",
	} {
		t.Run(uri, func(t *testing.T) {
			if _, err := s.Put(ctx, uri, strings.NewReader("pwned"), ""); err == nil {
				t.Error("Put succeeded")
			}
			if _, err := s.Open(ctx, uri, 0); err == nil || errors.Is(err, blob.ErrNotFound) {
				t.Errorf("Open = %v, want a refusal", err)
			}
			if err := s.Delete(ctx, uri); err == nil {
				t.Error("Delete succeeded")
			}
			if _, err := s.PresignGet(ctx, uri, 0); err == nil {
				t.Error("PresignGet succeeded")
			}
		})
	}
	if _, err := s.List(ctx, "s3://b/../../"); err == nil {
		t.Error("List above the root succeeded")
	}
	if _, err := os.Stat(filepath.Join(parent, "outside")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file escaped the root: %v", err)
	}
}

func TestTempFilesAreNotListed(t *testing.T) {
	root := t.TempDir()
	s, err := fsblob.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Put(ctx, "s3://b/k", strings.NewReader("x"), ""); err != nil {
		t.Fatal(err)
	}
	// A write in progress (or one a crash left behind) lives outside every bucket.
	if err := os.WriteFile(filepath.Join(root, ".tmp", "put-123"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := s.List(ctx, "s3://b/")
	if err != nil || len(objs) != 1 || objs[0].URI != "s3://b/k" {
		t.Fatalf("List = %v, %v", objs, err)
	}
	left, _ := os.ReadDir(filepath.Join(root, ".tmp"))
	if len(left) != 1 {
		t.Fatalf("Put left %d temp files behind", len(left)-1)
	}
}

// A symlinked folder under the root (or the root itself) would let a key reach
// files outside it: every operation through one is refused.
func TestSymlinkedFoldersAreRefused(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	outside := filepath.Join(parent, "outside")
	if err := os.MkdirAll(filepath.Join(outside, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "sub", "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("root", func(t *testing.T) {
		link := filepath.Join(parent, "rootlink")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		if _, err := fsblob.New(link); err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("New on a symlinked root = %v, want a refusal naming the symlink", err)
		}
	})

	s, err := fsblob.New(filepath.Join(parent, "root"))
	if err != nil {
		t.Fatal(err)
	}
	// A bucket folder, a folder inside a bucket, and an object that are symlinks.
	if err := os.Symlink(outside, filepath.Join(s.Root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.Root, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.Root, "b", "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(s.Root, "b", "file.txt")); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{
		"s3://linked/secret.txt",
		"s3://linked/sub/secret.txt",
		"s3://b/dir/secret.txt",
		"s3://b/dir/sub/secret.txt",
		"s3://b/file.txt",
	} {
		t.Run(uri, func(t *testing.T) {
			if rc, err := s.Open(ctx, uri, 0); err == nil || !strings.Contains(err.Error(), "symlink") {
				if rc != nil {
					rc.Close()
				}
				t.Errorf("Open = %v, want a refusal naming the symlink", err)
			}
			if _, err := s.Put(ctx, uri, strings.NewReader("x"), ""); err == nil || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("Put = %v, want a refusal naming the symlink", err)
			}
			if err := s.Delete(ctx, uri); err == nil || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("Delete = %v, want a refusal naming the symlink", err)
			}
			if _, err := s.PresignGet(ctx, uri, 0); err == nil || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("PresignGet = %v, want a refusal naming the symlink", err)
			}
		})
	}
	for _, prefix := range []string{"s3://linked/", "s3://b/dir/", "s3://b/dir/sub/x"} {
		if objs, err := s.List(ctx, prefix); err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Errorf("List(%s) = %v, %v; want a refusal naming the symlink", prefix, objs, err)
		}
	}
	// Nothing outside was touched.
	for _, f := range []string{"secret.txt", "sub/secret.txt"} {
		if b, err := os.ReadFile(filepath.Join(outside, f)); err != nil || string(b) != "secret" {
			t.Errorf("%s outside the root changed: %q %v", f, b, err)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 2 {
		t.Errorf("outside holds %d entries, want 2 (nothing written through a symlink)", len(ents))
	}
	// Plain objects still work.
	if _, err := s.Put(ctx, "s3://b/ok/x.txt", strings.NewReader("x"), ""); err != nil {
		t.Fatal(err)
	}
	if objs, err := s.List(ctx, "s3://b/ok/"); err != nil || len(objs) != 1 {
		t.Fatalf("List plain = %v %v", objs, err)
	}
}
