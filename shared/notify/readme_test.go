package notify

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPythonReceiverExample runs the Python receiver of README.md: 204 for a
// genuine delivery (rotated signatures included), 401 for another owner's
// secret, another URL or a stale timestamp, 400 for malformed headers.
func TestPythonReceiverExample(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```python\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no python block")
	}
	sec := string(OwnerSecret(secret, testOwner))
	other := string(OwnerSecret(secret, "someone-else"))
	const url = "https://hooks.example.com/mcpbatch"
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	old := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	good := Sign([]byte(sec), ts, testOwner, url, body)
	cases := []struct {
		name, secret, url, ts, sig string
		want                       int
	}{
		{"genuine", sec, url, ts, good, 204},
		{"genuine among rotated", sec, url, ts, "v1=" + strings.Repeat("0", 64) + ", " + good, 204},
		{"another owner's secret", other, url, ts, good, 401},
		{"another receiver", sec, "https://other.example.com/x", ts, good, 401},
		{"stale", sec, url, old, Sign([]byte(sec), old, testOwner, url, body), 401},
		{"timestamp not a number", sec, url, "yesterday", good, 400},
		{"no signature", sec, url, ts, "", 400},
		{"signature not hex", sec, url, ts, "v1=" + strings.Repeat("z", 64), 400},
		{"signature without v1=", sec, url, ts, strings.TrimPrefix(good, "v1="), 400},
	}
	script := string(m[1]) + "\nimport sys, json\nfor c in json.load(sys.stdin):\n" +
		"    print(verify(c['secret'], c['owner'], c['url'], c['ts'], c['sig'], c['body'].encode()))\n"
	var in strings.Builder
	in.WriteString("[")
	for i, c := range cases {
		if i > 0 {
			in.WriteString(",")
		}
		in.WriteString(`{"secret":` + strconv.Quote(c.secret) + `,"owner":` + strconv.Quote(testOwner) + `,"url":` + strconv.Quote(c.url) +
			`,"ts":` + strconv.Quote(c.ts) + `,"sig":` + strconv.Quote(c.sig) + `,"body":` + strconv.Quote(string(body)) + `}`)
	}
	in.WriteString("]")
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	if len(got) != len(cases) {
		t.Fatalf("python printed %q for %d cases", out, len(cases))
	}
	for i, c := range cases {
		if got[i] != strconv.Itoa(c.want) {
			t.Errorf("%s: python answered %s, want %d", c.name, got[i], c.want)
		}
	}
}

// TestReadmeFigures: the limits, headers and tolerance README.md states are
// the ones the sender and the Go Receiver use.
func TestReadmeFigures(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	num := func(re string) int {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("README.md: nothing matches %s", re)
		}
		n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		return n
	}
	if n := num("must be `https://`, at most ([0-9,]+) characters"); n != MaxURLLen {
		t.Errorf("README says webhooks of at most %d characters, MaxURLLen is %d", n, MaxURLLen)
	}
	if n := num(`5xx, 429 and network errors \(([0-9]+) attempts\)`); n != DefaultMaxAttempts {
		t.Errorf("README says %d attempts, DefaultMaxAttempts is %d", n, DefaultMaxAttempts)
	}
	for _, h := range []string{HeaderDeliveryID, HeaderOwner, HeaderTimestamp, HeaderSignature} {
		if !strings.Contains(text, h+":") {
			t.Errorf("README.md's header list lacks %s", h)
		}
	}
	hexLen := num("X-Mcpbatch-Delivery-Id: whd_<([0-9]+) hex>")
	if id := DeliveryID(body); !regexp.MustCompile(fmt.Sprintf(`^whd_[0-9a-f]{%d}$`, hexLen)).MatchString(id) {
		t.Errorf("delivery id %s is not whd_<%d hex>", id, hexLen)
	}
	// "refuse timestamps more than N minutes away": the Go Receiver does.
	skew := time.Duration(num(`refuse timestamps more than ([0-9]+) minutes away`)) * time.Minute
	sec := OwnerSecret(secret, testOwner)
	const url = "https://hooks.example.com/x"
	now := time.Now()
	for _, c := range []struct {
		age  time.Duration
		want int
	}{{skew - time.Minute, 204}, {skew + time.Minute, 401}, {-(skew + time.Minute), 401}} {
		ts := strconv.FormatInt(now.Add(-c.age).Unix(), 10)
		r := httptest.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		r.Header.Set(HeaderTimestamp, ts)
		r.Header.Set(HeaderSignature, Sign(sec, ts, testOwner, url, body))
		w := httptest.NewRecorder()
		(&Receiver{Secret: sec, Owner: testOwner, URL: url, Handle: func([]byte) error { return nil }, Now: func() time.Time { return now }}).ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("a delivery signed %v ago: %d, want %d", c.age, w.Code, c.want)
		}
	}
}
