package notify

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

var secret = []byte("whsec_test_0123456789_master_secret")

const testOwner = "arn:aws:iam::111122223333:role/Analyst"

// ownerSecret is testOwner's verifying secret under secret.
var ownerSecret = OwnerSecret(secret, testOwner)

// receiver is a local webhook endpoint that answers with the scripted statuses
// in turn (200 once they run out) and keeps every delivery.
type receiver struct {
	mu       sync.Mutex
	statuses []int
	got      []delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, delivery{header: r.Header.Clone(), body: body})
	status := http.StatusOK
	if len(rc.statuses) > 0 {
		status, rc.statuses = rc.statuses[0], rc.statuses[1:]
	}
	rc.mu.Unlock()
	w.WriteHeader(status)
}

func newReceiver(t *testing.T, statuses ...int) (*receiver, *httptest.Server) {
	rc := &receiver{statuses: statuses}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv
}

func noWait(int) time.Duration { return 0 }

var body = []byte(`{"job_id":"job_01","status":"partially_completed","succeeded":90,"failed":10}`)

func TestSignatureVerifies(t *testing.T) {
	rc, srv := newReceiver(t)
	now := time.Unix(1796068800, 0)
	w := &Webhook{Keys: StaticKeys{secret}, AllowLoopback: true, Now: func() time.Time { return now }}
	if err := w.Send(context.Background(), testOwner, srv.URL+"/hook", body); err != nil {
		t.Fatal(err)
	}
	if len(rc.got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(rc.got))
	}
	d := rc.got[0]
	ts, sig := d.header.Get(HeaderTimestamp), d.header.Get(HeaderSignature)
	if ts != "1796068800" || !strings.HasPrefix(sig, "v1=") || len(sig) != 3+64 {
		t.Fatalf("headers: timestamp %q signature %q", ts, sig)
	}
	if id := d.header.Get(HeaderDeliveryID); id != DeliveryID(body) || !strings.HasPrefix(id, "whd_") {
		t.Fatalf("delivery id %q", id)
	}
	if d.header.Get("Content-Type") != "application/json" || string(d.body) != string(body) {
		t.Fatalf("content type %q body %q", d.header.Get("Content-Type"), d.body)
	}
	tamperedBody := []byte(strings.Replace(string(d.body), `"failed":10`, `"failed":0`, 1))
	url := srv.URL + "/hook"
	tests := []struct {
		name    string
		secret  []byte
		ts, sig string
		body    []byte
		now     time.Time
		wantErr string
	}{
		{"genuine", ownerSecret, ts, sig, d.body, now.Add(time.Minute), ""},
		{"genuine among rotated signatures", ownerSecret, ts, "v1=" + strings.Repeat("0", 64) + ", " + sig, d.body, now, ""},
		{"wrong secret", []byte("other"), ts, sig, d.body, now, "does not match"},
		{"master instead of the owner secret", secret, ts, sig, d.body, now, "does not match"},
		{"tampered body", ownerSecret, ts, sig, tamperedBody, now, "does not match"},
		{"flipped signature digit", ownerSecret, ts, sig[:10] + string("01"[(sig[10]-'0'+1)%2]) + sig[11:], d.body, now, "does not match"},
		{"timestamp changed", ownerSecret, strconv.FormatInt(now.Unix()+1, 10), sig, d.body, now, "does not match"},
		{"old timestamp (replay)", ownerSecret, ts, sig, d.body, now.Add(10 * time.Minute), "tolerance"},
		{"future timestamp", ownerSecret, ts, sig, d.body, now.Add(-10 * time.Minute), "tolerance"},
		{"not a number", ownerSecret, "yesterday", sig, d.body, now, "Unix seconds"},
		{"no signature", ownerSecret, ts, "", d.body, now, "v1=<64 hex>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.secret, testOwner, url, tc.ts, tc.sig, tc.body, tc.now, 5*time.Minute)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("genuine delivery refused: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		statuses   []int
		attempts   int
		wantErr    bool
		wantStatus int
		wantCalls  int
	}{
		{"503 then success", []int{503, 503}, 5, false, 0, 3},
		{"429 then success", []int{429}, 5, false, 0, 2},
		{"400 is final", []int{400}, 5, true, 400, 1},
		{"404 is final", []int{404}, 5, true, 404, 1},
		{"redirect is not followed", []int{302}, 5, true, 302, 1},
		{"5xx until attempts run out", []int{500, 502, 503, 504}, 3, true, 503, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, srv := newReceiver(t, tc.statuses...)
			var waits []int
			w := &Webhook{Keys: StaticKeys{secret}, AllowLoopback: true, MaxAttempts: tc.attempts,
				Backoff: func(n int) time.Duration { waits = append(waits, n); return 0 }}
			err := w.Send(context.Background(), testOwner, srv.URL, body)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			var de *DeliveryError
			if tc.wantErr && (!errors.As(err, &de) || de.Status != tc.wantStatus || de.Attempts != tc.wantCalls) {
				t.Fatalf("error %#v, want status %d after %d attempts", err, tc.wantStatus, tc.wantCalls)
			}
			if len(rc.got) != tc.wantCalls || len(waits) != tc.wantCalls-1 {
				t.Fatalf("%d deliveries and %d waits, want %d and %d", len(rc.got), len(waits), tc.wantCalls, tc.wantCalls-1)
			}
			ids := map[string]bool{}
			for _, d := range rc.got {
				ids[d.header.Get(HeaderDeliveryID)] = true
				if err := Verify(ownerSecret, testOwner, srv.URL, d.header.Get(HeaderTimestamp), d.header.Get(HeaderSignature), d.body, time.Now(), time.Minute); err != nil {
					t.Errorf("attempt not verifiable: %v", err)
				}
			}
			if len(ids) != 1 {
				t.Fatalf("retries carried %d delivery ids, want the same one", len(ids))
			}
		})
	}
}

func TestTransportErrorRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens: connection refused
	w := &Webhook{Keys: StaticKeys{secret}, AllowLoopback: true, MaxAttempts: 3, Backoff: noWait}
	var de *DeliveryError
	if err := w.Send(context.Background(), testOwner, url, body); !errors.As(err, &de) || de.Attempts != 3 || de.Status != 0 {
		t.Fatalf("error %v, want a transport failure after 3 attempts", err)
	}
}

func TestBackoffIsCappedWithJitter(t *testing.T) {
	w := &Webhook{}
	for n := 1; n <= 12; n++ {
		full := min(time.Second<<(n-1), 30*time.Second)
		for range 20 {
			if d := w.backoff(n); d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n, d, full/2, full)
			}
		}
	}
}

type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range f[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host")
	}
	return out, nil
}

func TestAddressPolicy(t *testing.T) {
	res := fakeResolver{
		"hooks.example.com":    {"93.184.215.14"},
		"rebind.example.com":   {"93.184.215.14", "10.0.0.5"},
		"metadata.example.com": {"169.254.169.254"},
		"v6meta.example.com":   {"fd00:ec2::254"},
		"cgnat.example.com":    {"100.64.1.1"},
		"mapped.example.com":   {"::ffff:127.0.0.1"},
		"nat64.example.com":    {"64:ff9b::a00:1"},
		"v6.example.com":       {"2606:4700::1111"},
	}
	tests := []struct {
		url          string
		allowPrivate bool
		want         string // "" accepted
	}{
		{"https://hooks.example.com/x", false, ""},
		{"https://v6.example.com/x", false, ""},
		{"https://1.1.1.1/x", false, ""},
		{"http://hooks.example.com/x", false, "only https"},
		{"ftp://hooks.example.com/x", true, "only https"},
		{"https://rebind.example.com/x", false, "private"},
		{"https://metadata.example.com/x", false, "metadata"},
		{"https://v6meta.example.com/x", false, "unique-local"},
		{"https://cgnat.example.com/x", false, "carrier-grade NAT"},
		{"https://mapped.example.com/x", false, "loopback"},
		{"https://nat64.example.com/x", false, "private"},
		{"https://127.0.0.1:8443/x", false, "loopback"},
		{"https://[::1]/x", false, "loopback"},
		{"https://[fe80::1%25eth0]/x", false, "link-local"},
		{"https://192.168.1.10/x", false, "private"},
		{"https://172.20.0.1/x", false, "private"},
		{"https://0.0.0.0/x", false, "this network"},
		{"https://nowhere.example.com/x", false, "does not resolve"},
		{"/relative", false, "absolute URL"},
		{"https://" + strings.Repeat("a", 2030) + ".example.com/", false, "at most 2048"},
		{"http://127.0.0.1:8080/x", true, ""},
		{"http://[::1]:8080/x", true, ""},
		{"http://rebind.example.com/x", true, "private"},
	}
	for _, tc := range tests {
		t.Run(tc.url[:min(len(tc.url), 40)], func(t *testing.T) {
			err := (&Webhook{AllowLoopback: tc.allowPrivate, Resolver: res}).Validate(context.Background(), tc.url)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *job.FieldError
			if err == nil || !errors.As(err, &fe) || fe.Field != Field || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a %s field error containing %q", err, Field, tc.want)
			}
		})
	}
}

func TestValidateURL(t *testing.T) {
	if err := ValidateURL("https://"+strings.Repeat("a", 2041), false); err == nil || !strings.Contains(err.Error(), "2049 characters; at most 2048") {
		t.Fatalf("2,049 characters: %v", err)
	}
	if err := ValidateURL("https://localhost/x", false); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("localhost: %v, want forbidden", err)
	}
	if err := ValidateURL("http://localhost:9/x", true); err != nil {
		t.Fatalf("localhost in make dev: %v", err)
	}
}

func TestSendRefusesPrivateAndDoesNotRetry(t *testing.T) {
	rc, srv := newReceiver(t)
	calls := 0
	w := &Webhook{Keys: StaticKeys{secret}, MaxAttempts: 5, Backoff: func(int) time.Duration { calls++; return 0 }}
	// The receiver is on loopback; the policy refuses it before any connection.
	err := w.Send(context.Background(), testOwner, strings.Replace(srv.URL, "http://", "https://", 1), body)
	if !errors.Is(err, ErrForbiddenAddress) || len(rc.got) != 0 || calls != 0 {
		t.Fatalf("error %v, %d deliveries, %d retries; want a refusal with none", err, len(rc.got), calls)
	}
}

// A name that passed validation and then resolves to a private address is
// refused at send time, and the dial goes to the checked address, not to a
// second lookup.
func TestSendPinsTheCheckedAddress(t *testing.T) {
	rc, srv := newReceiver(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	// With AllowLoopback the name is resolved by our resolver and dialed as
	// 127.0.0.1: proof the transport never asks the system resolver (which
	// knows no such name).
	w := &Webhook{Keys: StaticKeys{secret}, AllowLoopback: true, Backoff: noWait,
		Resolver: fakeResolver{"receiver.invalid": {"127.0.0.1"}}}
	if err := w.Send(context.Background(), testOwner, "http://receiver.invalid"+port+"/hook", body); err != nil {
		t.Fatalf("pinned delivery: %v", err)
	}
	if len(rc.got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(rc.got))
	}
	// Rebinding: the first lookup (validation) says public, later ones private.
	flip := &flipResolver{first: "93.184.215.14", then: "127.0.0.1"}
	w = &Webhook{Keys: StaticKeys{secret}, Resolver: flip, Backoff: noWait}
	if err := w.Validate(context.Background(), "https://rebinding.invalid"+port+"/"); err != nil {
		t.Fatal(err)
	}
	if err := w.Send(context.Background(), testOwner, "https://rebinding.invalid"+port+"/", body); !errors.Is(err, ErrForbiddenAddress) || len(rc.got) != 1 {
		t.Fatalf("after rebinding: %v, %d deliveries; want refused", err, len(rc.got))
	}
}

type flipResolver struct {
	first, then string
	n           int
}

func (f *flipResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	f.n++
	if f.n == 1 {
		return []netip.Addr{netip.MustParseAddr(f.first)}, nil
	}
	return []netip.Addr{netip.MustParseAddr(f.then)}, nil
}

func TestHTTPSReceiver(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewTLSServer(rc)
	defer srv.Close()
	w := &Webhook{Keys: StaticKeys{secret}, AllowLoopback: true, Client: srv.Client(), Backoff: noWait}
	if err := w.Send(context.Background(), testOwner, srv.URL, body); err != nil || len(rc.got) != 1 {
		t.Fatalf("https delivery: %v, %d deliveries", err, len(rc.got))
	}
}

func TestNoSecretNoDelivery(t *testing.T) {
	rc, srv := newReceiver(t)
	if err := (&Webhook{AllowLoopback: true}).Send(context.Background(), testOwner, srv.URL, body); err == nil || len(rc.got) != 0 {
		t.Fatalf("unsigned send: %v, %d deliveries; want a refusal", err, len(rc.got))
	}
}

func TestContextCancelStopsRetries(t *testing.T) {
	rc, srv := newReceiver(t, 503, 503, 503, 503)
	ctx, cancel := context.WithCancel(context.Background())
	w := &Webhook{Keys: StaticKeys{secret}, AllowLoopback: true, Backoff: func(int) time.Duration { cancel(); return time.Hour }}
	if err := w.Send(ctx, testOwner, srv.URL, body); !errors.Is(err, context.Canceled) || len(rc.got) != 1 {
		t.Fatalf("error %v after %d deliveries, want cancelled after 1", err, len(rc.got))
	}
}

// TestAddressPolicyEdges: make dev allows loopback and nothing else private,
// and the rare forms that embed or tunnel a private or special address are
// refused, both at registration (Validate) and at dial time (Send after a
// DNS answer changed).
func TestAddressPolicyEdges(t *testing.T) {
	tests := []struct {
		addr  string
		local bool // make dev's policy (loopback allowed)
		want  string
	}{
		{"127.0.0.1", true, ""},
		{"::1", true, ""},
		{"::ffff:127.0.0.1", true, ""},
		{"10.0.0.1", true, "private"},
		{"169.254.169.254", true, "link-local"},
		{"192.168.1.1", true, "private"},
		{"fd00:ec2::254", true, "unique-local"},
		{"93.184.215.14", true, ""},
		{"::7f00:1", false, "IPv4-compatible"},
		{"::a00:1", true, "IPv4-compatible"},
		{"::ffff:0:7f00:1", false, "SIIT"},
		{"::ffff:0:a9fe:a9fe", true, "SIIT"},
		{"64:ff9b:1::a00:1", false, "local-use NAT64"},
		{"64:ff9b::a00:1", false, "private"},
		{"64:ff9b::5db8:d70e", false, ""},
		{"2002:7f00:1::", false, "6to4"},
		{"2002:5db8:d70e::1", false, "6to4"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, "Teredo"},
		{"fec0::1", false, "site-local"},
		{"100::1", false, "discard-only"},
		{"192.88.99.1", false, "6to4 relay"},
		{"2606:4700::1111", false, ""},
		{"2001:4860:4860::8888", false, ""},
		{"1.1.1.1", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			host := "h.invalid"
			res := fakeResolver{host: {tc.addr}}
			scheme := "https"
			if tc.local {
				scheme = "http"
			}
			check := func(err error, when string) {
				t.Helper()
				if tc.want == "" {
					if err != nil {
						t.Fatalf("%s: refused %s: %v", when, tc.addr, err)
					}
					return
				}
				if !errors.Is(err, ErrForbiddenAddress) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%s: %s: error %v, want forbidden naming %q", when, tc.addr, err, tc.want)
				}
			}
			w := &Webhook{AllowLoopback: tc.local, Resolver: res}
			check(w.Validate(context.Background(), scheme+"://"+host+"/hook"), "registration")
			if tc.want == "" {
				return
			}
			// Dial time: the name was public when registered, then rebinds.
			flip := &flipResolver{first: "93.184.215.14", then: tc.addr}
			w = &Webhook{Keys: StaticKeys{secret}, AllowLoopback: tc.local, Resolver: flip, Backoff: noWait}
			if err := w.Validate(context.Background(), scheme+"://"+host+"/hook"); err != nil {
				t.Fatal(err)
			}
			check(w.Send(context.Background(), testOwner, scheme+"://"+host+"/hook", body), "dial time")
		})
	}
}

// TestTransportErrorNamesOnlyTheOrigin: a failed connection's error, which
// reaches logs and the job's warnings, names the receiver's scheme and host,
// never the path or query a webhook URL often keeps its secret in (before:
// the whole URL, twice).
func TestTransportErrorNamesOnlyTheOrigin(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/hooks/T000/B000/XXXXSECRET?token=abc123"
	srv.Close() // nothing listens: connection refused
	w := &Webhook{Keys: StaticKeys{secret}, AllowLoopback: true, MaxAttempts: 1, Backoff: noWait}
	err := w.Send(context.Background(), testOwner, url, body)
	if err == nil || strings.Contains(err.Error(), "XXXXSECRET") || strings.Contains(err.Error(), "abc123") || !strings.Contains(err.Error(), strings.TrimPrefix(srv.URL, "http://")) {
		t.Fatalf("error %v: want the origin named and neither the path nor the query", err)
	}
}

// pinnedResolver answers every name with one address.
type pinnedResolver netip.Addr

func (p pinnedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(p)}, nil
}

// TestCallerTLSDialerCannotBypassThePin: a caller's transport with its own
// TLS dialer still connects only to the checked address (before: that dialer
// resolved the name itself and reached whatever it pointed at).
func TestCallerTLSDialerCannotBypassThePin(t *testing.T) {
	var used atomic.Bool
	tr := &http.Transport{DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		used.Store(true)
		return nil, errors.New("the caller's TLS dialer was used")
	}}
	// The name resolves, for the sender, to a public address (unreachable here).
	w := &Webhook{Keys: StaticKeys{secret}, MaxAttempts: 1, Backoff: noWait, Resolver: pinnedResolver(netip.MustParseAddr("93.184.215.14")),
		Client: &http.Client{Transport: tr, Timeout: 200 * time.Millisecond}}
	_ = w.Send(context.Background(), testOwner, "https://hooks.example.com/x", body)
	if used.Load() {
		t.Fatal("the caller's TLS dialer made the connection instead of the pinned dial")
	}
}
