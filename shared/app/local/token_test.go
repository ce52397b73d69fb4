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
