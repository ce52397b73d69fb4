package store

import (
	"context"
	"sync"
)

// ReadCache keeps what a store read during one request, so that the reads
// of one request that need the same items (a results page read in chunks:
// a first record to size the rest, then the rest) read them once. It lives
// as long as the context it is attached to; a request that writes must not
// carry one across its writes.
type ReadCache struct {
	mu sync.Mutex
	m  map[string]any
}

type readCacheKey struct{}

// WithReadCache attaches a new ReadCache to ctx.
func WithReadCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, readCacheKey{}, &ReadCache{m: map[string]any{}})
}

// ReadCacheOf is ctx's ReadCache, nil when it has none.
func ReadCacheOf(ctx context.Context) *ReadCache {
	c, _ := ctx.Value(readCacheKey{}).(*ReadCache)
	return c
}

// Load returns what was stored under key; a nil cache holds nothing.
func (c *ReadCache) Load(key string) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

// Store keeps v under key; a nil cache keeps nothing.
func (c *ReadCache) Store(key string, v any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = v
}
