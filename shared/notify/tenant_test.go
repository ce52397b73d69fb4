package notify

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestTenantCannotForgeOrReplay: each owner verifies with its own secret
// (derived from the deployment's master secret, which no owner holds), and
// the signed string names the owner and the receiver's URL. A tenant that
// received its own delivery, or that knows its own secret, can neither
// replay that delivery to another tenant's receiver nor forge one for it,
// nor move a delivery between two receivers of one owner.
func TestTenantCannotForgeOrReplay(t *testing.T) {
	master := []byte("master-secret-of-the-deployment-0123456789")
	w := &Webhook{Keys: StaticKeys{master}, AllowLoopback: true, Backoff: noWait}
	rcB, srvB := newReceiver(t)
	const alice, bob = "arn:aws:iam::111122223333:role/Alice", "arn:aws:iam::111122223333:role/Bob"
	urlA, urlB := "https://alice.example.com/hooks", srvB.URL+"/hooks"
	if err := w.Send(context.Background(), bob, urlB, body); err != nil {
		t.Fatal(err)
	}
	d := rcB.got[0]
	ts, sig := d.header.Get(HeaderTimestamp), d.header.Get(HeaderSignature)
	if d.header.Get(HeaderOwner) != bob {
		t.Fatalf("owner header %q, want %q", d.header.Get(HeaderOwner), bob)
	}
	secA, secB := OwnerSecret(master, alice), OwnerSecret(master, bob)
	if string(secA) == string(secB) || string(secA) == string(master) {
		t.Fatal("owners share a secret, or an owner's secret is the master")
	}
	now := time.Now()
	if err := Verify(secB, bob, urlB, ts, sig, d.body, now, 5*time.Minute); err != nil {
		t.Fatalf("Bob's own delivery: %v", err)
	}
	forged := Sign(secB, ts, alice, urlA, body) // Bob signs with the only secret he has
	for name, err := range map[string]error{
		"replayed to Alice's receiver":           Verify(secA, alice, urlA, ts, sig, d.body, now, 5*time.Minute),
		"forged by Bob with his own secret":      Verify(secA, alice, urlA, ts, forged, body, now, 5*time.Minute),
		"replayed to another receiver of Bob's":  Verify(secB, bob, "https://bob.example.com/other", ts, sig, d.body, now, 5*time.Minute),
		"claimed as Alice's with Bob's secret":   Verify(secB, alice, urlB, ts, sig, d.body, now, 5*time.Minute),
		"master secret does not verify directly": Verify(master, bob, urlB, ts, sig, d.body, now, 5*time.Minute),
	} {
		if !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: %v, want a mismatch", name, err)
		}
	}
}

// TestRotation: with the master secret being rotated ("new old"), every
// delivery carries one v1= per secret, so receivers holding either owner
// secret verify it; once the old one is dropped, the old secret fails.
func TestRotation(t *testing.T) {
	old, cur := []byte("old-master-0123456789abcdef0123456789"), []byte("new-master-0123456789abcdef0123456789")
	keys, err := ParseKeys(" " + string(cur) + "\n" + string(old) + "\n")
	if err != nil || len(keys) != 2 || string(keys[0]) != string(cur) {
		t.Fatalf("ParseKeys: %q, %v", keys, err)
	}
	const owner = "local-dev"
	for _, tc := range []struct {
		keys      StaticKeys
		verifying [][]byte
		refused   [][]byte
	}{
		{StaticKeys{cur, old}, [][]byte{OwnerSecret(cur, owner), OwnerSecret(old, owner)}, nil},
		{StaticKeys{cur}, [][]byte{OwnerSecret(cur, owner)}, [][]byte{OwnerSecret(old, owner)}},
	} {
		rc, srv := newReceiver(t)
		w := &Webhook{Keys: tc.keys, AllowLoopback: true}
		if err := w.Send(context.Background(), owner, srv.URL, body); err != nil {
			t.Fatal(err)
		}
		d := rc.got[0]
		sig := d.header.Get(HeaderSignature)
		if n := strings.Count(sig, "v1="); n != len(tc.keys) {
			t.Fatalf("signature %q: %d v1= values, want %d", sig, n, len(tc.keys))
		}
		for _, s := range tc.verifying {
			if err := Verify(s, owner, srv.URL, d.header.Get(HeaderTimestamp), sig, d.body, time.Now(), time.Minute); err != nil {
				t.Errorf("%d keys: a receiver's secret refused: %v", len(tc.keys), err)
			}
		}
		for _, s := range tc.refused {
			if err := Verify(s, owner, srv.URL, d.header.Get(HeaderTimestamp), sig, d.body, time.Now(), time.Minute); !errors.Is(err, ErrMismatch) {
				t.Errorf("the retired secret: %v, want a mismatch", err)
			}
		}
	}
	if _, err := ParseKeys("short"); err == nil {
		t.Error("ParseKeys accepted a 5-character secret")
	}
}

// TestReceiverAnswers400ToMalformedHeaders: the example receiver (Receiver)
// answers 400 to a malformed timestamp or signature header, 401 to a wrong or
// stale signature, and 204 to a genuine delivery; never 500.
func TestReceiverAnswers400ToMalformedHeaders(t *testing.T) {
	secret := OwnerSecret([]byte("master-secret-of-the-deployment-0123456789"), "local-dev")
	const url = "https://hooks.example.com/mcpbatch"
	now := time.Now()
	ts := "1796068800"
	now = time.Unix(1796068800, 0).Add(10 * time.Second)
	good := Sign(secret, ts, "local-dev", url, body)
	h := &Receiver{Secret: secret, Owner: "local-dev", URL: url, Now: func() time.Time { return now },
		Handle: func([]byte) error { return nil }}
	for _, tc := range []struct {
		name    string
		ts, sig string
		want    int
	}{
		{"genuine", ts, good, http.StatusNoContent},
		{"no timestamp", "", good, http.StatusBadRequest},
		{"timestamp not a number", "yesterday", good, http.StatusBadRequest},
		{"timestamp overflows", "99999999999999999999999", good, http.StatusBadRequest},
		{"no signature", ts, "", http.StatusBadRequest},
		{"signature without v1=", ts, strings.TrimPrefix(good, "v1="), http.StatusBadRequest},
		{"signature not hex", ts, "v1=" + strings.Repeat("z", 64), http.StatusBadRequest},
		{"signature too short", ts, "v1=abcd", http.StatusBadRequest},
		{"wrong signature", ts, "v1=" + strings.Repeat("0", 64), http.StatusUnauthorized},
		{"stale", "1796060000", Sign(secret, "1796060000", "local-dev", url, body), http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
			req.Header.Set(HeaderTimestamp, tc.ts)
			req.Header.Set(HeaderSignature, tc.sig)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d (%s), want %d", rec.Code, strings.TrimSpace(rec.Body.String()), tc.want)
			}
		})
	}
}
