package service

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// TestKeyRecords: a new job is keyed by ordinal; a retry keeps its parent's
// ordinals (read back by position, nothing past them), a retry of a job
// keyed by id is keyed by id, and a list of the wrong length is refused.
func TestKeyRecords(t *testing.T) {
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	newJob := func(id string, n int) *job.Job {
		return &job.Job{ID: id, RecordCount: n, InputURI: "s3://bucket/input/" + id}
	}

	fresh := newJob("fresh", 3)
	if err := KeyRecords(t.Context(), blobs, fresh, nil, false); err != nil || !fresh.InputOrder || fresh.KeptOrdinals {
		t.Fatalf("new job: %v, InputOrder %v KeptOrdinals %v; want keyed by its positions", err, fresh.InputOrder, fresh.KeptOrdinals)
	}
	pos, err := Ordinals(t.Context(), blobs, fresh)
	if o, ok := pos(2); err != nil || o != 2 || !ok {
		t.Fatalf("ordinal of position 2: %d %v %v", o, ok, err)
	}

	retry := newJob("retry", 3)
	if err := KeyRecords(t.Context(), blobs, retry, []int{4, 9, 1207}, false); err != nil || !retry.InputOrder || !retry.KeptOrdinals {
		t.Fatalf("retry: %v, InputOrder %v KeptOrdinals %v", err, retry.InputOrder, retry.KeptOrdinals)
	}
	kept, err := Ordinals(t.Context(), blobs, retry)
	if err != nil {
		t.Fatal(err)
	}
	for pos, want := range []int{4, 9, 1207} {
		if o, ok := kept(pos); o != want || !ok {
			t.Errorf("kept ordinal of position %d: %d %v, want %d", pos, o, ok, want)
		}
	}
	if _, ok := kept(3); ok {
		t.Error("an ordinal past the kept list")
	}

	old := newJob("old-retry", 2)
	if err := KeyRecords(t.Context(), blobs, old, []int{1, 2}, true); err != nil || old.InputOrder || old.KeptOrdinals {
		t.Fatalf("retry of a job keyed by id: %v, InputOrder %v KeptOrdinals %v", err, old.InputOrder, old.KeptOrdinals)
	}
	if err := KeyRecords(t.Context(), blobs, newJob("short", 3), []int{1}, false); err == nil {
		t.Fatal("1 ordinal for 3 records accepted")
	}
	lost := newJob("lost", 1)
	lost.InputOrder, lost.KeptOrdinals = true, true
	if _, err := Ordinals(t.Context(), blobs, lost); err == nil {
		t.Fatal("a missing ordinal list read as positions")
	}
}
