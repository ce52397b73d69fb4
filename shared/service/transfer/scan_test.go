package transfer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockbatch"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

const model = "anthropic.claude-haiku-4-5-20251001-v1:0"

func lines(n int, line func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// scan validates body with the given fingerprint (nil: the real one).
func scan(t *testing.T, body string, fp func(string) uint64) (int, func(string) bool, error) {
	t.Helper()
	if fp != nil {
		defer transfer.SetFingerprint(fp)()
	}
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	uri := "s3://b/inputs/f.jsonl"
	if _, err := blobs.Put(ctx, uri, strings.NewReader(body), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	s := &transfer.Service{Blobs: blobs, Bucket: "s3://b"}
	return s.Scan(ctx, uri, batch.SubmitRequest{Model: model}, &bedrockbatch.Provider{})
}

// Duplicates are found by fingerprint and confirmed by text: whatever the
// fingerprint (the real one, or one where every id collides, or one where
// every other id does), the outcome and the problem list are the same as the
// exact answer.
func TestScanDuplicatesExactWhateverTheFingerprint(t *testing.T) {
	prompt := func(id string) string { return fmt.Sprintf(`{"id":%q,"prompt":"p"}`, id) }
	tests := []struct {
		name    string
		body    string
		wantErr []string // empty: valid
		not     []string
	}{
		{"distinct ids", lines(150, func(i int) string { return prompt(fmt.Sprintf("q%d", i)) }), nil, nil},
		{"one duplicate", lines(150, func(i int) string {
			if i == 89 {
				return prompt("q4")
			}
			return prompt(fmt.Sprintf("q%d", i))
		}), []string{"1 of 150 lines are invalid", `line 90: duplicate id "q4" (also line 5)`}, nil},
		{"three copies and a second pair, with a bad line between", lines(150, func(i int) string {
			switch i {
			case 10, 20:
				return prompt("a")
			case 30:
				return `{"id":"z","prompt":"x","temperature":1}`
			case 40:
				return prompt("q0")
			case 50:
				return prompt("q45")
			}
			return prompt(fmt.Sprintf("q%d", i))
		}), []string{"4 of 150 lines are invalid", `line 21: duplicate id "a" (also line 11)`, "line 31: unknown field",
			`line 41: duplicate id "q0" (also line 1)`, `line 51: duplicate id "q45" (also line 46)`}, []string{"\nline 1:", "\nline 11:"}},
		{"a duplicate that is also badly encoded counts once, as a duplicate", lines(150, func(i int) string {
			if i == 7 {
				return `{"id":"q1","prompt":"x","messages":"not an array"}`
			}
			return prompt(fmt.Sprintf("q%d", i))
		}), []string{"1 of 150 lines are invalid", `line 8:`}, nil},
	}
	fingerprints := map[string]func(string) uint64{
		"real":          nil,
		"all collide":   func(string) uint64 { return 42 },
		"half collide":  func(id string) uint64 { return uint64(len(id) % 2) },
		"by first byte": func(id string) uint64 { return uint64(id[0]) },
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var first string
			for name, fp := range fingerprints {
				n, _, err := scan(t, tc.body, fp)
				got := ""
				if err != nil {
					got = err.Error()
				}
				if len(tc.wantErr) == 0 {
					if err != nil || n != 150 {
						t.Errorf("%s fingerprint: %d records, error %v; want 150 and no error", name, n, err)
					}
					continue
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(got, w) {
						t.Errorf("%s fingerprint: error lacks %q:\n%s", name, w, got)
					}
				}
				for _, w := range tc.not {
					if strings.Contains(got, w) {
						t.Errorf("%s fingerprint: error has %q:\n%s", name, w, got)
					}
				}
				if first == "" {
					first = got
				} else if got != first {
					t.Errorf("fingerprints disagree:\n%s\nvs (%s)\n%s", first, name, got)
				}
			}
		})
	}
}

func TestScanRecordCap(t *testing.T) {
	defer transfer.SetRecordCap(120)()
	body := func(n int) string { return lines(n, func(i int) string { return `{"prompt":"p"}` }) }
	if n, _, err := scan(t, body(120), nil); err != nil || n != 120 {
		t.Fatalf("120 records at a cap of 120: %d, %v", n, err)
	}
	_, _, err := scan(t, body(121), nil)
	if err == nil || !strings.Contains(err.Error(), "input_uri: the file holds more than 120 records") {
		t.Fatalf("121 records at a cap of 120: %v", err)
	}
}

// Generated ids avoid every explicit id; a fingerprint collision only makes
// them skip one more.
func TestScanTakenIDs(t *testing.T) {
	body := lines(150, func(i int) string { return fmt.Sprintf(`{"id":"r%05d","prompt":"p"}`, i*2+1) })
	_, taken, err := scan(t, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		if id := fmt.Sprintf("r%05d", i*2+1); !taken(id) {
			t.Errorf("%s is not taken", id)
		}
	}
	free := 0
	for i := range 150 {
		if !taken(fmt.Sprintf("r%05d", i*2+2)) {
			free++
		}
	}
	if free != 150 {
		t.Errorf("%d of 150 unused ids are free, want all (64-bit fingerprints do not collide on 300 ids)", free)
	}
}
