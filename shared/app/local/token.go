package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// DevTokenFile is where make dev keeps its API key, under the state folder, so
// scripts can read it (`Authorization: Bearer $(cat .mcpbatch/dev-token)`).
const DevTokenFile = "dev-token"

// DevKeyName is the owner of the jobs made with the dev key.
const DevKeyName = "dev"

// SecondDevTokenFile and SecondDevKeyName are make dev's second key and its
// owner: another caller, for trying owner isolation locally.
const (
	SecondDevTokenFile = "dev-token-2"
	SecondDevKeyName   = "dev-2"
)

// DevToken returns make dev's API key and the token auth that accepts it and
// the second key (SecondDevToken). Keys in <dir>/dev-token and
// <dir>/dev-token-2 are reused so configured clients keep working across
// restarts; a missing or malformed file gets a fresh key (mode 0600, the key
// alone, no newline).
func DevToken(dir string) (key string, auth *mcpserver.TokenAuth, err error) {
	key, err = devKey(dir, DevTokenFile)
	if err != nil {
		return "", nil, err
	}
	second, err := devKey(dir, SecondDevTokenFile)
	if err != nil {
		return "", nil, err
	}
	auth = &mcpserver.TokenAuth{Load: mcpserver.StaticKeys(
		mcpserver.TokenKey{Name: DevKeyName, SHA256: mcpserver.HashToken(key)},
		mcpserver.TokenKey{Name: SecondDevKeyName, SHA256: mcpserver.HashToken(second)})}
	return key, auth, nil
}

// SecondDevToken returns make dev's second key (another owner).
func SecondDevToken(dir string) (string, error) { return devKey(dir, SecondDevTokenFile) }

func devKey(dir, file string) (string, error) {
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	switch {
	case err == nil && validDevKey(strings.TrimSpace(string(b))):
		return strings.TrimSpace(string(b)), nil
	case err == nil || errors.Is(err, fs.ErrNotExist):
		key := mcpserver.NewToken()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		if err := os.WriteFile(path, []byte(key), 0o600); err != nil {
			return "", fmt.Errorf("write %s: %w", file, err)
		}
		return key, nil
	default:
		return "", fmt.Errorf("read %s: %w", file, err)
	}
}

func validDevKey(k string) bool {
	return strings.HasPrefix(k, mcpserver.TokenPrefix) && len(k) >= len(mcpserver.TokenPrefix)+32 && !strings.ContainsAny(k, " \t\r\n")
}
