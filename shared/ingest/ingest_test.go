package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/ingest/internal/ingesttest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
)

const resultsPrefix = "s3://results/out"

var (
	errBoom = errors.New("dynamodb is down")
	quiet   = slog.New(slog.DiscardHandler)
)

// memWriter is a RecordWriter keeping records in a map, with hooks for failures.
type memWriter struct {
	t      *testing.T
	rs     job.RecordSet
	jitter time.Duration
	// failFrom makes call n and later fail (0: never).
	failFrom int
	// onCall runs at the start of call n (1-based), e.g. to cancel a context.
	onCall func(n int)

	mu    sync.Mutex
	calls int
	recs  map[string]job.Record
}

func newWriter(t *testing.T, j *job.Job) *memWriter {
	return &memWriter{t: t, rs: j.RecordSet(), recs: map[string]job.Record{}}
}

func (w *memWriter) PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	w.mu.Lock()
	w.calls++
	n := w.calls
	w.mu.Unlock()
	most := ingest.DefaultBatchSize
	if rs.Packed {
		most = ingest.DefaultPackedBatchSize
	}
	if rs != w.rs || len(recs) == 0 || len(recs) > most {
		w.t.Errorf("PutRecords(%+v, %d records)", rs, len(recs))
	}
	if w.onCall != nil {
		w.onCall(n)
	}
	if w.jitter > 0 {
		select {
		case <-time.After(rand.N(w.jitter)):
		case <-ctx.Done():
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.failFrom > 0 && n >= w.failFrom {
		return errBoom
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range recs {
		w.recs[r.ID] = r
	}
	return nil
}

func (w *memWriter) snapshot() map[string]job.Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]job.Record, len(w.recs))
	for k, v := range w.recs {
		out[k] = v
	}
	return out
}

// saver records checkpoints and checks each against the oracle at the moment it is saved.
type saver struct {
	mu    sync.Mutex
	saved []job.Checkpoint
	check func(cp job.Checkpoint)
	err   error
}

func (s *saver) SaveCheckpoint(ctx context.Context, jobID string, cp job.Checkpoint) error {
	if s.check != nil {
		s.check(cp)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if n := len(s.saved); n > 0 && !after(cp, s.saved[n-1]) {
		return fmt.Errorf("checkpoint went back: %+v after %+v", cp, s.saved[n-1])
	}
	s.saved = append(s.saved, cp)
	return nil
}

func (s *saver) last() *job.Checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.saved) == 0 {
		return nil
	}
	cp := s.saved[len(s.saved)-1]
	return &cp
}

func after(a, b job.Checkpoint) bool {
	return a.Part > b.Part || (a.Part == b.Part && a.Offset > b.Offset)
}

func newJob() *job.Job {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return &job.Job{ID: job.NewID(now), Shards: 3, ExpiresAt: job.ExpiresAt(now, 7)}
}

func newBlobs(t *testing.T) *fsblob.Store {
	s, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func putFile(t *testing.T, s blob.Store, uri string, content []byte) {
	t.Helper()
	if _, err := s.Put(context.Background(), uri, bytes.NewReader(content), ""); err != nil {
		t.Fatal(err)
	}
}

// outcome is what one line should do, by the rules of the package doc.
type outcome struct {
	line   int
	kind   string // good, bad, dup
	rec    job.Record
	reason string
}

// oracle walks a file sequentially with the plain rules, for expected results.
func oracle(t *testing.T, content []byte, maxLine int, known func(string) bool) []outcome {
	t.Helper()
	var out []outcome
	log := &jsonl.BadLog{Keep: 1 << 30}
	r := jsonl.NewReader(bytes.NewReader(content), jsonl.Options{MaxLineBytes: maxLine, Bad: log})
	seen := map[string]bool{}
	for r.Next() {
		rec, err := ingesttest.Parse(r.Bytes())
		o := outcome{line: r.Line(), rec: rec}
		switch {
		case err != nil, !job.ValidRecordID(rec.ID), known != nil && !known(rec.ID):
			o.kind = "bad"
		case seen[rec.ID]:
			o.kind = "dup"
		default:
			o.kind = "good"
			seen[rec.ID] = true
		}
		out = append(out, o)
	}
	for _, b := range log.Lines() {
		out = append(out, outcome{line: b.Line, kind: "bad", reason: b.Reason})
	}
	return out
}

type counts struct {
	Succeeded, Failed, Bad, Dups int
	In, Out                      int64
}

func sum(outs []outcome, upTo int) counts {
	var c counts
	for _, o := range outs {
		if o.line > upTo {
			continue
		}
		switch o.kind {
		case "bad":
			c.Bad++
		case "dup":
			c.Dups++
		case "good":
			if o.rec.Status == job.RecordSucceeded {
				c.Succeeded++
			} else {
				c.Failed++
			}
			c.In += o.rec.InputTokens
			c.Out += o.rec.OutputTokens
		}
	}
	return c
}

func cpCounts(cp job.Checkpoint, dups int) counts {
	return counts{cp.Succeeded, cp.Failed, cp.BadLines, dups, cp.InputTokens, cp.OutputTokens}
}

// fixture is a job with output files and the oracle's view of them.
type fixture struct {
	j       *job.Job
	blobs   *fsblob.Store
	files   []ingest.File
	outs    map[int][]outcome // part -> outcomes
	maxLine int
}

func newFixture(t *testing.T, parts map[int][]byte, maxLine int, known func(string) bool) *fixture {
	f := &fixture{j: newJob(), blobs: newBlobs(t), outs: map[int][]outcome{}, maxLine: maxLine}
	for part, content := range parts {
		uri := fmt.Sprintf("s3://out/%s/part%d/records.jsonl.out", f.j.ID, part)
		putFile(t, f.blobs, uri, content)
		f.files = append(f.files, ingest.File{Part: part, URI: uri})
		f.outs[part] = oracle(t, content, maxLine, known)
	}
	return f
}

// expectedAt is what a checkpoint at cp must hold: counters and the records written.
func (f *fixture) expectedAt(cp job.Checkpoint) (counts, map[string]job.Record) {
	var c counts
	recs := map[string]job.Record{}
	for part, outs := range f.outs {
		upTo := -1
		switch {
		case part < cp.Part:
			upTo = 1 << 30
		case part == cp.Part:
			upTo = cp.Line
		}
		s := sum(outs, upTo)
		c.Succeeded += s.Succeeded
		c.Failed += s.Failed
		c.Bad += s.Bad
		c.In += s.In
		c.Out += s.Out
		for _, o := range outs {
			if o.kind == "good" && o.line <= upTo {
				recs[o.rec.ID] = o.rec
			}
		}
	}
	return c, recs
}

// checkAt verifies a checkpoint against the oracle and the records written so far.
func (f *fixture) checkAt(t *testing.T, w *memWriter, cp job.Checkpoint) {
	t.Helper()
	want, recs := f.expectedAt(cp)
	if got := cpCounts(cp, 0); got != want {
		t.Errorf("checkpoint %+v: counters %+v, want %+v", cp, got, want)
	}
	have := w.snapshot()
	for id := range recs {
		if _, ok := have[id]; !ok {
			t.Errorf("checkpoint at part %d line %d saved before record %s was written", cp.Part, cp.Line, id)
			return
		}
	}
}

func (f *fixture) ingester(w ingest.RecordWriter, s ingest.CheckpointSaver) *ingest.Ingester {
	return &ingest.Ingester{
		Records:       w,
		Blobs:         f.blobs,
		Checkpoints:   s,
		ResultsPrefix: resultsPrefix,
		BatchSize:     5,
		Workers:       4,
		ChunkLines:    40,
		MaxLineBytes:  f.maxLine,
		Log:           quiet,
	}
}

func TestIngestCounts(t *testing.T) {
	long := ingesttest.OKLine("r-long", strings.Repeat("y", 3000), 1, 1)
	tests := []struct {
		name     string
		lines    []string
		noNL     bool // no newline after the last line
		known    []string
		want     counts
		wantBad  []int // line numbers of bad lines
		wantRecs map[string]job.RecordStatus
	}{
		{name: "empty file"},
		{
			name:     "good and failed",
			lines:    []string{ingesttest.OKLine("r1", "hello", 10, 20), ingesttest.ErrLine("r2", 400, "throttled"), ingesttest.OKLine("r3", "bye", 1, 2)},
			want:     counts{Succeeded: 2, Failed: 1, In: 11, Out: 22},
			wantRecs: map[string]job.RecordStatus{"r1": job.RecordSucceeded, "r2": job.RecordFailed, "r3": job.RecordSucceeded},
		},
		{
			name: "every kind of bad line",
			lines: []string{
				ingesttest.OKLine("r1", "hello", 10, 20),                               // 1 good
				ingesttest.ErrLine("r2", 400, "throttled"),                             // 2 failed
				`{"recordId":"r3","modelOutput":{"content":[{"type":"text","text":"cu`, // 3 truncated JSON
				`{"recordId":5,"modelOutput":{}}`,                                      // 4 wrong type of recordId
				`{"modelOutput":{"content":[]}}`,                                       // 5 missing recordId
				ingesttest.OKLine("stranger", "who?", 1, 1),                            // 6 unknown recordId
				"",                                     // 7 blank: skipped, not bad
				ingesttest.OKLine("r1", "again", 5, 5), // 8 duplicate: counted once
				long,                                   // 9 over-long
				`{"recordId":"bad id!","error":{"errorCode":400,"errorMessage":"x"}}`, // 10 invalid recordId
				`{"recordId":"r11"}`, // 11 neither output nor error
				`{"recordId":"r12","error":{"errorCode":"ThrottlingException","errorMessage":"slow"}}`, // 12 failed, code as a string
				`{"recordId":"r13","modelOutput":{"usage":{"input_tokens":"many"}}}`,                   // 13 wrong type of tokens
				`not json at all`,                      // 14
				ingesttest.OKLine("r15", "last", 3, 4), // 15 good, no trailing newline
			},
			noNL:     true,
			known:    []string{"r1", "r2", "r3", "r11", "r12", "r13", "r15", "r-long"},
			want:     counts{Succeeded: 2, Failed: 2, Bad: 9, Dups: 1, In: 13, Out: 24},
			wantBad:  []int{3, 4, 5, 6, 9, 10, 11, 13, 14},
			wantRecs: map[string]job.RecordStatus{"r1": job.RecordSucceeded, "r2": job.RecordFailed, "r12": job.RecordFailed, "r15": job.RecordSucceeded},
		},
		{
			name:     "without a known-id check any valid id counts",
			lines:    []string{ingesttest.OKLine("stranger", "who?", 1, 1), ingesttest.OKLine("r1", "hello", 1, 1)},
			want:     counts{Succeeded: 2, In: 2, Out: 2},
			wantRecs: map[string]job.RecordStatus{"stranger": job.RecordSucceeded, "r1": job.RecordSucceeded},
		},
		{
			name:    "only bad lines",
			lines:   []string{"{", "}", "[]", "null", `{"recordId":null}`},
			want:    counts{Bad: 5},
			wantBad: []int{1, 2, 3, 4, 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := strings.Join(tt.lines, "\n")
			if !tt.noNL && content != "" {
				content += "\n"
			}
			var known func(string) bool
			var resolve ingest.IDResolver
			if tt.known != nil {
				set := map[string]bool{}
				for _, k := range tt.known {
					set[k] = true
				}
				known = func(id string) bool { return set[id] }
				resolve = func(id string) (job.RecordKey, bool, error) { return job.RecordKey{ID: id}, set[id], nil }
			}
			f := newFixture(t, map[int][]byte{0: []byte(content)}, 2048, known)
			w := newWriter(t, f.j)
			sv := &saver{}
			res, err := f.ingester(w, sv).Ingest(context.Background(), f.j, f.files, ingesttest.Parse, resolve)
			if err != nil {
				t.Fatal(err)
			}
			if got := cpCounts(res.Checkpoint, res.Duplicates); got != tt.want {
				t.Fatalf("counts %+v, want %+v", got, tt.want)
			}
			if want, _ := f.expectedAt(res.Checkpoint); want != cpCounts(res.Checkpoint, 0) {
				t.Fatalf("oracle disagrees: %+v", want)
			}
			if res.Part != 1 || res.Offset != 0 || (sv.last() != nil && *sv.last() != res.Checkpoint) {
				t.Fatalf("final checkpoint %+v, last saved %+v", res.Checkpoint, sv.last())
			}
			var bad []int
			for _, b := range res.Bad {
				bad = append(bad, b.Line)
				if b.Part != 0 || b.Reason == "" {
					t.Errorf("bad line %+v", b)
				}
			}
			if fmt.Sprint(bad) != fmt.Sprint(tt.wantBad) {
				t.Fatalf("bad lines %v, want %v (%+v)", bad, tt.wantBad, res.Bad)
			}
			got := w.snapshot()
			if len(got) != len(tt.wantRecs) || res.Written != len(tt.wantRecs) {
				t.Fatalf("wrote %d records (Written %d), want %d: %v", len(got), res.Written, len(tt.wantRecs), got)
			}
			for id, st := range tt.wantRecs {
				r := got[id]
				if r.Status != st || r.JobID != f.j.ID || !r.ExpiresAt.Equal(f.j.ExpiresAt) {
					t.Errorf("record %s = %+v", id, r)
				}
			}
			if r, ok := got["r1"]; ok && r.Output != "hello" {
				t.Errorf("duplicate overwrote the first record: %q", r.Output)
			}
		})
	}
}

// The provider sees ids the suite generated; results are stored under the
// caller's ids, which may be any text.
func TestIngestMapsProviderIDs(t *testing.T) {
	caller := map[string]string{"r00000000": "invoice #1 / 2026", "r00000001": "émoji 🙂 id", "r00000002": "a\nb"}
	content := ingesttest.OKLine("r00000000", "one", 3, 4) + "\n" + ingesttest.ErrLine("r00000001", 429, "throttled") + "\n" +
		ingesttest.OKLine("r00000002", "three", 5, 6) + "\n" + ingesttest.OKLine("r00000009", "stranger", 1, 1) + "\n"
	f := newFixture(t, map[int][]byte{0: []byte(content)}, 0, nil)
	w := newWriter(t, f.j)
	resolve := func(id string) (job.RecordKey, bool, error) {
		c, ok := caller[id]
		i, _ := job.ProviderRecordIndex(id)
		return job.RecordKey{ID: c, Ordinal: i}, ok, nil
	}
	res, err := f.ingester(w, nil).Ingest(context.Background(), f.j, f.files, ingesttest.Parse, resolve)
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 2 || res.Failed != 1 || res.BadLines != 1 {
		t.Fatalf("counts %+v, want 2 succeeded, 1 failed, 1 bad (unknown id)", res.Checkpoint)
	}
	recs := w.snapshot()
	for pid, cid := range caller {
		r, ok := recs[cid]
		if !ok {
			t.Errorf("provider id %s: no record under caller id %q (have %v)", pid, cid, keys(recs))
		}
		// The provider id's index is the record's input ordinal.
		if i, _ := job.ProviderRecordIndex(pid); ok && r.Ordinal != i {
			t.Errorf("record %q has ordinal %d, want %d", cid, r.Ordinal, i)
		}
		if _, ok := recs[pid]; ok {
			t.Errorf("record stored under provider id %s", pid)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestIngestPackedBatches: a job whose records are packed is written a
// chunk at a time (the store packs only one call's records together),
// bounded in bytes; one keeping an item per record, 25 at a time.
func TestIngestPackedBatches(t *testing.T) {
	for _, tc := range []struct {
		name        string
		packed      bool
		lineBytes   int
		most, least int
	}{
		{"per record", false, 600, ingest.DefaultBatchSize, ingest.DefaultBatchSize},
		{"packed", true, 600, ingest.DefaultPackedBatchSize, 2500},
		{"packed, big outputs", true, 20_000, ingest.DefaultPackedBatchSize, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := ingesttest.NewGenerator(ingesttest.Spec{Records: 3000, LineBytes: tc.lineBytes, ErrorEvery: 7})
			content, err := io.ReadAll(g)
			if err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, map[int][]byte{0: content}, 0, nil)
			f.j.InputOrder, f.j.PackedRecords = true, tc.packed
			w := &batchSizes{memWriter: newWriter(t, f.j)}
			in := f.ingester(w, nil)
			in.BatchSize, in.ChunkLines = 0, 0 // the defaults
			res, err := in.Ingest(context.Background(), f.j, f.files, ingesttest.Parse, ingesttest.Resolve)
			if err != nil || res.Succeeded+res.Failed != 3000 {
				t.Fatalf("ingested %d: %v", res.Succeeded+res.Failed, err)
			}
			if w.most > tc.most || w.most < tc.least {
				t.Fatalf("largest batch %d records, want %d..%d", w.most, tc.least, tc.most)
			}
			if tc.packed && w.bytes > 3<<20 {
				t.Fatalf("a batch of %d output bytes", w.bytes)
			}
		})
	}
}

// batchSizes notes the largest batch written, in records and output bytes.
type batchSizes struct {
	*memWriter
	mu          sync.Mutex
	most, bytes int
}

func (b *batchSizes) PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	n := 0
	for _, r := range recs {
		n += len(r.Output)
	}
	b.mu.Lock()
	b.most, b.bytes = max(b.most, len(recs)), max(b.bytes, n)
	b.mu.Unlock()
	return b.memWriter.PutRecords(ctx, rs, recs)
}

func TestIngestBigOutput(t *testing.T) {
	big := strings.Repeat("é<b>\n", job.MaxInlineOutputBytes/6+100) // > 350 KiB once UTF-8 encoded
	edge := strings.Repeat("x", job.MaxInlineOutputBytes)
	content := ingesttest.OKLine("big", big, 1, 2) + "\n" + ingesttest.OKLine("edge", edge, 1, 2) + "\n" + ingesttest.OKLine("small", "s", 1, 2) + "\n"
	f := newFixture(t, map[int][]byte{0: []byte(content)}, 0, nil)
	w := newWriter(t, f.j)
	res, err := f.ingester(w, nil).Ingest(context.Background(), f.j, f.files, ingesttest.Parse, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 3 {
		t.Fatalf("Succeeded = %d", res.Succeeded)
	}
	recs := w.snapshot()
	ref := resultsPrefix + "/" + f.j.ID + "/big.out"
	if r := recs["big"]; r.Output != "" || r.OutputRef != ref {
		t.Fatalf("big record: Output %d bytes, OutputRef %q, want %q", len(r.Output), r.OutputRef, ref)
	}
	rc, err := f.blobs.Open(context.Background(), ref, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if b, _ := io.ReadAll(rc); string(b) != big {
		t.Fatalf("stored output is %d bytes, want %d", len(b), len(big))
	}
	for _, id := range []string{"edge", "small"} {
		if r := recs[id]; r.OutputRef != "" || r.Output == "" {
			t.Fatalf("%s moved to a blob: %+v", id, r.OutputRef)
		}
	}
}

// bigFile builds a generated output with bad lines and duplicates sprinkled in,
// some of whose first occurrences sit in an earlier chunk.
func bigFile(t *testing.T, records, seed int) []byte {
	t.Helper()
	var lines []string
	g := ingesttest.NewGenerator(ingesttest.Spec{Records: records, LineBytes: 600, ErrorEvery: 7})
	r := jsonl.NewReader(g, jsonl.Options{})
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for r.Next() {
		lines = append(lines, string(r.Bytes()))
		switch i := len(lines); {
		case i%53 == 0:
			lines = append(lines, lines[i-1][:100]) // truncated
		case i%97 == 0:
			lines = append(lines, lines[rng.IntN(i)]) // duplicate of any earlier line
		case i%211 == 0:
			lines = append(lines, "")
		case i%307 == 0:
			lines = append(lines, ingesttest.OKLine("x", strings.Repeat("z", 5000), 1, 1)) // over-long
		}
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

func TestIngestCancelAndResume(t *testing.T) {
	parts := map[int][]byte{0: bigFile(t, 700, 1), 1: bigFile(t, 500, 2), 3: bigFile(t, 300, 3)}
	const maxLine = 4096
	// One clean run is the reference.
	clean := newFixture(t, parts, maxLine, nil)
	cw := newWriter(t, clean.j)
	cw.jitter = time.Millisecond
	want, err := clean.ingester(cw, &saver{check: func(cp job.Checkpoint) { clean.checkAt(t, cw, cp) }}).
		Ingest(context.Background(), clean.j, clean.files, ingesttest.Parse, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantRecs := cw.snapshot()
	if exp, recs := clean.expectedAt(want.Checkpoint); cpCounts(want.Checkpoint, 0) != exp || len(recs) != len(wantRecs) {
		t.Fatalf("clean run %+v (%d records), oracle %+v (%d records)", want.Checkpoint, len(wantRecs), exp, len(recs))
	}
	totalCalls := cw.calls

	tests := []struct {
		name     string
		cancelAt []int // PutRecords call numbers (per run) that cancel the run
	}{
		{"first batch", []int{1}},
		{"mid first file", []int{40}},
		{"near a file end", []int{totalCalls * 700 / 1500}},
		{"second file", []int{totalCalls * 900 / 1500}},
		{"last batches", []int{totalCalls - 2}},
		{"interrupted twice", []int{totalCalls / 3, totalCalls / 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, parts, maxLine, nil)
			f.j.ID = clean.j.ID
			w := newWriter(t, f.j)
			w.jitter = time.Millisecond
			sv := &saver{check: func(cp job.Checkpoint) { f.checkAt(t, w, cp) }}
			j := *f.j
			for _, at := range tt.cancelAt {
				ctx, cancel := context.WithCancel(context.Background())
				base := w.calls
				w.onCall = func(n int) {
					if n-base == at {
						cancel()
					}
				}
				res, err := f.ingester(w, sv).Ingest(ctx, &j, f.files, ingesttest.Parse, nil)
				cancel()
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("interrupted run: err = %v, want context.Canceled", err)
				}
				if last := sv.last(); last != nil && *last != res.Checkpoint {
					t.Fatalf("Result checkpoint %+v, last saved %+v", res.Checkpoint, *last)
				}
				f.checkAt(t, w, res.Checkpoint)
				j.Checkpoint = sv.last()
			}
			w.onCall = nil
			res, err := f.ingester(w, sv).Ingest(context.Background(), &j, f.files, ingesttest.Parse, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Checkpoint != want.Checkpoint {
				t.Fatalf("resumed to %+v, one clean run gives %+v", res.Checkpoint, want.Checkpoint)
			}
			got := w.snapshot()
			if len(got) != len(wantRecs) {
				t.Fatalf("%d records, want %d", len(got), len(wantRecs))
			}
			for id, r := range wantRecs {
				if got[id] != r {
					t.Fatalf("record %s = %+v, want %+v", id, got[id], r)
				}
			}
		})
	}
}

func TestIngestWriterFailure(t *testing.T) {
	parts := map[int][]byte{0: bigFile(t, 400, 4), 1: bigFile(t, 200, 5)}
	for _, failFrom := range []int{1, 9, 50, 100} {
		t.Run(fmt.Sprintf("fails from call %d", failFrom), func(t *testing.T) {
			f := newFixture(t, parts, 4096, nil)
			w := newWriter(t, f.j)
			w.jitter = time.Millisecond
			w.failFrom = failFrom
			sv := &saver{check: func(cp job.Checkpoint) { f.checkAt(t, w, cp) }}
			res, err := f.ingester(w, sv).Ingest(context.Background(), f.j, f.files, ingesttest.Parse, nil)
			if !errors.Is(err, errBoom) {
				t.Fatalf("err = %v, want the writer's error", err)
			}
			f.checkAt(t, w, res.Checkpoint)
			if last := sv.last(); last != nil && *last != res.Checkpoint {
				t.Fatalf("Result checkpoint %+v, last saved %+v", res.Checkpoint, *last)
			}
			// The store recovers: the re-run finishes with exactly the clean totals.
			w.failFrom = 0
			j := *f.j
			j.Checkpoint = sv.last()
			res, err = f.ingester(w, sv).Ingest(context.Background(), &j, f.files, ingesttest.Parse, nil)
			if err != nil {
				t.Fatal(err)
			}
			exp, recs := f.expectedAt(res.Checkpoint)
			if cpCounts(res.Checkpoint, 0) != exp || res.Part != 2 {
				t.Fatalf("final %+v, want %+v", res.Checkpoint, exp)
			}
			if got := w.snapshot(); len(got) != len(recs) {
				t.Fatalf("%d records, want %d", len(got), len(recs))
			}
		})
	}
}

func TestIngestCheckpointSaveFailure(t *testing.T) {
	f := newFixture(t, map[int][]byte{0: bigFile(t, 300, 6)}, 4096, nil)
	w := newWriter(t, f.j)
	sv := &saver{err: errors.New("conditional check failed")}
	_, err := f.ingester(w, sv).Ingest(context.Background(), f.j, f.files, ingesttest.Parse, nil)
	if err == nil || !strings.Contains(err.Error(), "conditional check failed") {
		t.Fatalf("err = %v, want the save error", err)
	}
}

// countingBlobs records which files were opened where.
type countingBlobs struct {
	ingest.Blobs
	mu    sync.Mutex
	opens []string
}

func (c *countingBlobs) Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error) {
	c.mu.Lock()
	c.opens = append(c.opens, fmt.Sprintf("%s@%d", uri[strings.LastIndex(uri, "/part")+1:], offset))
	c.mu.Unlock()
	return c.Blobs.Open(ctx, uri, offset)
}

func TestIngestResumeSkipsEarlierParts(t *testing.T) {
	f := newFixture(t, map[int][]byte{
		0: []byte(ingesttest.OKLine("a", "x", 1, 1) + "\n"),
		1: []byte(ingesttest.OKLine("b", "x", 1, 1) + "\n" + ingesttest.OKLine("c", "x", 1, 1) + "\n" + ingesttest.OKLine("b", "dup", 1, 1) + "\n"),
		2: []byte(ingesttest.ErrLine("d", 500, "x") + "\n"),
	}, 0, nil)
	off := int64(len(ingesttest.OKLine("b", "x", 1, 1)) + 1)
	j := *f.j
	// Part 0 and line 1 of part 1 were done by an earlier call.
	j.Checkpoint = &job.Checkpoint{Part: 1, Offset: off, Line: 1, Succeeded: 2, InputTokens: 2, OutputTokens: 2}
	cb := &countingBlobs{Blobs: f.blobs}
	in := f.ingester(newWriter(t, f.j), nil)
	in.Blobs = cb
	res, err := in.Ingest(context.Background(), &j, f.files, ingesttest.Parse, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := job.Checkpoint{Part: 3, Succeeded: 3, Failed: 1, InputTokens: 3, OutputTokens: 3}
	if res.Checkpoint != want || res.Duplicates != 1 {
		t.Fatalf("result %+v (dups %d), want %+v and 1 duplicate", res.Checkpoint, res.Duplicates, want)
	}
	// Part 1 is reread up to the checkpoint only to relearn its ids.
	wantOpens := fmt.Sprintf("[part1/records.jsonl.out@0 part1/records.jsonl.out@%d part2/records.jsonl.out@0]", off)
	if fmt.Sprint(cb.opens) != wantOpens {
		t.Fatalf("opens %v, want %s", cb.opens, wantOpens)
	}
}

func TestIngestMissingFile(t *testing.T) {
	f := newFixture(t, map[int][]byte{0: []byte(ingesttest.OKLine("a", "x", 1, 1) + "\n")}, 0, nil)
	files := append(f.files, ingest.File{Part: 1, URI: "s3://out/" + f.j.ID + "/part1/records.jsonl.out"})
	sv := &saver{}
	res, err := f.ingester(newWriter(t, f.j), sv).Ingest(context.Background(), f.j, files, ingesttest.Parse, nil)
	var missing *ingest.MissingFileError
	if !errors.As(err, &missing) || missing.File.Part != 1 || !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("err = %v, want a MissingFileError for part 1 wrapping blob.ErrNotFound", err)
	}
	// Part 0 is done and checkpointed; the caller may skip part 1 and go on.
	want := job.Checkpoint{Part: 1, Succeeded: 1, InputTokens: 1, OutputTokens: 1}
	if res.Checkpoint != want || *sv.last() != want {
		t.Fatalf("checkpoint %+v (saved %+v), want %+v", res.Checkpoint, sv.last(), want)
	}
}

func TestIngestParserPanic(t *testing.T) {
	f := newFixture(t, map[int][]byte{0: []byte(ingesttest.OKLine("a", "x", 1, 1) + "\nboom\n" + ingesttest.OKLine("b", "x", 1, 1) + "\n")}, 0, nil)
	parse := func(line []byte) (job.Record, error) {
		if string(line) == "boom" {
			panic("index out of range")
		}
		return ingesttest.Parse(line)
	}
	res, err := f.ingester(newWriter(t, f.j), nil).Ingest(context.Background(), f.j, f.files, parse, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 2 || res.BadLines != 1 || len(res.Bad) != 1 || !strings.Contains(res.Bad[0].Reason, "panic") {
		t.Fatalf("result %+v", res)
	}
}

func TestIngestKeepsFirstBadLines(t *testing.T) {
	var lines []string
	for range 30 {
		lines = append(lines, "{")
	}
	f := newFixture(t, map[int][]byte{0: []byte(strings.Join(lines, "\n")), 1: []byte("}\n")}, 0, nil)
	in := f.ingester(newWriter(t, f.j), nil)
	res, err := in.Ingest(context.Background(), f.j, f.files, ingesttest.Parse, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.BadLines != 31 || len(res.Bad) != ingest.DefaultKeepBadLines || res.Bad[19].Line != 20 {
		t.Fatalf("BadLines %d, kept %d: %+v", res.BadLines, len(res.Bad), res.Bad)
	}
}

func TestIngestValidation(t *testing.T) {
	f := newFixture(t, map[int][]byte{0: []byte("{}\n")}, 0, nil)
	w := newWriter(t, f.j)
	tests := []struct {
		name  string
		edit  func(in *ingest.Ingester, j *job.Job, files *[]ingest.File)
		parse ingest.Parser
	}{
		{"no writer", func(in *ingest.Ingester, _ *job.Job, _ *[]ingest.File) { in.Records = nil }, ingesttest.Parse},
		{"no blobs", func(in *ingest.Ingester, _ *job.Job, _ *[]ingest.File) { in.Blobs = nil }, ingesttest.Parse},
		{"no results prefix", func(in *ingest.Ingester, _ *job.Job, _ *[]ingest.File) { in.ResultsPrefix = "" }, ingesttest.Parse},
		{"bad results prefix", func(in *ingest.Ingester, _ *job.Job, _ *[]ingest.File) { in.ResultsPrefix = "/tmp/x" }, ingesttest.Parse},
		{"no parser", func(*ingest.Ingester, *job.Job, *[]ingest.File) {}, nil},
		{"no job id", func(_ *ingest.Ingester, j *job.Job, _ *[]ingest.File) { j.ID = "" }, ingesttest.Parse},
		{"two files for one part", func(_ *ingest.Ingester, _ *job.Job, files *[]ingest.File) {
			*files = append(*files, (*files)[0])
		}, ingesttest.Parse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := f.ingester(w, nil)
			j := *f.j
			files := append([]ingest.File(nil), f.files...)
			tt.edit(in, &j, &files)
			if _, err := in.Ingest(context.Background(), &j, files, tt.parse, nil); err == nil {
				t.Fatal("Ingest succeeded")
			}
		})
	}
}

// A resolver that cannot answer (a read of a piece of ids failed) stops the
// ingest with its error; the line is not counted bad, and the next run, from
// the saved checkpoint, gives the counts of one clean run.
func TestIngestResolverErrorIsRetriedNotBad(t *testing.T) {
	content := ingesttest.OKLine("r0000000", "one", 3, 4) + "\n" + ingesttest.ErrLine("r0000001", 429, "throttled") + "\n" +
		ingesttest.OKLine("r0000002", "three", 5, 6) + "\n"
	f := newFixture(t, map[int][]byte{0: []byte(content)}, 0, nil)
	w := newWriter(t, f.j)
	sv := &saver{}
	errRead := errors.New("read ids piece: connection reset")
	failures := 1
	resolve := func(id string) (job.RecordKey, bool, error) {
		if id == "r0000001" && failures > 0 {
			failures--
			return job.RecordKey{}, false, errRead
		}
		return ingesttest.Resolve(id)
	}
	j := *f.j
	res, err := f.ingester(w, sv).Ingest(context.Background(), &j, f.files, ingesttest.Parse, resolve)
	if !errors.Is(err, errRead) {
		t.Fatalf("first run: err = %v, want the resolver's error", err)
	}
	if res.BadLines != 0 {
		t.Fatalf("first run counted %d bad lines; a resolver failure is not the line's", res.BadLines)
	}
	j.Checkpoint = sv.last()
	res, err = f.ingester(w, sv).Ingest(context.Background(), &j, f.files, ingesttest.Parse, resolve)
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 2 || res.Failed != 1 || res.BadLines != 0 {
		t.Fatalf("retried run: counts %+v, want 2 succeeded, 1 failed, 0 bad", res.Checkpoint)
	}
	if got := len(w.snapshot()); got != 3 {
		t.Fatalf("%d records written, want 3", got)
	}
}
