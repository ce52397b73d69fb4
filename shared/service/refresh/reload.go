package refresh

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/store"
)

// DefaultReloadEvery is how long a function that does not refresh the facts
// itself (mcp) keeps the snapshot it read before reading the stored one
// again: a warm Lambda container may live for hours, and the reconciler's
// daily refresh (or an operator's) should reach submits and list_models
// within minutes, not at the next cold start. One GetItem per period.
const DefaultReloadEvery = 15 * time.Minute

// Reloader keeps a catalog on the stored snapshot: Maybe, called before a
// request, reads the snapshot once the last read is older than Every and lays
// it over the catalog when its version changed. A failed read keeps the facts
// already laid (and is tried again next period).
type Reloader struct {
	Service *Service
	Every   time.Duration

	mu      sync.Mutex
	readAt  time.Time
	version int64
}

// Load reads the stored snapshot now (a cold start) and lays it over the
// catalog; store.ErrNotFound when none is stored yet.
func (r *Reloader) Load(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.load(ctx)
}

// Maybe reloads when the last read is older than Every. A request that finds
// another one reloading goes on with the facts it has.
func (r *Reloader) Maybe(ctx context.Context) {
	if !r.mu.TryLock() {
		return
	}
	defer r.mu.Unlock()
	every := r.Every
	if every <= 0 {
		every = DefaultReloadEvery
	}
	if r.Service.now().Sub(r.readAt) < every {
		return
	}
	if err := r.load(ctx); err != nil && !errors.Is(err, store.ErrNotFound) {
		r.Service.log().WarnContext(ctx, "account model facts not reloaded; the ones read before stay", "error", err)
	}
}

func (r *Reloader) load(ctx context.Context) error {
	now := r.Service.now()
	r.readAt = now
	a, err := r.Service.stored(ctx)
	if err != nil {
		return err
	}
	if a.Version != r.version {
		r.Service.Catalog.Apply(a, now)
		r.version = a.Version
	}
	return nil
}
