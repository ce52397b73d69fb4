package store

import (
	"context"
	"time"
)

// Snapshot is a document a refresh replaces whole, such as the account's
// model facts (shared/service/account). Data is opaque to the store.
type Snapshot struct {
	Version   int64
	UpdatedAt time.Time
	Data      []byte
}

// Snapshots is the port of snapshot documents, one per key. Both adapters
// implement it beside Store and pass storetest.RunSnapshots.
type Snapshots interface {
	// GetSnapshot returns key's document; ErrNotFound when there is none.
	GetSnapshot(ctx context.Context, key string) (Snapshot, error)
	// PutSnapshot replaces key's document when the stored version is still
	// prev (0: none stored yet) and returns the new version; ErrConflict when
	// another writer came first. A document of any size is accepted (the
	// DynamoDB adapter splits what a 400 KB item cannot hold).
	PutSnapshot(ctx context.Context, key string, prev int64, data []byte, at time.Time) (int64, error)
}
