package storeutil

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

func TestPageLimit(t *testing.T) {
	cases := []struct{ in, want int }{
		{-1, job.DefaultPageSize}, {0, job.DefaultPageSize}, {1, 1}, {job.MaxPageSize, job.MaxPageSize}, {job.MaxPageSize + 1, job.MaxPageSize},
	}
	for _, tc := range cases {
		if got := PageLimit(tc.in); got != tc.want {
			t.Errorf("PageLimit(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestLive(t *testing.T) {
	now := time.Unix(1000, 500_000_000)
	cases := []struct {
		name string
		exp  int64
		want bool
	}{
		{"never", 0, true},
		{"future", 1001, true},
		{"this second", 1000, false},
		{"past", 999, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Live(tc.exp, now); got != tc.want {
				t.Errorf("Live(%d, %v) = %v, want %v", tc.exp, now, got, tc.want)
			}
		})
	}
	if ExpiresUnix(time.Time{}) != 0 || !FromExpiresUnix(0).IsZero() {
		t.Error("zero time must round-trip as 0 (never)")
	}
}

func TestDedupe(t *testing.T) {
	in := []job.Record{{ID: "a", Output: "1"}, {ID: "b"}, {ID: "a", Output: "2"}, {ID: "c"}}
	got := Dedupe(in)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) || got[0].Output != "2" {
		t.Fatalf("Dedupe = %+v, want a(2), b, c", got)
	}
}

func TestCheckRecords(t *testing.T) {
	cases := []struct {
		name      string
		byOrdinal bool
		recs      []job.Record
		wantErr   bool
		wantIs    error
	}{
		{"ok", false, []job.Record{{ID: "a", Output: "x"}}, false, nil},
		{"empty id", false, []job.Record{{ID: "a"}, {ID: ""}}, true, nil},
		{"too large", false, []job.Record{{ID: "a", Output: string(make([]byte, job.MaxInlineOutputBytes+1))}}, true, store.ErrTooLarge},
		{"ordinals", true, []job.Record{{ID: "a", Ordinal: 0}, {ID: "b", Ordinal: MaxOrdinal}}, false, nil},
		{"negative ordinal", true, []job.Record{{ID: "a", Ordinal: -1}}, true, nil},
		{"ordinal past the key width", true, []job.Record{{ID: "a", Ordinal: MaxOrdinal + 1}}, true, nil},
		{"ordinal unused by id", false, []job.Record{{ID: "a", Ordinal: -1}}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRecords(job.RecordSet{JobID: "j", ByOrdinal: tc.byOrdinal}, tc.recs)
			if (err != nil) != tc.wantErr {
				t.Fatalf("CheckRecords: %v, want error %v", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Fatalf("CheckRecords: %v, want %v", err, tc.wantIs)
			}
		})
	}
}

func TestCursor(t *testing.T) {
	type cur struct {
		S int    `json:"s"`
		K string `json:"k"`
	}
	c, err := EncodeCursor(cur{S: 3, K: "REC#x"})
	if err != nil {
		t.Fatalf("EncodeCursor: %v", err)
	}
	var got cur
	if err := DecodeCursor(c, &got); err != nil || got != (cur{3, "REC#x"}) {
		t.Fatalf("DecodeCursor: %v, %+v", err, got)
	}
	for _, bad := range []string{"%%%", "aGVsbG8", "eyJ6IjoxfQ"} { // junk, "hello", {"z":1}
		if err := DecodeCursor(bad, &got); !errors.Is(err, store.ErrBadCursor) {
			t.Errorf("DecodeCursor(%q): %v, want ErrBadCursor", bad, err)
		}
	}
}
