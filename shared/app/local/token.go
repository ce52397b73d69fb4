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

// DevToken returns make dev's API key and the token auth that accepts it. The
// key in <dir>/dev-token is reused so configured clients keep working across
// restarts; a missing or malformed file gets a fresh key (mode 0600).
func DevToken(dir string) (key string, auth *mcpserver.TokenAuth, err error) {
	path := filepath.Join(dir, DevTokenFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil && validDevKey(strings.TrimSpace(string(b))):
		key = strings.TrimSpace(string(b))
	case err == nil || errors.Is(err, fs.ErrNotExist):
		key = mcpserver.NewToken()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("create %s: %w", dir, err)
		}
		if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
			return "", nil, fmt.Errorf("write dev token: %w", err)
		}
	default:
		return "", nil, fmt.Errorf("read dev token: %w", err)
	}
	auth = &mcpserver.TokenAuth{Load: mcpserver.StaticKeys(mcpserver.TokenKey{Name: DevKeyName, SHA256: mcpserver.HashToken(key)})}
	return key, auth, nil
}

func validDevKey(k string) bool {
	return strings.HasPrefix(k, mcpserver.TokenPrefix) && len(k) >= len(mcpserver.TokenPrefix)+32 && !strings.ContainsAny(k, " \t\r\n")
}
