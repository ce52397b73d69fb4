package local

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestDevToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	key, auth, err := DevToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, DevTokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("dev-token file: %v %v, want mode 0600", fi, err)
	}
	again, _, err := DevToken(dir)
	if err != nil || again != key {
		t.Fatalf("restart gave key %q (%v), want the same key", again, err)
	}
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	if owner, err := auth.Owner(r); err != nil || owner != DevKeyName {
		t.Fatalf("owner %q %v", owner, err)
	}
	for _, bad := range []string{"", "hunter2", "mcpb_short"} {
		if err := os.WriteFile(filepath.Join(dir, DevTokenFile), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		fresh, _, err := DevToken(dir)
		if err != nil || fresh == key || fresh == bad || !validDevKey(fresh) {
			t.Errorf("malformed file %q gave key %q (%v), want a fresh valid key", bad, fresh, err)
		}
	}
}

// TestSecondDevKey: make dev has a second key, another owner, for trying
// owner isolation locally; both files hold the key alone, no newline.
func TestSecondDevKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	key, auth, err := DevToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	second, err := SecondDevToken(dir)
	if err != nil || second == key || !validDevKey(second) {
		t.Fatalf("second key %q (%v)", second, err)
	}
	owners := map[string]bool{}
	for _, k := range []string{key, second} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+k)
		owner, err := auth.Owner(r)
		if err != nil {
			t.Fatalf("key %q: %v", k, err)
		}
		owners[owner] = true
	}
	if len(owners) != 2 {
		t.Fatalf("owners %v, want two", owners)
	}
	for _, f := range []string{DevTokenFile, SecondDevTokenFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 || b[len(b)-1] == '\n' {
			t.Errorf("%s: %q (%v): want the key alone, no trailing newline", f, b, err)
		}
	}
}
