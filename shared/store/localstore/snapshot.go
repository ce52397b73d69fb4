package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/store"
)

var _ store.Snapshots = (*Store)(nil)

// GetSnapshot implements store.Snapshots.
func (s *Store) GetSnapshot(ctx context.Context, key string) (store.Snapshot, error) {
	var snap store.Snapshot
	var at int64
	err := s.db.QueryRowContext(ctx, "SELECT version, updated_at, data FROM snapshots WHERE key = ?", key).Scan(&snap.Version, &at, &snap.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Snapshot{}, store.ErrNotFound
	}
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("localstore: snapshot %s: %w", key, err)
	}
	snap.UpdatedAt = time.Unix(0, at).UTC()
	return snap, nil
}

// PutSnapshot implements store.Snapshots.
func (s *Store) PutSnapshot(ctx context.Context, key string, prev int64, data []byte, at time.Time) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var res sql.Result
	var err error
	if prev == 0 {
		res, err = s.db.ExecContext(ctx, "INSERT INTO snapshots (key, version, updated_at, data) VALUES (?, 1, ?, ?) ON CONFLICT (key) DO NOTHING",
			key, at.UnixNano(), data)
	} else {
		res, err = s.db.ExecContext(ctx, "UPDATE snapshots SET version = version + 1, updated_at = ?, data = ? WHERE key = ? AND version = ?",
			at.UnixNano(), data, key, prev)
	}
	if err != nil {
		return 0, fmt.Errorf("localstore: put snapshot %s: %w", key, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return 0, fmt.Errorf("localstore: put snapshot %s over version %d: %w", key, prev, store.ErrConflict)
	}
	return prev + 1, nil
}
