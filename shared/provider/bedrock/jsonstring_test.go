package bedrock

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/provider/claude"
)

// appendJSONString writes what encoding/json writes without HTML escaping.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r\x00\x1f", "<tag> & </tag>", "é漢字🙂", "bad \xff\xfe utf8", "line\u2028para\u2029", "\x7f"} {
		if got, want := string(appendJSONString(nil, s)), string(claude.String(s)); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("a\"b\\c\n\x01é\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendJSONString(nil, s)), string(claude.String(s)); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}
