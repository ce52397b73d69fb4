package local_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// Jobs over many files: several uploads (input_upload_ids) or a folder of
// the caller's inputs (an s3://…/ input_uri), validated by the fan-out over
// make dev's validation queue. Its units are delivered twice or late (so
// later ones overtake them) and killed once each, before they wrote their
// share or right after their done marker; the queue delivers a failed unit
// again, as SQS does once its visibility timeout passes.
const (
	fUnitDup   = "validation units delivered twice (the copy late)"
	fUnitDelay = "validation units delivered late (reordered)"
	// fUnitBefore: a check unit dies before any of its share (its record
	// sizes) is written, a later phase's after its outputs, before its marker.
	fUnitBefore = "validation units killed before their done marker"
	fUnitAfter  = "validation units killed after writing their done marker"
	fUnitDead   = "validation units dead-lettered (every delivery failed)"
)

// soakUnitBytes cuts each file of a many-file job into byte ranges of a few
// dozen lines, so units of one file split it at line boundaries.
const soakUnitBytes = 1 << 10

// soakFilesOf is how many files planned job k's records are spread over (2 to 4).
func soakFilesOf(c *chaos, k int) int { return 2 + int(c.roll("files", fmt.Sprint(k))*3) }

// soakFilePart is file f of nf of planned job k (n records in all): its
// share of the job's records, numbered as one file would number them.
func soakFilePart(k, n, f, nf int) []byte {
	var b bytes.Buffer
	for i := f * n / nf; i < (f+1)*n/nf; i++ {
		fmt.Fprintf(&b, `{"id":%q,"prompt":"Soak file %d, fact #%d"}`+"\n", soakRecordID(k, i), k, i)
	}
	return b.Bytes()
}

// soakFolder is the folder of planned job k's files, under the caller's
// inputs (so chaosBlobs's S3 read faults apply to them).
func soakFolder(l *local.Suite, k int) string {
	return blob.Join(l.Service.Core.Bucket, "inputs", service.OwnerTag(soakOwner), soakName(k)) + "/"
}

// submitSoakFiles puts the files of a many-file job and submits them.
func submitSoakFiles(ctx context.Context, l *local.Suite, c *chaos, it soakItem, req batch.SubmitRequest) (string, error) {
	tr := l.Service.Transfer
	fr := transfer.FileSubmitRequest{SubmitRequest: req}
	nf := soakFilesOf(c, it.k)
	for f := range nf {
		uri := blob.Join(soakFolder(l, it.k), fmt.Sprintf("part-%d.jsonl", f))
		if it.kind == kUploads {
			up := tr.NewUpload(soakOwner)
			uri = up.URI
			fr.UploadIDs = append(fr.UploadIDs, up.ID)
		}
		if _, err := l.Blobs.Put(ctx, uri, bytes.NewReader(soakFilePart(it.k, it.records, f, nf)), "application/jsonl"); err != nil {
			return "", err
		}
	}
	if it.kind == kFolder {
		fr.InputURI = soakFolder(l, it.k)
	}
	j, err := tr.SubmitFile(ctx, fr)
	if j == nil {
		return "", err
	}
	return j.ID, err
}

// chaosUnits is the transfer service's validation queue with some units
// delivered twice (the copy late) or late.
type chaosUnits struct {
	next transfer.UnitQueue
	c    *chaos
}

func (q *chaosUnits) SendUnits(ctx context.Context, units []transfer.Unit) error {
	var now []transfer.Unit
	for _, u := range units {
		key := fmt.Sprintf("%s/%s/%d", u.JobID, u.Kind, u.Index)
		key = fmt.Sprintf("%s#%d", key, q.c.nth("unit-send", key))
		x, dup, delay := q.c.roll("unit-send", key), q.c.rate("dup"), q.c.rate("delay")
		late := time.Duration(20+q.c.roll("unit-late", key)*280) * time.Millisecond
		switch {
		case x < dup:
			q.c.count(fUnitDup)
			q.c.note(u.JobID, fmt.Sprintf("%s unit %d delivered twice", u.Kind, u.Index))
			now = append(now, u)
			q.later(u, late)
		case x < dup+delay:
			q.c.count(fUnitDelay)
			q.c.note(u.JobID, fmt.Sprintf("%s unit %d delivered late", u.Kind, u.Index))
			q.later(u, late)
		default:
			now = append(now, u)
		}
	}
	if len(now) == 0 {
		return nil
	}
	return q.next.SendUnits(ctx, now)
}

// later sends u after d; once the suite closed its queue refuses it.
func (q *chaosUnits) later(u transfer.Unit, d time.Duration) {
	time.AfterFunc(d, func() { _ = q.next.SendUnits(context.Background(), []transfer.Unit{u}) })
}

// wrapUnits puts chaosUnits in front of make dev's validation queue.
func (c *chaos) wrapUnits(l *local.Suite) {
	l.Service.Transfer.Units = &chaosUnits{next: l.Service.Transfer.Units, c: c}
}

// unitKills kills each fan-out unit at most once (so its redelivery, within
// config.ValidateQueueReceives, finishes): before it wrote anything of its
// share, or once its done marker is written, before it says so.
type unitKills struct {
	c      *chaos
	mu     sync.Mutex
	killed map[string]bool
}

// The objects a unit writes under its job's fan-out folder, by phase and
// unit: done markers, and a check unit's record sizes and id shards.
var (
	unitMarker = regexp.MustCompile(`^(.*)/fanout/(check|dups|finish|write)/[0-9]+/([0-9]+)\.json$`)
	unitShare  = regexp.MustCompile(`^(.*)/fanout/(?:sizes|ids/[0-9]+)/([0-9]+)\.bin$`)
)

// unitOf names the unit writing uri ("" for none) and whether uri is its marker.
func unitOf(uri string) (jobArea, unit string, marker bool) {
	if m := unitMarker.FindStringSubmatch(uri); m != nil {
		n, _ := strconv.Atoi(m[3])
		return m[1], fmt.Sprintf("%s unit %d", m[2], n), true
	}
	if m := unitShare.FindStringSubmatch(uri); m != nil {
		n, _ := strconv.Atoi(m[2])
		return m[1], fmt.Sprintf("check unit %d", n), false
	}
	return "", "", false
}

// put writes uri through write unless the unit writing it dies here.
func (k *unitKills) put(uri string, r io.Reader, write func() (int64, error)) (int64, error) {
	area, unit, marker := unitOf(uri)
	key := area + " " + unit
	if area == "" || k.c.roll("kill-unit", key) >= k.c.rate("kill_unit") {
		return write()
	}
	after := k.c.roll("kill-unit-when", key) < 0.5
	if after && !marker {
		return write()
	}
	k.mu.Lock()
	if k.killed[key] {
		k.mu.Unlock()
		return write()
	}
	k.killed[key] = true
	k.mu.Unlock()
	jobID := path.Base(area) // a job's input area ends in its id
	if after {
		n, err := write()
		if err != nil {
			return n, err
		}
		k.c.count(fUnitAfter)
		k.c.note(jobID, unit+" killed after writing its done marker")
		return n, fmt.Errorf("%w after writing %s", errKilled, uri)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r, 64)) // cut mid-write
	k.c.count(fUnitBefore)
	k.c.note(jobID, unit+" killed before its done marker")
	return 0, fmt.Errorf("%w writing %s", errKilled, uri)
}

// Put is chaosBlobs's write: the fan-out units' writes meet unitKills.
func (b *chaosBlobs) Put(ctx context.Context, uri string, r io.Reader, ct string) (int64, error) {
	return b.units.put(uri, r, func() (int64, error) { return b.Objects.Put(ctx, uri, r, ct) })
}

// checkFilesJob: a many-file job holds every record of its files once,
// counted once, and ran (no fault here changes a file, so failing is a
// problem, as is a part of the files).
func checkFilesJob(t *testing.T, ctx context.Context, l *local.Suite, r *soakReport, j *job.Job, it soakItem) {
	t.Helper()
	if it.kind == kFolder {
		for f := range soakFilesOf(r.c, it.k) {
			r.c.merge(fmt.Sprintf("file %s/part-%d.jsonl", soakName(it.k), f), j.ID)
		}
	}
	tag := fmt.Sprintf("job %s %q (%s, %s)", j.ID, j.Name, it.kind, j.Status)
	want := map[string]bool{}
	for i := range it.records {
		want[soakRecordID(it.k, i)] = true
	}
	if j.Status == job.StatusFailed {
		r.jobProblem("many-file job failed", j.ID, fmt.Sprintf("%s: %s", tag, j.Error))
	}
	if j.Status != job.StatusCancelled && j.RecordCount != len(want) {
		r.jobProblem("many-file job holds part of its files", j.ID, fmt.Sprintf("%s: %d records, the files have %d", tag, j.RecordCount, len(want)))
	}
	r.submitted += len(want)
	checkJob(t, ctx, l, r, j, it.kind, want)
}

// checkDeadUnits: no unit may end in the validation queue's DLQ (each is
// killed at most once, and the queue delivers it up to five times).
func checkDeadUnits(l *local.Suite, r *soakReport) {
	for _, u := range l.Units.Dead() {
		r.c.count(fUnitDead)
		r.jobProblem("validation unit dead-lettered", u.JobID, fmt.Sprintf("%s unit %d of job %s", u.Kind, u.Index, u.JobID))
	}
}
