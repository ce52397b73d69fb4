package local_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// storedJob is the job as the store holds it (parts and their inputs).
func storedJob(t *testing.T, s *suite, id string) *job.Job {
	t.Helper()
	j, err := s.l.Service.Core.Store.GetJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func readObject(t *testing.T, s *suite, uri string) []byte {
	t.Helper()
	rc, err := s.l.Blobs.Open(context.Background(), uri, 0)
	if err != nil {
		t.Fatalf("open %s: %v", uri, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readKept reads a kept list of j as ingest and retry_failed do.
func readKept(t *testing.T, s *suite, j *job.Job, uri string) []byte {
	t.Helper()
	rc, err := service.OpenKept(context.Background(), s.l.Service.Core.Blobs, j, uri)
	if err != nil {
		t.Fatalf("open %s: %v", uri, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unitsOf is how many check units the fan-out of job id planned.
func unitsOf(t *testing.T, s *suite, id string) int {
	t.Helper()
	objs, err := s.l.Blobs.List(context.Background(), blob.Join(storedJob(t, s, id).InputURI, "fanout", "check")+"/")
	if err != nil {
		t.Fatal(err)
	}
	return len(objs)
}

// A large file cut into byte ranges (cut mid-line, at a '\n', and inside a
// line with a BOM-free start) gives the parts a single pass gives: the same
// split, and byte for byte the same provider inputs, id list and caller
// records (ids generated around the taken ones alike).
func TestFanoutByteRangesGiveTheSinglePassParts(t *testing.T) {
	s := newSuiteWith(t, local.Options{Fanout: local.FanoutOptions{Workers: 4, UnitBytes: 64 << 10}})
	alice := s.client("alice")
	// 60,000 records: two Bedrock provider jobs (50,000 records each at most),
	// ids explicit, missing (generated) and taken from the generated form.
	body := jsonlLines(60_000, func(i int) string {
		switch {
		case i == 10:
			return `{"id":"r00003","prompt":"takes a generated id"}`
		case i%5 == 1:
			return fmt.Sprintf(`{"prompt":"fact %d"}`, i)
		case i%7 == 0:
			return "" // blank lines count as lines, hold no record
		case i%11 == 0:
			return fmt.Sprintf(`{"recordId":"n%d","modelInput":%s}`, i, nativeBody)
		}
		return fmt.Sprintf(`{"id":"q%d","messages":[{"role":"user","content":"fact %d"}]}`, i, i)
	})
	ids := uploadFiles(t, alice, body)
	single := submitFile(t, alice, map[string]any{"model": haiku, "input_upload_id": ids[0]})
	fanned := submitFile(t, alice, map[string]any{"model": haiku, "input_upload_ids": ids})
	fanoutDone(t, s, alice, fanned.JobID)
	a, b := storedJob(t, s, single.JobID), storedJob(t, s, fanned.JobID)
	if n := unitsOf(t, s, fanned.JobID); n < 20 {
		t.Fatalf("the fan-out ran %d check units; the test wants many byte ranges", n)
	}
	if a.RecordCount != b.RecordCount || len(a.Parts) != len(b.Parts) || len(a.Parts) < 2 || a.MaxInputLineBytes != b.MaxInputLineBytes {
		t.Fatalf("single pass: %d records, %d parts; fan-out: %d records, %d parts", a.RecordCount, len(a.Parts), b.RecordCount, len(b.Parts))
	}
	for i := range a.Parts {
		if a.Parts[i].RecordCount != b.Parts[i].RecordCount {
			t.Errorf("part %d: %d records single, %d fanned", i, a.Parts[i].RecordCount, b.Parts[i].RecordCount)
		}
		if !bytes.Equal(readObject(t, s, a.Parts[i].InputURI), readObject(t, s, b.Parts[i].InputURI)) {
			t.Errorf("part %d: the provider inputs differ", i)
		}
	}
	// The fan-out's lists are in pieces, one a part, read as one.
	for _, uri := range []func(*job.Job) string{service.IDsURI, service.InputsURI} {
		if !bytes.Equal(readKept(t, s, a, uri(a)), readKept(t, s, b, uri(b))) {
			t.Errorf("%s and %s differ", uri(a), uri(b))
		}
	}
	if _, err := s.l.Blobs.Stat(context.Background(), service.PieceURI(service.IDsURI(b), 1)); err != nil {
		t.Errorf("the fan-out's second part wrote no id piece: %v", err)
	}
}

// failedFanout waits for a fan-out that must fail and returns its error,
// checking nothing was submitted: no parts, no provider input written.
func failedFanout(t *testing.T, s *suite, id string) string {
	t.Helper()
	s.l.Settle()
	j := storedJob(t, s, id)
	if j.Status != job.StatusFailed || len(j.Parts) != 0 {
		t.Fatalf("job %s: status %s, %d parts; want failed with none", id, j.Status, len(j.Parts))
	}
	objs, err := s.l.Blobs.List(context.Background(), j.InputURI+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if strings.Contains(o.URI, "/part-") || strings.HasSuffix(o.URI, "/ids.jsonl") {
			t.Errorf("%s written for a job that failed validation", o.URI)
		}
	}
	return j.Error
}

// A duplicate id across two files is found by the id shards and named by
// both places: file and line in each.
func TestFanoutDuplicateAcrossFilesNamesBothPlaces(t *testing.T) {
	s := newSuiteWith(t, local.Options{Fanout: local.FanoutOptions{Workers: 2, UnitBytes: 700}})
	alice := s.client("alice")
	with := func(f, n, at int, id string) string {
		return jsonlLines(n, func(i int) string {
			if i == at {
				return fmt.Sprintf(`{"id":%q,"prompt":"again"}`, id)
			}
			return fmt.Sprintf(`{"id":"f%d-%d","prompt":"p"}`, f, i)
		})
	}
	ids := uploadFiles(t, alice, with(0, 80, 4, "twice"), with(1, 80, 56, "twice"))
	h := submitFile(t, alice, map[string]any{"model": haiku, "input_upload_ids": ids})
	msg := failedFanout(t, s, h.JobID)
	want := fmt.Sprintf(`file %s line 57: duplicate id "twice" (also file %s line 5)`, ids[1], ids[0])
	if !strings.Contains(msg, want) || !strings.Contains(msg, "1 of 160 lines are invalid") || !strings.Contains(msg, "input_upload_ids") {
		t.Fatalf("error %q lacks %q", msg, want)
	}
}

// An invalid line in the third of five files fails the job before anything
// is submitted, naming the file and the line (counted across its ranges).
func TestFanoutInvalidLineInThirdOfFiveFiles(t *testing.T) {
	s := newSuiteWith(t, local.Options{Fanout: local.FanoutOptions{Workers: 3, UnitBytes: 900}})
	alice := s.client("alice")
	var bodies []string
	for f := range 5 {
		bodies = append(bodies, jsonlLines(60, func(i int) string {
			if f == 2 && i == 47 {
				return `{"id":"bad","prompt":"p","temprature":1}`
			}
			return fmt.Sprintf(`{"id":"f%d-%d","prompt":"p"}`, f, i)
		}))
	}
	ids := uploadFiles(t, alice, bodies...)
	h := submitFile(t, alice, map[string]any{"model": haiku, "input_upload_ids": ids})
	msg := failedFanout(t, s, h.JobID)
	want := fmt.Sprintf(`file %s line 48: unknown field "temprature"`, ids[2])
	if !strings.Contains(msg, want) || !strings.Contains(msg, "1 of 300 lines are invalid; nothing was submitted") {
		t.Fatalf("error %q lacks %q", msg, want)
	}
}

// killingBlobs fails the first write of each object named by a suffix: the
// unit writing it dies after it wrote part of its share.
type killingBlobs struct {
	*fsblob.Store
	suffixes []string
	mu       sync.Mutex
	done     map[string]bool
	killed   int
}

func (k *killingBlobs) Put(ctx context.Context, uri string, r io.Reader, ct string) (int64, error) {
	k.mu.Lock()
	kill := false
	for _, sfx := range k.suffixes {
		if strings.HasSuffix(uri, sfx) && !k.done[sfx] {
			k.done[sfx], kill = true, true
			k.killed++
		}
	}
	k.mu.Unlock()
	if kill {
		io.Copy(io.Discard, io.LimitReader(r, 100)) // cut mid-write
		return 0, fmt.Errorf("killed mid-way writing %s", uri)
	}
	return k.Store.Put(ctx, uri, r, ct)
}

// twiceQueue delivers every unit twice, as SQS may (at-least-once).
type twiceQueue struct{ q transfer.UnitQueue }

func (d twiceQueue) SendUnits(ctx context.Context, units []transfer.Unit) error {
	if err := d.q.SendUnits(ctx, units); err != nil {
		return err
	}
	return d.q.SendUnits(ctx, units)
}

// A unit killed after writing part of its share (a check unit, a part's
// writer) is delivered again and writes the same share; with every unit
// delivered twice besides, the job's count is exact and every record runs once.
func TestFanoutKilledUnitAndRedeliveriesGiveExactCounts(t *testing.T) {
	dir := t.TempDir()
	fs, err := fsblob.New(filepath.Join(dir, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	// A check unit dies after writing its record sizes; the part's writer
	// after writing its provider input, before its id piece.
	kb := &killingBlobs{Store: fs, done: map[string]bool{},
		suffixes: []string{"/fanout/ids/0000000/0000003.bin", "/ids/part-00000.jsonl"}}
	s := newSuiteWith(t, local.Options{Adapters: local.Adapters{Blobs: kb},
		Fanout: local.FanoutOptions{Workers: 4, UnitBytes: 800}})
	tr := s.l.Service.Transfer
	tr.Units = twiceQueue{tr.Units}
	alice := s.client("alice")
	ids := uploadFiles(t, alice, fanoutFile(0, 90), fanoutFile(1, 110))
	h := submitFile(t, alice, map[string]any{"model": haiku, "input_upload_ids": ids})
	j := fanoutDone(t, s, alice, h.JobID)
	if kb.killed != 2 {
		t.Fatalf("setup: units were killed %d times, want 2", kb.killed)
	}
	if j.RecordCount != 200 || j.Error != "" {
		t.Fatalf("after a killed unit and redeliveries: %+v", j)
	}
	wantFileIDs(t, fanoutResults(t, s, alice, h.JobID), 90, 110)
	if v := call[mcpserver.JobView](t, alice, "get_job", map[string]any{"job_id": h.JobID}); v.Succeeded+v.Failed != 200 {
		t.Errorf("the job counts %d succeeded + %d failed, want 200", v.Succeeded, v.Failed)
	}
}
