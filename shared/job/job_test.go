package job

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestCanMove(t *testing.T) {
	tests := []struct {
		from, to Status
		want     bool
	}{
		{StatusQueued, StatusSubmitted, true},
		{StatusSubmitted, StatusInProgress, true},
		{StatusInProgress, StatusValidating, false},
		{StatusIngesting, StatusInProgress, false},
		{StatusCompleted, StatusInProgress, false},
		{StatusCompleted, StatusFailed, false},
		{StatusIngesting, StatusPartiallyCompleted, true},
		{StatusInProgress, StatusInProgress, false},
		{StatusCancelling, StatusIngesting, true},
		{Status("bogus"), StatusCompleted, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.from)+"->"+string(tc.to), func(t *testing.T) {
			if got := CanMove(tc.from, tc.to); got != tc.want {
				t.Fatalf("CanMove = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNewIDSortableAndValid(t *testing.T) {
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 100 {
		id := NewID(base.Add(time.Duration(i) * time.Millisecond))
		if !ValidID(id) || len(id) != IDLen {
			t.Fatalf("invalid id %q", id)
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("ids are not time-sortable")
	}
	for _, bad := range []string{"", "short", "01JDZ3K6R8X9Y2W4V5T7Q0M1N3", "01jdz3k6r8x9y2w4v5t7q0m1n!", "01jdz3k6r8x9y2w4v5t7q0m1nu"} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestShards(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{1, 1}, {2500, 1}, {2501, 2}, {50_000, 20}, {1_000_000, 32}} {
		if got := ShardsFor(tc.n); got != tc.want {
			t.Errorf("ShardsFor(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	for _, byOrdinal := range []bool{false, true} {
		rs := RecordSet{Shards: 8, ByOrdinal: byOrdinal}
		counts := make([]int, 8)
		// Any 100 consecutive ordinals (a provider answers neighbours
		// together) touch every shard.
		window := map[int]bool{}
		for i := range 8000 {
			s := rs.Shard(RecordKey{ID: NewID(time.Now()) + string(rune('a'+i%26)), Ordinal: i})
			counts[s]++
			if i >= 4000 && i < 4100 {
				window[s] = true
			}
		}
		for s, c := range counts {
			if c < 700 || c > 1300 {
				t.Errorf("by ordinal %v: shard %d holds %d of 8000: spreads badly", byOrdinal, s, c)
			}
		}
		if len(window) != 8 {
			t.Errorf("by ordinal %v: 100 neighbours spread over %d of 8 shards", byOrdinal, len(window))
		}
	}
}

func TestAggregate(t *testing.T) {
	j := &Job{Status: StatusSubmitted, Parts: []Part{{Status: StatusIngesting}, {Status: StatusInProgress}}}
	if got := j.Aggregate(); got != StatusInProgress {
		t.Fatalf("Aggregate = %s, want in_progress (least advanced part)", got)
	}
}

func TestProviderRecordID(t *testing.T) {
	for _, i := range []int{0, 1, 99_999, 12_345_678, 123_456_789} {
		id := ProviderRecordID(i)
		if !ValidRecordID(id) || strings.ContainsAny(id, "_-") {
			t.Errorf("ProviderRecordID(%d) = %q: not alphanumeric", i, id)
		}
		if want := fmt.Sprintf("r%08d", i); id != want {
			t.Errorf("ProviderRecordID(%d) = %q, want %q", i, id, want)
		}
		if got, ok := ProviderRecordIndex(id); !ok || got != i {
			t.Errorf("ProviderRecordIndex(%q) = %d, %v", id, got, ok)
		}
	}
	for _, bad := range []string{"", "r1", "x00000001", "r0000000a", "r000000001", "r-0000001"} {
		if _, ok := ProviderRecordIndex(bad); ok {
			t.Errorf("ProviderRecordIndex(%q) accepted", bad)
		}
	}
}

// ValidRecordID is RecordIDPattern.
func TestValidRecordIDIsThePattern(t *testing.T) {
	re := regexp.MustCompile(RecordIDPattern)
	for _, id := range []string{"", "a", "r00000001", "A-z_09", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"a b", "é", "a.b", "a\n", "a/b", "-", "_", "ab\x00", "Z9"} {
		if got, want := ValidRecordID(id), re.MatchString(id); got != want {
			t.Errorf("ValidRecordID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
}

func TestCheckCallerRecordID(t *testing.T) {
	tests := []struct {
		id, want string
	}{
		{"invoice #1 / 2026", ""},
		{"émoji 🙂", ""},
		{strings.Repeat("é", 256), ""},
		{"", "must not be empty"},
		{strings.Repeat("x", 257), "at most 256 characters (got 257)"},
		{"\xff", "must be valid UTF-8"},
	}
	for _, tt := range tests {
		if got := CheckCallerRecordID(tt.id); got != tt.want {
			t.Errorf("CheckCallerRecordID(%.20q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}
