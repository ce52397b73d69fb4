package batch

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// pinnedCounter is fsblob with the bytes read through pinned opens (what
// the digest is computed from) counted.
type pinnedCounter struct {
	*fsblob.Store
	n atomic.Int64
}

func (c *pinnedCounter) OpenVersion(ctx context.Context, uri string, v blob.Version) (io.ReadCloser, error) {
	rc, err := c.Store.OpenVersion(ctx, uri, v)
	return counted(rc, err, &c.n)
}

// TestReuseKeysS3MediaByDigest: a record's s3:// image is in its reuse key
// by the digest of its bytes. The same URI over a replaced object is not
// reused; the same bytes under another URI (or put again under the same
// one) are; an object that cannot be read keys nothing; and the digest of
// an unchanged object is remembered by its version, not read again.
func TestReuseKeysS3MediaByDigest(t *testing.T) {
	ctx := context.Background()
	st, fs := localdeps.New(t)
	blobs := &pinnedCounter{Store: fs}
	s := &Service{Store: st, Blobs: blobs, Bucket: "s3://data"}
	area := UploadArea(s.Bucket, "alice")
	put := func(name string, b []byte) {
		t.Helper()
		if _, err := fs.Put(ctx, area+name, bytes.NewReader(b), "image/png"); err != nil {
			t.Fatal(err)
		}
	}
	zero := 0.0
	req := func(uri string) *SubmitRequest {
		return &SubmitRequest{Owner: "alice", Provider: "bedrock", Model: "m", Params: job.Params{Temperature: &zero}, Reuse: true,
			Records: []job.Input{{ID: "r1", Messages: s3Blocks(uri)}}}
	}
	other := append(bytes.Clone(png1x1), 0) // other bytes: a trailing byte more

	// The first job answers the record and points its key at it.
	put("a.png", png1x1)
	first := req(area + "a.png")
	if found, err := s.findReused(ctx, first); err != nil || len(found) != 0 {
		t.Fatalf("empty cache: found %v, %v", found, err)
	}
	now := time.Now()
	j := &job.Job{ID: "job1", Owner: "alice", Mode: job.ModeOnDemand, Status: job.StatusCompleted, RecordCount: 1, Shards: job.ShardsFor(1),
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := st.PutRecords(ctx, j.RecordSet(), []job.Record{{JobID: j.ID, ID: "r1", Status: job.RecordSucceeded, Output: "a red dot", ExpiresAt: j.ExpiresAt}}); err != nil {
		t.Fatal(err)
	}
	if err := s.writeEntries(ctx, first, j); err != nil {
		t.Fatal(err)
	}
	readFirst := blobs.n.Load()
	if readFirst != int64(len(png1x1)) {
		t.Errorf("first digest read %d bytes, want the object's %d", readFirst, len(png1x1))
	}

	for _, tc := range []struct {
		name   string
		change func()
		uri    string
		reused bool
		reads  int64 // object bytes read for the digest
	}{
		{"unchanged", func() {}, "a.png", true, 0},
		{"same bytes, other URI", func() { put("copy.png", png1x1) }, "copy.png", true, int64(len(png1x1))},
		{"replaced behind the same URI", func() { put("a.png", other) }, "a.png", false, int64(len(other))},
		{"same bytes put again", func() { put("a.png", png1x1) }, "a.png", true, int64(len(png1x1))},
		{"missing object", func() {}, "gone.png", false, 0},
		{"outside the upload area", func() {}, "../bob/a.png", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			before := blobs.n.Load()
			r := req(area + tc.uri)
			found, err := s.findReused(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(found) == 1; got != tc.reused {
				t.Errorf("reused = %v, want %v", got, tc.reused)
			}
			if got := blobs.n.Load() - before; got != tc.reads {
				t.Errorf("read %d bytes of the object, want %d", got, tc.reads)
			}
			if _, keyed := r.keys["r1"]; keyed != (tc.uri != "gone.png" && tc.uri != "../bob/a.png") {
				t.Errorf("keyed = %v", keyed)
			}
		})
	}
}
