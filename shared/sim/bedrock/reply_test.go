package bedrock

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// TestPadReply: a padded answer is about the asked length, the same for a
// record every time, and differs between records.
func TestPadReply(t *testing.T) {
	cases := []struct {
		name string
		n    int
	}{{"off", 0}, {"shorter than the echo", 3}, {"200 tokens", 200}, {"1000 tokens", 1000}}
	const echo = "[simulated] nova-micro reply to record r1: \"hello\""
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := padReply(echo, "r1", tc.n)
			if tc.n <= int(sim.Tokens(echo)) {
				if got != echo {
					t.Fatalf("padded to %d tokens: %q", tc.n, got)
				}
				return
			}
			if n := sim.Tokens(got); n < int64(tc.n) || n > int64(tc.n)+10 {
				t.Fatalf("%d tokens, want about %d", n, tc.n)
			}
			if again := padReply(echo, "r1", tc.n); again != got {
				t.Fatal("not deterministic")
			}
			if other := padReply(echo, "r2", tc.n); other == got {
				t.Fatal("two records got the same answer")
			}
		})
	}
}
