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
