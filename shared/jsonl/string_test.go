package jsonl

import (
	"bytes"
	"encoding/json"
	"testing"
)

// reference is what encoding/json writes for s without HTML escaping.
func reference(t *testing.T, s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r\x00\x1f\b\f", "<tag> & </tag>", "é漢字🙂", "bad \xff\xfe utf8", "line\u2028para\u2029", "\x7f"} {
		if got, want := string(AppendString(nil, s)), reference(t, s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\"b\\c\n\x01é\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), reference(t, s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}
