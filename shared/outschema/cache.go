package outschema

import "sync"

// For is Compile with the compiled schemas of recent jobs kept: every
// record of a job is encoded and checked against the same schema, and a
// compile costs far more than a check.
func For(raw string) (*Schema, error) {
	key := raw
	cache.mu.Lock()
	s, ok := cache.m[key]
	cache.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := Compile([]byte(raw))
	if err != nil {
		return nil, err
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if len(cache.m) >= maxCached {
		clear(cache.m) // many jobs at once in one process: start over
	}
	cache.m[key] = s
	return s, nil
}

// maxCached bounds the compiled schemas kept (each at most MaxSchemaBytes of source).
const maxCached = 64

var cache = struct {
	mu sync.Mutex
	m  map[string]*Schema
}{m: map[string]*Schema{}}
