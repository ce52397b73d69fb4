// Package localdeps sets up the local adapters tests run the services over:
// a SQLite store and an object folder in the test's temp dir, closed when the
// test ends.
package localdeps

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// New opens the store (with opts) and the object folder.
func New(tb testing.TB, opts ...localstore.Option) (*localstore.Store, *fsblob.Store) {
	tb.Helper()
	dir := tb.TempDir()
	st, err := localstore.Open(filepath.Join(dir, "db.sqlite"), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	blobs, err := fsblob.New(filepath.Join(dir, "objects"))
	if err != nil {
		tb.Fatal(err)
	}
	return st, blobs
}

// Read is the whole object at uri.
func Read(tb testing.TB, blobs *fsblob.Store, uri string) string {
	tb.Helper()
	rc, err := blobs.Open(context.Background(), uri, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
