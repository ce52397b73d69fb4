package transfer

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
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

// A job past one segment is split a segment at a time: the parts cover every
// record in order, never cross a segment, and a small last segment joins the
// one before rather than leaving a part under the minimum.
func TestSplitSegments(t *testing.T) {
	defer func(n int) { segmentRecords = n }(segmentRecords)
	segmentRecords = 100
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Blobs: fs, Bucket: "s3://b"}
	j := &job.Job{ID: "j", InputURI: "s3://b/input/j"}
	ctx := context.Background()
	var sums []unitSummary
	for k := range 10 {
		var raw []byte
		for range 30 {
			raw = binary.AppendUvarint(raw, 50)
		}
		if err := s.putBytes(ctx, fanoutURI(j, "sizes", unitName(k)+".bin"), raw); err != nil {
			t.Fatal(err)
		}
		sums = append(sums, unitSummary{Records: 30})
	}
	parts, err := s.splitSegments(ctx, j, sums, service.BatchLimits{MaxRecordsPerPart: 1000, MinRecords: 40})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(parts, []int{90, 90, 120}) {
		t.Errorf("parts %v, want [90 90 120] (segments of units 0-2, 3-5, 6-9)", parts)
	}
}

// Byte ranges of any size give every line of the file once, in order, with
// the line numbers of a single read (lines longer than a range, blank lines,
// a last line without '\n', ranges cut at a '\n' or next to one).
func TestUnitsCoverEveryLineOnce(t *testing.T) {
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Blobs: fs, Bucket: "s3://b"}
	ctx := context.Background()
	var body strings.Builder
	var want []string
	for i := range 60 {
		line := fmt.Sprintf(`{"id":"l%d","prompt":"%s"}`, i, strings.Repeat("x", (i*37)%300))
		if i%9 == 4 {
			body.WriteString("\n") // a blank line
		}
		body.WriteString(line)
		want = append(want, line)
		if i < 59 {
			body.WriteString("\n") // the last line has none
		}
	}
	uri := "s3://b/inputs/f.jsonl"
	if _, err := fs.Put(ctx, uri, strings.NewReader(body.String()), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	ver, err := fs.Stat(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{1, 2, 7, 64, 101, 333, 1 << 20} {
		var got []string
		lines := 0
		for start := int64(0); start < ver.Size; start += size {
			r, c, err := s.openUnit(ctx, "input_uri", Unit{URI: uri, Tag: ver.Tag, Size: ver.Size, Start: start, End: min(start+size, ver.Size)})
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
				got = append(got, string(r.Bytes()))
			}
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			lines += r.Line()
			c.Close()
		}
		if !slices.Equal(got, want) {
			t.Errorf("ranges of %d bytes: %d lines, want %d in order", size, len(got), len(want))
		}
		if lines != 60+60/9+1 {
			t.Errorf("ranges of %d bytes count %d lines, want %d", size, lines, 60+60/9+1)
		}
	}
}

// Two plans of one job made at once (its event delivered twice) are the same
// plan, salt included: units of either agree on every fingerprint.
func TestPlansOfOneJobAgree(t *testing.T) {
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Blobs: fs, Bucket: "s3://b", UnitBytes: 100}
	ctx := context.Background()
	var files []inputFile
	for f := range 3 {
		uri := fmt.Sprintf("s3://b/inputs/t/f%d.jsonl", f)
		if _, err := fs.Put(ctx, uri, strings.NewReader(strings.Repeat(`{"prompt":"p"}`+"\n", 40*(f+1))), "application/jsonl"); err != nil {
			t.Fatal(err)
		}
		files = append(files, inputFile{URI: uri, Name: uri})
	}
	j := &job.Job{ID: "01m8xtyqh42htaygjrdch8hfyh", InputURI: "s3://b/input/j"}
	fr := fileRequest{Field: "input_uri", Files: files}
	if err := s.putRequest(ctx, j, fr); err != nil {
		t.Fatal(err)
	}
	a, err := s.newPlan(ctx, j, fr)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.newPlan(ctx, j, fr)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Units) < 10 || !slices.Equal(a.Units, b.Units) {
		t.Fatalf("two plans differ: %d and %d units, first %+v and %+v", len(a.Units), len(b.Units), a.Units[0], b.Units[0])
	}
}

// slotStore is the store as phaseDone uses it: its slots.
type slotStore struct {
	store.Store
	mu sync.Mutex
	m  map[string]string
}

func (s *slotStore) SwapSlot(_ context.Context, key, old, next string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[key] != old {
		return false, nil
	}
	s.m[key] = next
	return true, nil
}

func (s *slotStore) Slot(_ context.Context, key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

// A phase is done only once every unit left its marker, across marker
// groups; then exactly one unit claims the next phase, and its redelivery
// claims it again (it may have died before sending), no other.
func TestPhaseDoneAcrossGroups(t *testing.T) {
	defer func(n int) { markerGroup = n }(markerGroup)
	markerGroup = 3
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Blobs: fs, Jobs: &slotStore{m: map[string]string{}}, Bucket: "s3://b"}
	j := &job.Job{ID: "j", InputURI: "s3://b/input/j"}
	ctx := context.Background()
	const want = 8
	done := func(k int) bool {
		t.Helper()
		ok, err := s.phaseDone(ctx, j, UnitCheck, k, want, UnitDups)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, k := range []int{5, 0, 7, 2, 1, 6, 4} { // all but unit 3, groups out of order
		if err := s.putJSON(ctx, markerURI(j, UnitCheck, k), struct{}{}); err != nil {
			t.Fatal(err)
		}
		if done(k) {
			t.Fatalf("done after unit %d with unit 3 missing", k)
		}
	}
	if err := s.putJSON(ctx, markerURI(j, UnitCheck, 3), struct{}{}); err != nil {
		t.Fatal(err)
	}
	var claimed []int
	for k := range want {
		if done(k) {
			claimed = append(claimed, k)
		}
	}
	if len(claimed) != 1 {
		t.Fatalf("units %v claimed the next phase, want one", claimed)
	}
	if !done(claimed[0]) {
		t.Error("the claimant's redelivery did not claim again")
	}
}

// A job of MaxJobFiles files keeps its request small (every unit reads it)
// and its files apart, whole.
func TestRequestOfManyFiles(t *testing.T) {
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Blobs: fs, Bucket: "s3://b"}
	ctx := context.Background()
	j := &job.Job{ID: "j", InputURI: "s3://b/input/j"}
	files := make([]inputFile, MaxJobFiles)
	for i := range files {
		files[i] = inputFile{URI: fmt.Sprintf("s3://b/inputs/0123456789abcdef/corpus/2026/12/part-%06d.jsonl", i), Name: fmt.Sprintf("2026/12/part-%06d.jsonl", i)}
	}
	if err := s.putRequest(ctx, j, fileRequest{Field: "input_uri", Files: files}); err != nil {
		t.Fatal(err)
	}
	fr, err := s.getRequest(ctx, j)
	if err != nil || !fr.Many {
		t.Fatalf("request %+v, %v", fr, err)
	}
	var kept []inputFile
	if err := s.getJSON(ctx, filesURI(j), &kept); err != nil || !slices.Equal(kept, files) {
		t.Fatalf("%d files kept, %v; want %d", len(kept), err, len(files))
	}
}
