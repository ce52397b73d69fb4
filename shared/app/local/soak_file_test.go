package local_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// File submits: a JSONL input file under the caller's inputs folder, checked
// by the validate step in two passes over one pinned version, with S3 faults
// on the validation's reads of it.
const (
	fS3Throttle  = "S3 reads of an input file throttled (503 SlowDown)"
	fS3ReadErr   = "S3 input reads cut mid-stream (connection reset)"
	fSwapInput   = "input file replaced between validation passes"
	fDeleteInput = "input file deleted between validation passes"
)

// errSlowDown and errReset are what the S3 client returns for a throttled
// request and a body cut off mid-read.
var (
	errSlowDown = errors.New("operation error S3: GetObject, https response error StatusCode: 503, api error SlowDown: Please reduce your request rate")
	errReset    = errors.New("read tcp 127.0.0.1:41234->127.0.0.1:9000: read: connection reset by peer")
)

func soakInputURI(l *local.Suite, k int) string {
	return blob.Join(l.Service.Core.Bucket, "inputs", service.OwnerTag(soakOwner), fmt.Sprintf("soak-%03d.jsonl", k))
}

// soakFile is the input file of planned job k (n records), and swapped its
// replacement: other ids and another count, so a mix of the two shows.
func soakFile(k, n int, swapped bool) []byte {
	var b bytes.Buffer
	if swapped {
		n += 7
	}
	for i := range n {
		id := soakRecordID(k, i)
		if swapped {
			id = fmt.Sprintf("j%03d-swap-%03d", k, i)
		}
		fmt.Fprintf(&b, `{"id":%q,"prompt":"Soak file %d, fact #%d"}`+"\n", id, k, i)
	}
	return b.Bytes()
}

// soakFileK is the planned job of an input file URI (-1 when it is none).
func soakFileK(uri string) int {
	name := uri[strings.LastIndexByte(uri, '/')+1:]
	k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "soak-"), ".jsonl"))
	if err != nil || !strings.HasPrefix(name, "soak-") {
		return -1
	}
	return k
}

// chaosBlobs is the transfer service's object store with faults on the
// validation's reads of input files (Stat and OpenVersion of the pinned
// version): throttling, a body cut mid-read, and the file replaced or
// deleted once a pass over it ended.
type chaosBlobs struct {
	local.Objects
	c      *chaos
	prefix string
	// records is how many records each planned file job has (by k).
	records map[int]int
	mu      sync.Mutex
	swapped map[string]bool
	units   *unitKills
}

func (b *chaosBlobs) faulty(uri string) bool { return strings.HasPrefix(uri, b.prefix) }

func (b *chaosBlobs) throttled(op, uri string) bool {
	key := fmt.Sprintf("%s#%d", uri, b.c.nth("s3-"+op, uri))
	if b.c.roll("throttle-s3", op+key) >= b.c.rate("throttle_s3") {
		return false
	}
	b.c.count(fS3Throttle)
	b.c.note(b.jobOf(uri), op+" of the input file throttled")
	return true
}

// jobOf names the job for the problem report by its file (under the
// caller's inputs: soak-007.jsonl, or soak-009/part-1.jsonl in a folder).
func (b *chaosBlobs) jobOf(uri string) string {
	return "file " + strings.TrimPrefix(uri, b.prefix)
}

func (b *chaosBlobs) Stat(ctx context.Context, uri string) (blob.Version, error) {
	if b.faulty(uri) && b.throttled("stat", uri) {
		return blob.Version{}, fmt.Errorf("stat %s: %w", uri, errSlowDown)
	}
	return b.Objects.Stat(ctx, uri)
}

func (b *chaosBlobs) OpenVersion(ctx context.Context, uri string, v blob.Version) (io.ReadCloser, error) {
	return b.OpenVersionAt(ctx, uri, v, 0)
}

func (b *chaosBlobs) OpenVersionAt(ctx context.Context, uri string, v blob.Version, offset int64) (io.ReadCloser, error) {
	if !b.faulty(uri) {
		return b.Objects.OpenVersionAt(ctx, uri, v, offset)
	}
	if b.throttled("get", uri) {
		return nil, fmt.Errorf("get %s: %w", uri, errSlowDown)
	}
	rc, err := b.Objects.OpenVersionAt(ctx, uri, v, offset)
	if err != nil {
		return rc, err
	}
	key := fmt.Sprintf("%s#%d", uri, b.c.nth("s3-read", uri))
	out := &faultyBody{ReadCloser: rc, cut: -1, close: func() { b.afterPass(uri) }}
	if b.c.roll("s3-read-error", key) < b.c.rate("s3_read_error") {
		out.cut = int64(b.c.roll("s3-read-at", key) * float64(v.Size-offset))
		b.c.count(fS3ReadErr)
		b.c.note(b.jobOf(uri), fmt.Sprintf("read of the input file cut at byte %d of %d", offset+out.cut, v.Size))
	}
	return out, nil
}

// afterPass replaces or deletes the file, once, when a pass over it ended.
func (b *chaosBlobs) afterPass(uri string) {
	k := soakFileK(uri)
	if k < 0 || b.c.roll("swap-input", uri) >= b.c.rate("swap_input") {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.swapped[uri] {
		return
	}
	b.swapped[uri] = true
	ctx := context.Background()
	if b.c.roll("swap-how", uri) < 0.25 {
		b.c.count(fDeleteInput)
		b.c.note(b.jobOf(uri), "input file deleted after a pass")
		_ = b.Objects.Delete(ctx, uri)
		return
	}
	b.c.count(fSwapInput)
	b.c.note(b.jobOf(uri), "input file replaced after a pass")
	_, _ = b.Objects.Put(ctx, uri, bytes.NewReader(soakFile(k, b.records[k], true)), "application/jsonl")
}

// faultyBody fails with a reset once cut bytes were read (cut < 0: never).
type faultyBody struct {
	io.ReadCloser
	cut, n int64
	close  func()
	once   sync.Once
}

func (f *faultyBody) Read(p []byte) (int, error) {
	if f.cut >= 0 {
		if f.n >= f.cut {
			return 0, errReset
		}
		p = p[:min(int64(len(p)), f.cut-f.n)]
	}
	n, err := f.ReadCloser.Read(p)
	f.n += int64(n)
	return n, err
}

func (f *faultyBody) Close() error {
	err := f.ReadCloser.Close()
	f.once.Do(f.close)
	return err
}

// wrapFileBlobs puts chaosBlobs under the transfer service (its own copy of
// the core, so no other flow sees the faults).
func (c *chaos) wrapFileBlobs(l *local.Suite, plan []soakItem) {
	records := map[int]int{}
	for _, it := range plan {
		if it.kind == kFile {
			records[it.k] = it.records
		}
	}
	l.Service.Transfer.Blobs = &chaosBlobs{Objects: l.Blobs, c: c, prefix: soakInputURI(l, 0)[:strings.LastIndexByte(soakInputURI(l, 0), '/')+1],
		records: records, swapped: map[string]bool{}, units: &unitKills{c: c, killed: map[string]bool{}}}
}

// checkFileJob: a file job either ran exactly one version of its file (the
// original, or the replacement when the replacement came before a pass
// completed), every record once, or failed saying the file changed with
// nothing submitted; never a part of a file or a mix of two.
func checkFileJob(t *testing.T, ctx context.Context, l *local.Suite, r *soakReport, j *job.Job, it soakItem) {
	t.Helper()
	r.c.merge("file "+soakInputURI(l, it.k)[strings.LastIndexByte(soakInputURI(l, it.k), '/')+1:], j.ID)
	var ids []string
	for _, rec := range storedRecords(t, ctx, l, j) {
		ids = append(ids, rec.ID)
	}
	orig, swapped := map[string]bool{}, map[string]bool{}
	for i := range it.records {
		orig[soakRecordID(it.k, i)] = true
	}
	for i := range it.records + 7 {
		swapped[fmt.Sprintf("j%03d-swap-%03d", it.k, i)] = true
	}
	tag := fmt.Sprintf("job %s %q (%s, %s)", j.ID, j.Name, kFile, j.Status)
	// A file the fault deleted before its job read it through cannot run:
	// failing and saying so is the documented end (nothing to count).
	deleted := j.Status == job.StatusFailed && strings.Contains(j.Error, "deleted after submit") &&
		strings.Contains(r.c.history(j.ID), "input file deleted")
	changed := j.Status == job.StatusFailed && (strings.Contains(j.Error, "changed") || deleted)
	want := orig
	switch {
	case changed:
		r.fileRefused++
		want = map[string]bool{}
		for _, p := range j.Parts {
			if p.Ref != "" {
				r.double += p.RecordCount
				r.jobProblem("file submitted after it changed", j.ID, fmt.Sprintf("%s: part %d is provider job %s", tag, p.Index+1, p.Ref))
			}
		}
	case anyIn(ids, swapped):
		r.fileSwapped++
		want = swapped
	case j.Status == job.StatusFailed:
		r.jobProblem("file job failed", j.ID, fmt.Sprintf("%s: %s", tag, j.Error))
	}
	if !changed && j.Status != job.StatusCancelled && j.RecordCount != len(want) {
		r.jobProblem("file job holds part of a file", j.ID, fmt.Sprintf("%s: %d records, the file has %d", tag, j.RecordCount, len(want)))
	}
	r.submitted += len(want)
	checkJob(t, ctx, l, r, j, kFile, want)
}

func anyIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if set[id] {
			return true
		}
	}
	return false
}
