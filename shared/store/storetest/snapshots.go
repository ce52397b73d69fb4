package storetest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/store"
)

// SnapshotFactory returns a fresh, empty snapshot store.
type SnapshotFactory func(t *testing.T) store.Snapshots

// RunSnapshots is the contract suite of store.Snapshots.
func RunSnapshots(t *testing.T, newStore SnapshotFactory) {
	at := time.Date(2026, 12, 1, 3, 4, 5, 6000, time.UTC)
	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.GetSnapshot(t.Context(), "acct"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("empty store: %v, want ErrNotFound", err)
		}
		v, err := s.PutSnapshot(t.Context(), "acct", 0, []byte(`{"a":1}`), at)
		if err != nil || v != 1 {
			t.Fatalf("first put: %d, %v", v, err)
		}
		got, err := s.GetSnapshot(t.Context(), "acct")
		if err != nil || got.Version != 1 || !got.UpdatedAt.Equal(at) || string(got.Data) != `{"a":1}` {
			t.Fatalf("get: %+v %s, %v", got, got.Data, err)
		}
		if _, err := s.GetSnapshot(t.Context(), "other"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("other key: %v, want ErrNotFound", err)
		}
	})
	t.Run("Versioned", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.PutSnapshot(t.Context(), "acct", 0, []byte("one"), at); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutSnapshot(t.Context(), "acct", 0, []byte("again"), at); !errors.Is(err, store.ErrConflict) {
			t.Errorf("second create: %v, want ErrConflict", err)
		}
		v, err := s.PutSnapshot(t.Context(), "acct", 1, []byte("two"), at.Add(time.Hour))
		if err != nil || v != 2 {
			t.Fatalf("replace: %d, %v", v, err)
		}
		if _, err := s.PutSnapshot(t.Context(), "acct", 1, []byte("stale"), at); !errors.Is(err, store.ErrConflict) {
			t.Errorf("stale replace: %v, want ErrConflict", err)
		}
		got, err := s.GetSnapshot(t.Context(), "acct")
		if err != nil || got.Version != 2 || string(got.Data) != "two" || !got.UpdatedAt.Equal(at.Add(time.Hour)) {
			t.Errorf("after replace: %+v %q, %v", got, got.Data, err)
		}
	})
	t.Run("LargerThanAnItem", func(t *testing.T) {
		// 1.2 MB that does not compress: three times DynamoDB's 400 KB item.
		big := make([]byte, 1_200_000)
		_, _ = rand.Read(big)
		s := newStore(t)
		for prev, data := range [][]byte{big, big[:700_000]} {
			if _, err := s.PutSnapshot(t.Context(), "acct", int64(prev), data, at); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetSnapshot(t.Context(), "acct")
			if err != nil || !bytes.Equal(got.Data, data) {
				t.Fatalf("version %d: %d bytes back of %d, %v", prev+1, len(got.Data), len(data), err)
			}
		}
	})
}
