package mcpserver

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/pipeline"
)

// TokenPrefix starts every generated API key, so a leaked key is recognisable
// by secret scanners.
const TokenPrefix = "mcpb_"

// ErrAuthUnavailable means the key store could not be read: the caller gets a
// 503 to retry, not a 401 that would make it drop a good key.
var ErrAuthUnavailable = errors.New("authentication unavailable")

// ErrBadToken is any token failure: missing, malformed or unknown. It says
// nothing about which keys exist.
var ErrBadToken = errors.New("missing or invalid bearer token")

// TokenKey is one API key as stored: its name (the owner of its jobs) and the
// hex SHA-256 of the key. The key itself is never stored.
type TokenKey struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// TokenFile is the JSON document kept in Secrets Manager.
type TokenFile struct {
	Keys []TokenKey `json:"keys"`
}

var keyNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$`)

// reservedOwnerPrefix starts the owner of a report pipeline's jobs; a key with
// such a name would own (read, export, cancel) that pipeline's jobs.
var reservedOwnerPrefix = pipeline.Owner("")

// checkKeyName refuses a name no key may have.
func checkKeyName(name string) error {
	if !keyNamePattern.MatchString(name) {
		return fmt.Errorf("must match %s", keyNamePattern)
	}
	// Any case: a look-alike owner name would confuse whoever reads the logs.
	if strings.HasPrefix(strings.ToLower(name), reservedOwnerPrefix) {
		return fmt.Errorf("uses the reserved prefix %q (owner of report pipeline jobs)", reservedOwnerPrefix)
	}
	return nil
}

// ParseTokenFile reads and checks a stored key document.
func ParseTokenFile(raw []byte) ([]TokenKey, error) {
	var f TokenFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf(`token keys: not JSON of the form {"keys":[{"name":"...","sha256":"<64 hex>"}]}: %w`, err)
	}
	names := map[string]bool{}
	for i, k := range f.Keys {
		if err := checkKeyName(k.Name); err != nil {
			return nil, fmt.Errorf("token keys: keys[%d].name %q %w", i, k.Name, err)
		}
		if b, err := hex.DecodeString(k.SHA256); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("token keys: keys[%d].sha256 (key %q) must be 64 hex characters", i, k.Name)
		}
		if names[k.Name] {
			return nil, fmt.Errorf("token keys: keys[%d].name %q is used twice", i, k.Name)
		}
		names[k.Name] = true
	}
	return f.Keys, nil
}

// HashToken is the stored form of an API key.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewToken returns a fresh random API key (256 bits).
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return TokenPrefix + hex.EncodeToString(b)
}

// KeySource loads the current key list (from Secrets Manager, or memory).
type KeySource func() ([]TokenKey, error)

// TokenAuth authenticates bearer API keys against stored SHA-256 hashes.
type TokenAuth struct {
	// Load returns the keys; it is called on first use and when MaxAge has passed.
	Load KeySource
	// MaxAge is how long loaded keys are trusted before a re-read, so a key
	// added or revoked in the store takes effect without a redeploy (0: 5 min).
	MaxAge time.Duration
	Now    func() time.Time

	mu       sync.RWMutex
	hashes   [][sha256.Size]byte
	names    []string
	loadedAt time.Time
}

func (a *TokenAuth) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Reload re-reads the keys (a cold start loads them once; callers may refresh).
func (a *TokenAuth) Reload() error {
	keys, err := a.Load()
	if err != nil {
		return err
	}
	hashes := make([][sha256.Size]byte, len(keys))
	names := make([]string, len(keys))
	for i, k := range keys {
		if err := checkKeyName(k.Name); err != nil {
			return fmt.Errorf("token key %q: name %w", k.Name, err)
		}
		b, err := hex.DecodeString(k.SHA256)
		if err != nil || len(b) != sha256.Size {
			return fmt.Errorf("token key %q: sha256 must be 64 hex characters", k.Name)
		}
		copy(hashes[i][:], b)
		names[i] = k.Name
	}
	a.mu.Lock()
	a.hashes, a.names, a.loadedAt = hashes, names, a.now()
	a.mu.Unlock()
	return nil
}

// fresh reloads stale keys; a failed reload keeps the previous keys if any.
func (a *TokenAuth) fresh() error {
	maxAge := a.MaxAge
	if maxAge <= 0 {
		maxAge = 5 * time.Minute
	}
	a.mu.RLock()
	at := a.loadedAt
	a.mu.RUnlock()
	if !at.IsZero() && a.now().Sub(at) < maxAge {
		return nil
	}
	if err := a.Reload(); err != nil {
		if at.IsZero() {
			return fmt.Errorf("%w: load token keys: %v", ErrAuthUnavailable, err)
		}
		a.mu.Lock()
		a.loadedAt = a.now() // keep serving with the old keys; retry after MaxAge
		a.mu.Unlock()
	}
	return nil
}

// Owner is an OwnerFunc: the name of the key in the Authorization header.
func (a *TokenAuth) Owner(r *http.Request) (string, error) {
	if err := a.fresh(); err != nil {
		return "", err
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", ErrBadToken
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	a.mu.RLock()
	defer a.mu.RUnlock()
	// Compare against every key, in constant time each, and do not stop at a
	// match: the time taken says nothing about which key (if any) matched.
	match := -1
	for i := range a.hashes {
		if subtle.ConstantTimeCompare(sum[:], a.hashes[i][:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return "", ErrBadToken
	}
	return a.names[match], nil
}

// StaticKeys is a KeySource over a fixed list (make dev, tests).
func StaticKeys(keys ...TokenKey) KeySource {
	return func() ([]TokenKey, error) { return keys, nil }
}
