package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// A job over many files is validated by a fan-out, not by one invocation:
//
//  1. plan (the "Input Validation Requested" event): every file pinned to
//     its version and cut into check units of at most UnitBytes (a unit owns
//     the lines that start in its byte range), one queue message each;
//  2. check units, in parallel: each checks its lines as a single-file
//     submit does and writes its share: a summary (counts, first problems
//     by line within the unit), the encoded size of each record, and its
//     explicit ids cut into id shards by fingerprint;
//  3. id shards, in parallel: each reads its shard of every unit and finds
//     the duplicate ids in it (by fingerprint, then by text), so no set of
//     every id is ever held in one place;
//  4. finish: the problems of every unit and shard put in file order (the
//     first 20 named by file and line) fail the job, or the records are
//     split into parts as a single pass splits them;
//  5. write units, in parallel, one per part: each writes its part's
//     provider input and its pieces of the id list and caller records
//     (fanout_write.go); the last one stores the parts and starts the job.
//
// No coordinator holds the job: a unit's outputs are its done marker, the
// unit that finds its phase complete (by listing the markers) claims the next
// phase with a conditional write (a store slot), and every step writes the
// same bytes when it runs again, so a redelivered or concurrent unit changes
// nothing. Counts are per unit and summed at the end: no item is shared.

// Kinds of fan-out unit.
const (
	UnitCheck  = "check"
	UnitDups   = "dups"
	UnitFinish = "finish"
	UnitWrite  = "write"
)

// Unit is one piece of a fan-out validation, as the queue carries it.
type Unit struct {
	JobID string `json:"jobId"`
	Kind  string `json:"kind"`
	Index int    `json:"index"`
	// A check unit's range: the lines starting in bytes [Start, End) of
	// file File (URI) at version Tag/Size.
	File  int    `json:"file,omitempty"`
	URI   string `json:"uri,omitempty"`
	Tag   string `json:"tag,omitempty"`
	Size  int64  `json:"size,omitempty"`
	Start int64  `json:"start,omitempty"`
	End   int64  `json:"end,omitempty"`
	// The fan-out's shape, so each unit can tell when its phase is complete.
	Units  int `json:"units"`
	Shards int `json:"shards"`
	Parts  int `json:"parts,omitempty"`
	// Salt keys the id fingerprints of this job (every unit must agree).
	Salt uint64 `json:"salt"`
}

// UnitQueue carries fan-out units to validate invocations (SQS in AWS, a
// queue with N workers in make dev). A unit may be delivered more than once.
type UnitQueue interface {
	SendUnits(ctx context.Context, units []Unit) error
}

const (
	// DefaultUnitBytes is the input one check unit reads: 64 MiB is about 5 s
	// of checking at the rate measured in make dev (13 MiB/s), and bounds a
	// unit's memory (its ids are held until written) well under 256 MB.
	DefaultUnitBytes = 64 << 20
	// idsPerShard bounds the ids one id shard holds: 16 bytes each while
	// sorting, and a shard of 4,166,666 measured 235 MiB of peak heap
	// (BenchmarkDupShard, growth and garbage included), so 2,097,152 keeps a
	// shard near half the 256 MB a unit may take.
	idsPerShard = 2 << 20
	// minIDLineBytes is the shortest line with an explicit id,
	// {"id":"x","prompt":""}: a job's bytes bound its ids by it.
	minIDLineBytes = 22
	// statParallel bounds the files pinned at once when a fan-out is planned.
	statParallel = 32
)

func (s *Service) unitBytes() int64 {
	if s.UnitBytes > 0 {
		return s.UnitBytes
	}
	return DefaultUnitBytes
}

// shardsFor is how many id shards a job of total input bytes needs so no
// shard holds more than idsPerShard ids (the record cap bounds them too).
func shardsFor(total int64) int {
	ids := min(total/minIDLineBytes, MaxJobRecords)
	return int(max(1, (ids+idsPerShard-1)/idsPerShard))
}

// fanoutURI is where the fan-out of job j keeps its work.
func fanoutURI(j *job.Job, elems ...string) string {
	return blob.Join(j.InputURI, append([]string{"fanout"}, elems...)...)
}

// plan is what the finish needs of the fan-out: the files, pinned, and the units.
type plan struct {
	Files []plannedFile `json:"files"`
	Units []Unit        `json:"units"`
}

type plannedFile struct {
	inputFile
	Version blob.Version `json:"version"`
}

// planFanout pins every file, cuts the files into check units and sends them.
// It runs again whole when the event is redelivered: the same files give the
// same units, so units already done stay done.
func (s *Service) planFanout(ctx context.Context, j *job.Job, fr fileRequest) error {
	if s.Units == nil {
		_, err := s.failValidation(ctx, j.ID, job.Fieldf(fr.Field, "jobs over many files are not available on this server (no validation queue); submit one file").Error())
		return err
	}
	p, err := s.loadPlan(ctx, j)
	if errors.Is(err, blob.ErrNotFound) {
		p, err = s.newPlan(ctx, j, fr)
		var fe *job.FieldError
		if errors.As(err, &fe) {
			_, err = s.failValidation(ctx, j.ID, fe.Error())
			return err
		}
	}
	if err != nil {
		return err
	}
	if err := s.Units.SendUnits(ctx, p.Units); err != nil {
		return fmt.Errorf("send check units of %s: %w", j.ID, err)
	}
	service.Logger(s.Log).InfoContext(ctx, "input fan-out planned", "job_id", j.ID, "files", len(p.Files), "units", len(p.Units), "shards", p.Units[0].Shards)
	return nil
}

func (s *Service) newPlan(ctx context.Context, j *job.Job, fr fileRequest) (*plan, error) {
	v, ok := s.Blobs.(blob.Versioned)
	if !ok {
		return nil, fmt.Errorf("the object store cannot pin input versions")
	}
	var files []inputFile
	if err := s.getJSON(ctx, filesURI(j), &files); err != nil {
		return nil, fmt.Errorf("read the input files of %s: %w", j.ID, err)
	}
	p := &plan{Files: make([]plannedFile, len(files))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(statParallel)
	for i, f := range files {
		g.Go(func() error {
			ver, err := retryRead(gctx, func() (blob.Version, error) { return v.Stat(gctx, f.URI) })
			if errors.Is(err, blob.ErrNotFound) {
				return job.Fieldf(fmt.Sprintf("%s[%d]", fr.Field, i), "no file %s (an upload never PUT, or deleted after submit)", f.Name)
			}
			if err != nil {
				return fmt.Errorf("stat input %s: %w", f.URI, err)
			}
			p.Files[i] = plannedFile{f, ver}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var total int64
	for _, f := range p.Files {
		total += f.Version.Size
	}
	if total > MaxJobBytes {
		return nil, job.Fieldf(fr.Field, "the files hold %d bytes, over the %d (1 TiB) one job takes; submit them as several jobs", total, MaxJobBytes)
	}
	// The salt is the job's own, so two plans made at once (a redelivered
	// event) are the same plan: units of both agree on every fingerprint.
	salt := fingerprintIn(0, j.ID)
	shards, size := shardsFor(total), s.unitBytes()
	for i, f := range p.Files {
		for start := int64(0); start < f.Version.Size || start == 0; start += size {
			p.Units = append(p.Units, Unit{JobID: j.ID, Kind: UnitCheck, Index: len(p.Units), File: i, URI: f.URI,
				Tag: f.Version.Tag, Size: f.Version.Size, Start: start, End: min(start+size, f.Version.Size),
				Shards: shards, Salt: salt})
		}
	}
	for i := range p.Units {
		p.Units[i].Units = len(p.Units)
	}
	if err := s.putJSON(ctx, fanoutURI(j, "plan.json"), p); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Service) loadPlan(ctx context.Context, j *job.Job) (*plan, error) {
	var p plan
	if err := s.getJSON(ctx, fanoutURI(j, "plan.json"), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// RunUnit runs one fan-out unit. An error is worth a retry (the queue
// redelivers it); a unit of a job past validation does nothing.
func (s *Service) RunUnit(ctx context.Context, u Unit) error {
	j, err := s.Jobs.GetJob(ctx, u.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load job %s: %w", u.JobID, err)
	}
	if !inputValidating(j) {
		return nil // failed, cancelled, or started by another finish
	}
	switch u.Kind {
	case UnitCheck:
		return s.runCheck(ctx, j, u)
	case UnitDups:
		return s.runDups(ctx, j, u)
	case UnitFinish:
		return s.runFinish(ctx, j, u)
	case UnitWrite:
		return s.runWrite(ctx, j, u)
	}
	service.Logger(s.Log).ErrorContext(ctx, "unknown fan-out unit; dropped", "job_id", u.JobID, "kind", u.Kind)
	return nil
}

// markerGroup is how many done markers of a phase share a folder: one LIST
// page, so a unit's check for the end of its phase costs two LISTs (its
// group's markers, then the groups' markers) however many units there are.
var markerGroup = 1000 // a variable so a test can lower it

// markerURI is the done marker of unit k of a phase (its share's summary).
func markerURI(j *job.Job, phase string, k int) string {
	return fanoutURI(j, phase, groupName(k/markerGroup), unitName(k)+".json")
}

func groupName(g int) string { return fmt.Sprintf("%04d", g) }

// unitOnce runs work on unit u of phase unless u's done marker is there (a
// unit delivered again does nothing twice), then reports whether u completed
// the phase's want units, so its caller sends the next phase. A job failed
// meanwhile (errGone) leaves the unit nothing to do.
func (s *Service) unitOnce(ctx context.Context, j *job.Job, u Unit, phase string, want int, next string, work func(marker string) error) (bool, error) {
	marker := markerURI(j, phase, u.Index)
	_, err := s.getBytes(ctx, marker)
	if errors.Is(err, blob.ErrNotFound) {
		err = work(marker)
	}
	if errors.Is(err, errGone) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return s.phaseDone(ctx, j, phase, u.Index, want, next)
}

// phaseDone reports whether all want units of a phase left their marker
// (unit k's is there), and if so claims the next phase for unit k: the first
// to claim sends it, and a redelivery of that unit (it may have failed before
// sending) sends it again; others leave it to the claimant. Each unit writes
// before it lists, so the last to finish sees every marker.
func (s *Service) phaseDone(ctx context.Context, j *job.Job, phase string, k, want int, next string) (bool, error) {
	l, ok := s.Blobs.(lister)
	if !ok {
		return false, fmt.Errorf("the object store cannot list fan-out markers")
	}
	g := k / markerGroup
	objs, err := l.List(ctx, fanoutURI(j, phase, groupName(g))+"/")
	if err != nil {
		return false, fmt.Errorf("list %s markers of %s: %w", phase, j.ID, err)
	}
	if len(objs) < min(markerGroup, want-g*markerGroup) {
		return false, nil
	}
	if groups := (want + markerGroup - 1) / markerGroup; groups > 1 {
		if err := s.putBytes(ctx, fanoutURI(j, phase+"-groups", groupName(g)), nil); err != nil {
			return false, err
		}
		objs, err := l.List(ctx, fanoutURI(j, phase+"-groups")+"/")
		if err != nil {
			return false, fmt.Errorf("list %s groups of %s: %w", phase, j.ID, err)
		}
		if len(objs) < groups {
			return false, nil
		}
	}
	key, me := "fanout/"+j.ID+"/"+next, phase+"-"+unitName(k)
	won, err := s.Jobs.SwapSlot(ctx, key, "", me)
	if err != nil {
		return false, fmt.Errorf("claim %s of %s: %w", next, j.ID, err)
	}
	if won {
		return true, nil
	}
	holder, err := s.Jobs.Slot(ctx, key)
	if err != nil {
		return false, fmt.Errorf("read claim %s of %s: %w", next, j.ID, err)
	}
	return holder == me, nil
}

func (s *Service) putJSON(ctx context.Context, uri string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", uri, err)
	}
	return s.putBytes(ctx, uri, b)
}

func (s *Service) putBytes(ctx context.Context, uri string, b []byte) error {
	if _, err := s.Blobs.Put(ctx, uri, bytes.NewReader(b), "application/octet-stream"); err != nil {
		return fmt.Errorf("store %s: %w", uri, err)
	}
	return nil
}

// getJSON reads a fan-out object (blob.ErrNotFound when absent).
func (s *Service) getJSON(ctx context.Context, uri string, v any) error {
	b, err := s.getBytes(ctx, uri)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", uri, err)
	}
	return nil
}

func (s *Service) getBytes(ctx context.Context, uri string) ([]byte, error) {
	rc, err := retryRead(ctx, func() (io.ReadCloser, error) { return s.Blobs.Open(ctx, uri, 0) })
	if errors.Is(err, blob.ErrNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", uri, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	return b, nil
}

// unitName is a unit's marker name: zero-padded so markers list in order.
func unitName(i int) string { return fmt.Sprintf("%07d", i) }

// fileLabel is how problems name a file of a job over many.
func fileLabel(f plannedFile) string {
	return "file " + service.Truncate(strings.TrimPrefix(f.Name, "/"), 200)
}
