package notify

import (
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
