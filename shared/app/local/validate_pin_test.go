package local_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// swapAfterFirstRead replaces the object at uri with swap as soon as the
// first reader of it is closed: a caller reusing its upload link between
// validation's first pass and the next.
type swapAfterFirstRead struct {
	local.Objects
	uri, swap string
	once      sync.Once
}

type onClose struct {
	io.ReadCloser
	fn func()
}

func (c onClose) Close() error { err := c.ReadCloser.Close(); c.fn(); return err }

func (s *swapAfterFirstRead) wrap(uri string, rc io.ReadCloser, err error) (io.ReadCloser, error) {
	if err != nil || uri != s.uri {
		return rc, err
	}
	return onClose{rc, func() {
		s.once.Do(func() {
			if _, err := s.Objects.Put(context.Background(), s.uri, strings.NewReader(s.swap), "application/jsonl"); err != nil {
				panic(err)
			}
		})
	}}, nil
}

func (s *swapAfterFirstRead) Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error) {
	rc, err := s.Objects.Open(ctx, uri, offset)
	return s.wrap(uri, rc, err)
}

func (s *swapAfterFirstRead) OpenVersion(ctx context.Context, uri string, v blob.Version) (io.ReadCloser, error) {
	rc, err := s.Objects.OpenVersion(ctx, uri, v)
	return s.wrap(uri, rc, err)
}

// submitHeldFile stores content at uri and submits it as alice's file job,
// its validation event held back so the test runs the validation itself.
func submitHeldFile(t *testing.T, s *suite, uri, content string) *job.Job {
	t.Helper()
	ctx := context.Background()
	if _, err := s.l.Service.Batch.Blobs.Put(ctx, uri, strings.NewReader(content), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	held := *s.l.Service.Core
	held.Bus = noBus{}
	j, err := graph.Transfer(&held, s.l.Service.Batch).SubmitFile(ctx,
		transfer.FileSubmitRequest{SubmitRequest: batch.SubmitRequest{Owner: "alice", Model: haiku}, InputURI: uri})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestValidateFilePinsTheObject: the file is swapped for one with 150
// copies of one id after validation's first pass; the job fails saying the
// file changed, and nothing reaches the provider (before: the second pass
// wrote the swapped file, duplicate ids and all).
func TestValidateFilePinsTheObject(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	ctx := context.Background()
	uri := "s3://mcpbatch-local/inputs/" + service.OwnerTag("alice") + "/swap.jsonl"
	good := jsonlLines(150, func(i int) string { return fmt.Sprintf(`{"id":"r%d","prompt":"p"}`, i) })
	dups := jsonlLines(150, func(i int) string { return `{"id":"same","prompt":"p"}` })
	j := submitHeldFile(t, s, uri, good)
	swapping := *s.l.Service.Core
	swapping.Blobs = &swapAfterFirstRead{Objects: s.l.Blobs, uri: uri, swap: dups}
	if err := graph.Transfer(&swapping, s.l.Service.Batch).ValidateFile(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	got := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": j.ID})
	if got.Status != "failed" || !strings.Contains(got.Error, "changed") || !strings.Contains(got.Error, "input_uri") {
		t.Fatalf("job after a swap between passes: %s %q, want failed naming input_uri and the change", got.Status, got.Error)
	}
	if n := len(s.l.Sim.Statuses()); n != 0 {
		t.Errorf("the simulator holds %d provider jobs, want none", n)
	}
}

// flakyReads throttles the first Stat and the first open of uri, and cuts
// every read of it after 1,000 bytes with a reset connection, as S3 does
// under load (throttling past the SDK's own retries; a body cut mid-read,
// which the SDK does not retry).
type flakyReads struct {
	local.Objects
	uri     string
	mu      sync.Mutex
	stats   int
	opens   int
	resumes int
}

var errFlaky = errors.New("read: connection reset by peer")

type cutAfter struct {
	io.ReadCloser
	left int
}

func (c *cutAfter) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errFlaky
	}
	n, err := c.ReadCloser.Read(p[:min(len(p), c.left)])
	c.left -= n
	return n, err
}

func (f *flakyReads) Stat(ctx context.Context, uri string) (blob.Version, error) {
	f.mu.Lock()
	f.stats++
	first := f.stats == 1
	f.mu.Unlock()
	if uri == f.uri && first {
		return blob.Version{}, errors.New("api error SlowDown: Please reduce your request rate")
	}
	return f.Objects.Stat(ctx, uri)
}

func (f *flakyReads) OpenVersion(ctx context.Context, uri string, v blob.Version) (io.ReadCloser, error) {
	return f.OpenVersionAt(ctx, uri, v, 0)
}

func (f *flakyReads) OpenVersionAt(ctx context.Context, uri string, v blob.Version, off int64) (io.ReadCloser, error) {
	if uri != f.uri {
		return f.Objects.OpenVersionAt(ctx, uri, v, off)
	}
	f.mu.Lock()
	f.opens++
	first := f.opens == 1
	if off > 0 {
		f.resumes++
	}
	f.mu.Unlock()
	if first {
		return nil, errors.New("api error SlowDown: Please reduce your request rate")
	}
	rc, err := f.Objects.OpenVersionAt(ctx, uri, v, off)
	if err != nil {
		return nil, err
	}
	return &cutAfter{ReadCloser: rc, left: 1000}, nil
}

// TestValidateFileRidesOutReadFaults: a throttled Stat and open and reads cut
// every 1,000 bytes do not fail or stall validation: the reads resume on the
// pinned version where they stopped, and the job runs exactly the file's 150
// records (before: the first throttle failed the validation run, and a cut
// read failed each pass, so after the event's retries the job failed).
func TestValidateFileRidesOutReadFaults(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	ctx := context.Background()
	uri := "s3://mcpbatch-local/inputs/" + service.OwnerTag("alice") + "/flaky.jsonl"
	good := jsonlLines(150, func(i int) string { return fmt.Sprintf(`{"id":"r%d","prompt":"p"}`, i) })
	j := submitHeldFile(t, s, uri, good)
	flaky := *s.l.Service.Core
	reads := &flakyReads{Objects: s.l.Blobs, uri: uri}
	flaky.Blobs = reads
	if err := graph.Transfer(&flaky, s.l.Service.Batch).ValidateFile(ctx, j.ID); err != nil {
		t.Fatalf("validation under transient read faults: %v", err)
	}
	got := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": j.ID})
	if got.Status == "failed" || got.RecordCount != 150 {
		t.Fatalf("job after validation: %s, %d records (%q); want it running the 150 records", got.Status, got.RecordCount, got.Error)
	}
	if reads.resumes < len(good)/1000 {
		t.Errorf("%d resumed reads of a %d-byte file cut every 1,000 bytes", reads.resumes, len(good))
	}
}

// swapAtSecondPassCut cuts the second pass's read of uri after 1,000 bytes
// and replaces the file before the read resumes, as a caller re-uploading
// through the same link while validation reads would.
type swapAtSecondPassCut struct {
	local.Objects
	uri     string
	swap    string
	mu      sync.Mutex
	starts  int
	swapped bool
}

func (f *swapAtSecondPassCut) OpenVersion(ctx context.Context, uri string, v blob.Version) (io.ReadCloser, error) {
	return f.OpenVersionAt(ctx, uri, v, 0)
}

func (f *swapAtSecondPassCut) OpenVersionAt(ctx context.Context, uri string, v blob.Version, off int64) (io.ReadCloser, error) {
	if uri != f.uri {
		return f.Objects.OpenVersionAt(ctx, uri, v, off)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if off == 0 {
		f.starts++
	} else if !f.swapped {
		f.swapped = true
		if _, err := f.Objects.Put(ctx, uri, strings.NewReader(f.swap), "application/jsonl"); err != nil {
			return nil, err
		}
	}
	rc, err := f.Objects.OpenVersionAt(ctx, uri, v, off)
	if err != nil || f.starts != 2 || off > 0 {
		return rc, err
	}
	return &cutAfter{ReadCloser: rc, left: 1000}, nil
}

// TestValidateFileSwapAtSecondPassResume: a file replaced while the second
// pass's cut read resumes fails the job naming input_uri, as a replacement
// between the passes does; nothing reaches the provider (before: the error
// lost its kind, the job stayed validating and the event's retry submitted
// the replacement).
func TestValidateFileSwapAtSecondPassResume(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	ctx := context.Background()
	uri := "s3://mcpbatch-local/inputs/" + service.OwnerTag("alice") + "/swap-resume.jsonl"
	good := jsonlLines(150, func(i int) string { return fmt.Sprintf(`{"id":"r%d","prompt":"p"}`, i) })
	other := jsonlLines(120, func(i int) string { return fmt.Sprintf(`{"id":"x%d","prompt":"q"}`, i) })
	j := submitHeldFile(t, s, uri, good)
	swapping := *s.l.Service.Core
	sw := &swapAtSecondPassCut{Objects: s.l.Blobs, uri: uri, swap: other}
	swapping.Blobs = sw
	v := graph.Transfer(&swapping, s.l.Service.Batch)
	_ = v.ValidateFile(ctx, j.ID)
	_ = v.ValidateFile(ctx, j.ID) // the event's retry
	got := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": j.ID})
	if !sw.swapped || got.Status != "failed" || !strings.Contains(got.Error, "changed") || !strings.Contains(got.Error, "input_uri") {
		t.Fatalf("job after a swap at the second pass's resume (swapped %v): %s %q, want failed naming input_uri and the change", sw.swapped, got.Status, got.Error)
	}
	if n := len(s.l.Sim.Statuses()); n != 0 {
		t.Errorf("the simulator holds %d provider jobs, want none", n)
	}
}
