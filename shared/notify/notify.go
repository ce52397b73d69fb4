// Package notify delivers completion webhooks: one signed POST per terminal
// state of a job, retried with capped exponential backoff, and never to a
// private, link-local, metadata or otherwise special address (loopback only
// in make dev).
//
// # What a receiver gets
//
//	POST <your https URL>
//	Content-Type: application/json
//	X-Mcpbatch-Delivery-Id: whd_<32 hex>   the same on every retry of one delivery: deduplicate on it
//	X-Mcpbatch-Owner: <owner>               the job's owner (the caller identity that submitted it)
//	X-Mcpbatch-Timestamp: 1796068800        Unix seconds when this attempt was signed
//	X-Mcpbatch-Signature: v1=<64 hex>       HMAC-SHA256(owner secret, "<timestamp>\n<owner>\n<url>\n<raw body>")
//
// # Secrets
//
// Each owner verifies with its own secret, which the get_webhook_secret tool
// returns to that owner only: hex(HMAC-SHA256(master, "mcpbatch webhook
// owner\n" + owner)) (OwnerSecret), where master is the deployment's signing
// secret (Secrets Manager in AWS, .mcpbatch/webhook-secret in make dev) that
// no owner holds. The signed string names the owner and the webhook URL
// exactly as given at submit, so a delivery is good for one owner's one
// receiver: a tenant can neither forge a delivery to another tenant's
// receiver (it lacks that secret) nor replay one it received elsewhere.
//
// # Rotation
//
// The master secret value may hold several secrets separated by whitespace,
// the current one first. While it does, every delivery carries one v1= value
// per secret ("v1=<new>,v1=<old>") and get_webhook_secret returns the
// previous owner secrets too, so receivers move to the new secret at their
// pace; drop the old one from the value to end the rotation.
//
// # Verifying a delivery
//
// Read the raw body (before any JSON decoding), then:
//
//	err := notify.Verify(secret, owner, webhookURL, r.Header.Get("X-Mcpbatch-Timestamp"),
//		r.Header.Get("X-Mcpbatch-Signature"), body, time.Now(), 5*time.Minute)
//
// Verify recomputes the HMAC, compares it in constant time, and refuses a
// timestamp further than tolerance from now (a replayed old delivery). A
// malformed header is ErrMalformed (answer 400), a wrong or stale signature
// ErrMismatch or ErrStale (answer 401); Receiver is a complete handler that
// does this. Any one matching v1= value is enough.
//
// Answer 2xx quickly. 5xx, 429 and network errors are retried (MaxAttempts
// attempts in all); any other status, redirects included, is final.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// Header names of a delivery.
const (
	HeaderTimestamp  = "X-Mcpbatch-Timestamp"
	HeaderSignature  = "X-Mcpbatch-Signature"
	HeaderDeliveryID = "X-Mcpbatch-Delivery-Id"
	HeaderOwner      = "X-Mcpbatch-Owner"
)

// MinKeyLen is the shortest master secret accepted (16 bytes of entropy in hex).
const MinKeyLen = 32

// Verification errors: ErrMalformed is the caller's request (answer 400);
// ErrMismatch and ErrStale are a delivery not to trust (answer 401).
var (
	ErrMalformed = errors.New("malformed webhook header")
	ErrMismatch  = errors.New("webhook signature does not match")
	ErrStale     = errors.New("webhook timestamp outside the tolerance")
)

// Keys gives the master signing secrets, the current one first (several
// while rotating). It is read on every Send, so a rotation reaches a warm
// function without a restart when the source re-reads.
type Keys interface {
	Masters(ctx context.Context) ([][]byte, error)
}

// StaticKeys is a fixed set of master secrets.
type StaticKeys [][]byte

// Masters returns k.
func (k StaticKeys) Masters(context.Context) ([][]byte, error) { return k, nil }

// ParseKeys splits a stored secret value into master secrets (whitespace
// separated, current first), refusing any shorter than MinKeyLen.
func ParseKeys(value string) ([][]byte, error) {
	var keys [][]byte
	for _, f := range strings.Fields(value) {
		if len(f) < MinKeyLen {
			return nil, fmt.Errorf("webhook signing secret %d of the stored value is %d characters; at least %d", len(keys)+1, len(f), MinKeyLen)
		}
		keys = append(keys, []byte(f))
	}
	if len(keys) == 0 {
		return nil, errors.New("webhook signing secret is empty")
	}
	return keys, nil
}

// OwnerSecret is owner's verifying secret under master (see the package comment).
func OwnerSecret(master []byte, owner string) []byte {
	mac := hmac.New(sha256.New, master)
	mac.Write([]byte("mcpbatch webhook owner\n"))
	mac.Write([]byte(owner))
	return []byte(hex.EncodeToString(mac.Sum(nil)))
}

// OwnerSecrets are owner's secrets under every master of k, current first.
func OwnerSecrets(ctx context.Context, k Keys, owner string) ([]string, error) {
	if k == nil {
		return nil, errors.New("notify: no signing secret configured")
	}
	masters, err := k.Masters(ctx)
	if err != nil {
		return nil, err
	}
	if len(masters) == 0 {
		return nil, errors.New("notify: no signing secret configured")
	}
	out := make([]string, len(masters))
	for i, m := range masters {
		out[i] = string(OwnerSecret(m, owner))
	}
	return out, nil
}

// Field is the input field webhook errors name.
const Field = "notify.webhook"

// Limits and defaults.
const (
	MaxURLLen          = 2048
	DefaultMaxAttempts = 5
	DefaultTimeout     = 10 * time.Second
	backoffBase        = time.Second
	backoffCap         = 30 * time.Second
)

// ErrForbiddenAddress is returned (wrapped) when the webhook's host is or
// resolves to an address webhooks may not reach.
var ErrForbiddenAddress = errors.New("address not allowed for webhooks")

// Resolver looks up a host's addresses (net.DefaultResolver satisfies it).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Webhook sends signed deliveries. The zero value needs only Keys.
type Webhook struct {
	// Client's Transport (an *http.Transport, or nil for the default) is cloned
	// per send with its dialer pinned to the checked address; its Timeout
	// bounds each attempt (DefaultTimeout when Client is nil).
	Client *http.Client
	// Keys are the master secrets owner secrets derive from.
	Keys Keys
	// AllowLoopback lets http:// URLs and loopback hosts through (make dev,
	// where receivers run on the same machine); every other private or
	// special address stays refused there too.
	AllowLoopback bool
	// MaxAttempts bounds the attempts of one Send (DefaultMaxAttempts when 0).
	MaxAttempts int
	// Backoff is the wait before attempt n+1 after attempt n failed (n from 1);
	// default: 1 s doubling to 30 s, with jitter.
	Backoff  func(n int) time.Duration
	Now      func() time.Time
	Resolver Resolver
}

// Sign returns one v1= value of the X-Mcpbatch-Signature header: the HMAC
// of the timestamp, owner, webhook URL and body under the owner's secret.
// Neither owner nor URL can hold a newline (url.Parse refuses control
// characters; owners are principal ARNs or key names), so the fields cannot
// run into each other.
func Sign(secret []byte, timestamp, owner, url string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	for _, f := range []string{timestamp, owner, url} {
		mac.Write([]byte(f))
		mac.Write([]byte{'\n'})
	}
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a delivery to owner's receiver at url (the webhook URL as
// given at submit): see the package comment. Errors wrap ErrMalformed,
// ErrStale or ErrMismatch.
func Verify(secret []byte, owner, url, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	timestamp = strings.TrimSpace(timestamp)
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || sec <= 0 {
		return fmt.Errorf("%w: %s %q is not Unix seconds", ErrMalformed, HeaderTimestamp, timestamp)
	}
	var sigs [][]byte
	for _, v := range strings.Split(signature, ",") {
		h, ok := strings.CutPrefix(strings.TrimSpace(v), "v1=")
		if !ok || len(h) != 64 {
			return fmt.Errorf("%w: %s must be comma-separated v1=<64 hex> values", ErrMalformed, HeaderSignature)
		}
		raw, err := hex.DecodeString(h)
		if err != nil {
			return fmt.Errorf("%w: %s value %q is not hex", ErrMalformed, HeaderSignature, h)
		}
		sigs = append(sigs, raw)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s is %s away from now, over the %s tolerance: a replayed or delayed delivery", ErrStale, HeaderTimestamp, d.Round(time.Second), tolerance)
	}
	want, _ := hex.DecodeString(strings.TrimPrefix(Sign(secret, timestamp, owner, url, body), "v1="))
	for _, got := range sigs {
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: wrong secret, another owner or receiver, or the body was changed", ErrMismatch)
}

// Receiver is an example webhook endpoint: it verifies each delivery for
// one owner and URL and passes the body to Handle. It answers 400 to a
// malformed header, 401 to a wrong or stale signature, 204 when Handle
// succeeds and 500 only when Handle fails (so the delivery is retried).
type Receiver struct {
	Secret     []byte
	Owner, URL string
	Handle     func(body []byte) error
	Now        func() time.Time // time.Now when nil
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now
	if rc.Now != nil {
		now = rc.Now
	}
	err = Verify(rc.Secret, rc.Owner, rc.URL, r.Header.Get(HeaderTimestamp), r.Header.Get(HeaderSignature), body, now(), 5*time.Minute)
	switch {
	case errors.Is(err, ErrMalformed):
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	if err := rc.Handle(body); err != nil {
		http.Error(w, "handle: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ValidateURL checks a webhook URL when it is given: https (http too when
// allowLoopback), at most MaxURLLen characters, and a host that is not and
// does not resolve to a forbidden address. Errors are *job.FieldError on
// notify.webhook.
func ValidateURL(raw string, allowLoopback bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err := (&Webhook{AllowLoopback: allowLoopback}).check(ctx, raw)
	return err
}

// Validate is ValidateURL with w's resolver and policy.
func (w *Webhook) Validate(ctx context.Context, raw string) error {
	_, _, err := w.check(ctx, raw)
	return err
}

// check validates raw and returns the parsed URL and the addresses to dial.
func (w *Webhook) check(ctx context.Context, raw string) (*url.URL, []netip.Addr, error) {
	if len(raw) > MaxURLLen {
		return nil, nil, job.Fieldf(Field, "%d characters; at most %d", len(raw), MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, nil, job.Fieldf(Field, "%q is not an absolute URL like https://example.com/hooks/mcpbatch", raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && w.AllowLoopback:
	default:
		return nil, nil, job.Fieldf(Field, "scheme %q: only https:// webhooks are allowed", u.Scheme)
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := w.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil || len(addrs) == 0 {
			return nil, nil, job.Fieldf(Field, "host %q does not resolve: %v", host, err)
		}
	}
	for _, a := range addrs {
		why, loopback := forbidden(a)
		if why == "" || (loopback && w.AllowLoopback) {
			continue
		}
		where := "public addresses"
		if w.AllowLoopback {
			where = "public addresses and, here, loopback"
		}
		return nil, nil, fmt.Errorf("%w: %w", job.Fieldf(Field, "host %q resolves to %s, a %s address; webhooks go only to %s", host, a, why, where), ErrForbiddenAddress)
	}
	return u, addrs, nil
}

// blocked are the address blocks webhooks never reach, from the IANA IPv4
// and IPv6 Special-Purpose Address Registries (as of 2026-12-01) plus the
// deprecated forms that still route somewhere (RFC 4291 IPv4-compatible,
// RFC 3879 site-local). Where a block is only partly globally reachable
// (2001::/23, 2002::/16) the whole block is refused: the stricter reading.
var blocked = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\""},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (instance metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "SIIT IPv4-translated"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignment (Teredo, benchmarking, ORCHID)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("5f00::/16"), "segment routing"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local (includes the instance metadata fd00:ec2::254)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// forbidden names the class of a non-public address ("" when public) and
// whether it is loopback. IPv4 addresses embedded in IPv6 (mapped, the
// well-known NAT64 prefix) are judged as IPv4. The list is in order of
// specificity where blocks nest (::1 before ::/96; Teredo's 2001::/32 inside
// 2001::/23 named in the reason).
func forbidden(a netip.Addr) (why string, loopback bool) {
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if a.IsLoopback() {
		return "loopback", true
	}
	for _, b := range blocked {
		if b.prefix.Contains(a) {
			return b.why, false
		}
	}
	return "", false
}

// DeliveryError is a delivery that did not get a 2xx.
type DeliveryError struct {
	Attempts int
	Status   int // last HTTP status; 0 after a transport error
	Err      error
}

func (e *DeliveryError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("webhook delivery failed after %d attempt(s): last status %d", e.Attempts, e.Status)
	}
	return fmt.Sprintf("webhook delivery failed after %d attempt(s): %v", e.Attempts, e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// DeliveryID is the id of a delivery of body: a hash, so a retried Send of the
// same terminal state (a redelivered event) carries the same id.
func DeliveryID(body []byte) string {
	h := sha256.Sum256(body)
	return "whd_" + hex.EncodeToString(h[:16])
}

// OwnerSecrets are owner's secrets under w's keys, current first.
func (w *Webhook) OwnerSecrets(ctx context.Context, owner string) ([]string, error) {
	return OwnerSecrets(ctx, w.Keys, owner)
}

// Send POSTs body to owner's receiver raw, signed with owner's secrets, retrying 5xx, 429 and network errors. The
// host is resolved and checked on every attempt and the checked address is
// the one dialed, so a DNS answer that changes after validation (rebinding)
// cannot reach a private address.
func (w *Webhook) Send(ctx context.Context, owner, raw string, body []byte) error {
	secrets, err := OwnerSecrets(ctx, w.Keys, owner)
	if err != nil || len(secrets) == 0 {
		return fmt.Errorf("notify: no signing secret; refusing to send an unsigned webhook: %w", err)
	}
	attempts := w.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	id := DeliveryID(body)
	var last *DeliveryError
	for n := 1; n <= attempts; n++ {
		if n > 1 {
			t := time.NewTimer(w.backoff(n - 1))
			select {
			case <-ctx.Done():
				t.Stop()
				last.Err = errors.Join(last.Err, ctx.Err())
				return last
			case <-t.C:
			}
		}
		status, retry, err := w.attempt(ctx, owner, raw, id, secrets, body)
		if err == nil {
			return nil
		}
		last = &DeliveryError{Attempts: n, Status: status, Err: err}
		if !retry {
			return last
		}
	}
	return last
}

func (w *Webhook) backoff(n int) time.Duration {
	if w.Backoff != nil {
		return w.Backoff(n)
	}
	d := backoffCap
	if n < 6 {
		d = min(backoffBase<<(n-1), backoffCap)
	}
	// Equal jitter: half fixed, half random, so many receivers' retries spread.
	return d/2 + rand.N(d/2+1)
}

// attempt makes one POST; retry reports whether a failure may pass on retry.
func (w *Webhook) attempt(ctx context.Context, owner, raw, id string, secrets []string, body []byte) (status int, retry bool, err error) {
	u, addrs, err := w.check(ctx, raw)
	if err != nil {
		var fe *job.FieldError
		// A host that does not resolve now may resolve later; a forbidden one will not pass.
		return 0, !errors.Is(err, ErrForbiddenAddress) && errors.As(err, &fe) && strings.Contains(fe.Reason, "does not resolve"), err
	}
	client := w.pinned(u, addrs)
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, false, fmt.Errorf("build webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mcpbatch-webhook/1")
	req.Header.Set(HeaderDeliveryID, id)
	req.Header.Set(HeaderTimestamp, ts)
	sigs := make([]string, len(secrets))
	for i, sec := range secrets {
		sigs[i] = Sign([]byte(sec), ts, owner, raw, body)
	}
	req.Header.Set(HeaderOwner, owner)
	req.Header.Set(HeaderSignature, strings.Join(sigs, ","))
	resp, err := client.Do(req)
	if err != nil {
		// Only the receiver's origin is named: a webhook URL's path or query
		// is often its secret, and this error reaches logs and job warnings.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, ctx.Err() == nil, fmt.Errorf("POST to %s://%s: %w", u.Scheme, u.Host, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp.StatusCode, false, nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return resp.StatusCode, true, fmt.Errorf("receiver answered %s", resp.Status)
	default:
		return resp.StatusCode, false, fmt.Errorf("receiver answered %s; not retried", resp.Status)
	}
}

// pinned is w's client with its dialer fixed to the checked addresses, no
// proxy (a proxy would resolve the name again) and no redirects (a redirect
// could point anywhere).
func (w *Webhook) pinned(u *url.URL, addrs []netip.Addr) *http.Client {
	base := http.DefaultTransport.(*http.Transport)
	timeout := DefaultTimeout
	if w.Client != nil {
		if t, ok := w.Client.Transport.(*http.Transport); ok {
			base = t
		}
		timeout = w.Client.Timeout
	}
	tr := base.Clone()
	tr.Proxy = nil
	// A TLS dialer of the caller's transport would resolve the name itself:
	// every connection goes through the pinned DialContext below.
	tr.DialTLSContext, tr.DialTLS = nil, nil
	tr.DisableKeepAlives = true // one transport per attempt: keep nothing open
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var errs []error
		for _, a := range addrs {
			c, err := dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
