package transfer

import (
	"fmt"
	"slices"
	"testing"
)

// A part's generated ids continue the single pass's sequence from where the
// parts before it left off, skipping the explicit ids of the same form.
func TestIDGenContinuesTheSequence(t *testing.T) {
	taken := []int{1, 2, 5, 6, 100000}
	// What one pass over the whole job generates.
	all := newIDGen(taken, 0)
	var want []string
	for range 12 {
		want = append(want, all.next())
	}
	if want[0] != "r00003" || want[2] != "r00007" {
		t.Fatalf("sequence starts %v", want[:3])
	}
	for m := range 10 {
		g := newIDGen(taken, m)
		var got []string
		for range 12 - m {
			got = append(got, g.next())
		}
		if !slices.Equal(got, want[m:]) {
			t.Errorf("after %d: %v, want %v", m, got, want[m:])
		}
	}
}

func TestGeneratedNumber(t *testing.T) {
	for _, tc := range []struct {
		id string
		n  int
		ok bool
	}{
		{"r00001", 1, true}, {"r99999", 99999, true}, {"r100000", 100000, true}, {fmt.Sprintf("r%05d", 1234567), 1234567, true},
		{"r0001", 0, false}, {"r000001", 0, false}, {"r00000", 0, false}, {"x00001", 0, false}, {"r0000a", 0, false}, {"r-0001", 0, false},
	} {
		if n, ok := generatedNumber(tc.id); n != tc.n || ok != tc.ok {
			t.Errorf("%q: %d %v, want %d %v", tc.id, n, ok, tc.n, tc.ok)
		}
	}
}
