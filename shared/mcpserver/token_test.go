package mcpserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseTokenFile(t *testing.T) {
	good := HashToken("k")
	tests := []struct {
		name    string
		raw     string
		want    int
		wantErr string
	}{
		{"two keys", `{"keys":[{"name":"alice","sha256":"` + good + `"},{"name":"ci-bot","sha256":"` + good + `"}]}`, 2, ""},
		{"no keys", `{"keys":[]}`, 0, ""},
		{"not json", `alice:` + good, 0, "not JSON"},
		{"bad name", `{"keys":[{"name":"a b","sha256":"` + good + `"}]}`, 0, "keys[0].name"},
		{"short hash", `{"keys":[{"name":"alice","sha256":"abcd"}]}`, 0, "keys[0].sha256"},
		{"plain key stored by mistake", `{"keys":[{"name":"alice","sha256":"mcpb_0123"}]}`, 0, "64 hex"},
		{"reserved pipeline prefix", `{"keys":[{"name":"pipeline:nightly","sha256":"` + good + `"}]}`, 0, `reserved prefix "pipeline:"`},
		{"reserved prefix any case", `{"keys":[{"name":"Pipeline:nightly","sha256":"` + good + `"}]}`, 0, `reserved prefix "pipeline:"`},
		{"colon elsewhere is fine", `{"keys":[{"name":"team:pipeline","sha256":"` + good + `"}]}`, 1, ""},
		{"duplicate name", `{"keys":[{"name":"a","sha256":"` + good + `"},{"name":"a","sha256":"` + good + `"}]}`, 0, "used twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := ParseTokenFile([]byte(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), good) {
					t.Errorf("error leaks a stored hash: %v", err)
				}
				return
			}
			if err != nil || len(keys) != tc.want {
				t.Fatalf("keys %v err %v, want %d keys", keys, err, tc.want)
			}
		})
	}
}

// A key loaded from any source (not only the stored document) may not take a
// pipeline's owner name: it would own that pipeline's jobs.
func TestTokenAuthReloadRefusesReservedName(t *testing.T) {
	a := &TokenAuth{Load: StaticKeys(TokenKey{Name: "pipeline:nightly", SHA256: HashToken("k")})}
	err := a.Reload()
	if err == nil || !strings.Contains(err.Error(), `reserved prefix "pipeline:"`) {
		t.Fatalf("Reload err %v, want one naming the reserved prefix", err)
	}
}

func TestTokenAuthOwner(t *testing.T) {
	alice, bob := NewToken(), NewToken()
	if !strings.HasPrefix(alice, TokenPrefix) || len(alice) != len(TokenPrefix)+64 || alice == bob {
		t.Fatalf("NewToken gave %q and %q", alice, bob)
	}
	auth := &TokenAuth{Load: StaticKeys(TokenKey{Name: "alice", SHA256: HashToken(alice)}, TokenKey{Name: "bob", SHA256: HashToken(bob)})}
	tests := []struct {
		name   string
		header string
		want   string
	}{
		{"alice", "Bearer " + alice, "alice"},
		{"bob, scheme in lower case", "bearer " + bob, "bob"},
		{"no header", "", ""},
		{"wrong scheme", "Basic " + alice, ""},
		{"empty token", "Bearer ", ""},
		{"unknown key", "Bearer " + NewToken(), ""},
		{"the stored hash is not a key", "Bearer " + HashToken(alice), ""},
		{"prefix of a key", "Bearer " + alice[:20], ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			got, err := auth.Owner(r)
			if tc.want == "" {
				if !errors.Is(err, ErrBadToken) || got != "" {
					t.Fatalf("owner %q err %v, want ErrBadToken", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("owner %q err %v, want %q", got, err, tc.want)
			}
		})
	}
}

// A key added to the store is accepted once MaxAge has passed; a store that
// cannot be read keeps the old keys, and with none loaded yet it is a 503.
func TestTokenAuthReload(t *testing.T) {
	key := NewToken()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var keys []TokenKey
	var loadErr error
	auth := &TokenAuth{MaxAge: time.Minute, Now: func() time.Time { return now },
		Load: func() ([]TokenKey, error) { return keys, loadErr }}
	req := func() (string, error) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		return auth.Owner(r)
	}
	loadErr = errors.New("AccessDenied")
	if _, err := req(); !errors.Is(err, ErrAuthUnavailable) {
		t.Fatalf("unreadable store on first use: %v, want ErrAuthUnavailable", err)
	}
	loadErr = nil
	if _, err := req(); !errors.Is(err, ErrBadToken) {
		t.Fatalf("empty store: %v, want ErrBadToken", err)
	}
	keys = []TokenKey{{Name: "carol", SHA256: HashToken(key)}}
	if _, err := req(); !errors.Is(err, ErrBadToken) {
		t.Fatalf("before MaxAge the new key is not known yet: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if got, err := req(); err != nil || got != "carol" {
		t.Fatalf("after MaxAge: %q %v, want carol", got, err)
	}
	loadErr = errors.New("throttled")
	now = now.Add(2 * time.Minute)
	if got, err := req(); err != nil || got != "carol" {
		t.Fatalf("store unreadable later keeps old keys: %q %v", got, err)
	}
}

func TestHandlerAuthStatus(t *testing.T) {
	key := NewToken()
	auth := &TokenAuth{Load: StaticKeys(TokenKey{Name: "alice", SHA256: HashToken(key)})}
	down := &TokenAuth{Load: func() ([]TokenKey, error) { return nil, errors.New("no route") }}
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tests := []struct {
		name       string
		owner      OwnerFunc
		header     string
		wantStatus int
	}{
		{"good key", auth.Owner, "Bearer " + key, http.StatusOK},
		{"no key", auth.Owner, "", http.StatusUnauthorized},
		{"bad key", auth.Owner, "Bearer mcpb_nope", http.StatusUnauthorized},
		{"key store down", down.Owner, "Bearer " + key, http.StatusServiceUnavailable},
	}
	h := (&Server{}).Handler
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			h(tc.owner).ServeHTTP(w, r)
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.wantStatus, w.Body.String())
			}
			if tc.wantStatus == http.StatusUnauthorized {
				if got := w.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
					t.Errorf("WWW-Authenticate %q, want Bearer", got)
				}
				if strings.Contains(w.Body.String(), "alice") {
					t.Errorf("401 body names a key: %s", w.Body.String())
				}
			}
		})
	}
}

func BenchmarkTokenAuth(b *testing.B) {
	keys := make([]TokenKey, 100)
	for i := range keys {
		keys[i] = TokenKey{Name: "k" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), SHA256: HashToken(NewToken())}
	}
	key := NewToken()
	keys[99] = TokenKey{Name: "last", SHA256: HashToken(key)}
	auth := &TokenAuth{Load: StaticKeys(keys...)}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	for b.Loop() {
		if _, err := auth.Owner(r); err != nil {
			b.Fatal(err)
		}
	}
}
