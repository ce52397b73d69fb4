package transfer

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"golang.org/x/sync/errgroup"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// unitSummary is a check unit's share of the job's totals, and its done
// marker (written last, after its sizes and ids).
type unitSummary struct {
	File int `json:"file"`
	// Lines is every line of the unit (blank and bad ones too): the units
	// before it in its file give a line's number in the file.
	Lines   int `json:"lines"`
	Count   int `json:"count"`   // non-blank lines
	Records int `json:"records"` // valid records, whose sizes the unit wrote
	Bad     int `json:"bad"`
	// Problems are the unit's first, numbered by line within the unit.
	Problems   []problem `json:"problems,omitempty"`
	MaxLine    int       `json:"maxLine"`
	Invocation string    `json:"invocation,omitempty"`
	// NoIDs counts the records without an id (given one when written), and
	// Taken the explicit ids of the form generated ids take (see idGen).
	NoIDs int   `json:"noIds"`
	Taken []int `json:"taken,omitempty"`
}

// checked is where the setup a unit shares with a single-file validation comes from.
type checked struct {
	req  batch.SubmitRequest
	prov service.BatchProvider
	md   *batch.Media
	fr   fileRequest
}

func (s *Service) unitSetup(ctx context.Context, j *job.Job) (*checked, error) {
	prov := s.Providers.Get(j.Provider)
	if prov == nil {
		_, err := s.failValidation(ctx, j.ID, fmt.Sprintf("provider %s is not configured in this deployment", j.Provider))
		return nil, errors.Join(errGone, err)
	}
	fr, err := s.getRequest(ctx, j)
	if err != nil {
		return nil, err
	}
	req, md, err := s.requestOf(j, fr, prov)
	if err != nil {
		return nil, err
	}
	return &checked{req: req, prov: prov, md: md, fr: fr}, nil
}

// errGone: the job was failed; the unit has nothing more to do.
var errGone = errors.New("job failed")

// runCheck checks one unit and, when it completes the check phase, sends
// the id shards.
func (s *Service) runCheck(ctx context.Context, j *job.Job, u Unit) error {
	done, err := s.unitOnce(ctx, j, u, UnitCheck, u.Units, UnitDups, func(marker string) error { return s.checkUnit(ctx, j, u, marker) })
	if err != nil || !done {
		return err
	}
	units := make([]Unit, u.Shards)
	for i := range units {
		units[i] = Unit{JobID: j.ID, Kind: UnitDups, Index: i, Units: u.Units, Shards: u.Shards, Salt: u.Salt}
	}
	if err := s.Units.SendUnits(ctx, units); err != nil {
		return fmt.Errorf("send id shards of %s: %w", j.ID, err)
	}
	return nil
}

// checkUnit checks the lines of u and writes its share: sizes, id shards,
// then the summary. The same unit run again writes the same bytes.
func (s *Service) checkUnit(ctx context.Context, j *job.Job, u Unit, marker string) error {
	c, err := s.unitSetup(ctx, j)
	if err != nil {
		return err
	}
	field := c.fr.Field
	r, closer, err := s.openUnit(ctx, field, u)
	var fe *job.FieldError
	if errors.As(err, &fe) {
		_, err = s.failValidation(ctx, j.ID, fe.Error())
		return errors.Join(errGone, err)
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	ids := &shardIDs{salt: u.Salt, shards: make([][]byte, u.Shards)}
	scan, probs, err := s.scanLines(ctx, r, c.req, c.prov, c.md, ids, func() error {
		return job.Fieldf(field, "the files hold more than %d records, the most one job takes; submit them as several jobs", MaxJobRecords)
	}, MaxJobRecords)
	if err == nil {
		err = r.Err()
	}
	if errors.As(err, &fe) {
		_, err = s.failValidation(ctx, j.ID, fe.Error())
		return errors.Join(errGone, err)
	}
	if err != nil {
		return fmt.Errorf("check %s bytes %d-%d: %w", u.URI, u.Start, u.End, err)
	}
	sum := unitSummary{File: u.File, Lines: r.Line(), Count: scan.count, Records: len(scan.sizes), Bad: probs.bad,
		Problems: probs.list, Invocation: scan.invocation.Type, NoIDs: len(scan.sizes) - ids.seen, Taken: ids.taken}
	var sizes []byte
	for _, n := range scan.sizes {
		sizes = binary.AppendUvarint(sizes, uint64(n))
		sum.MaxLine = max(sum.MaxLine, n)
	}
	if err := s.putBytes(ctx, fanoutURI(j, "sizes", unitName(u.Index)+".bin"), sizes); err != nil {
		return err
	}
	// One object per shard the unit has ids for: written side by side, as
	// a big job's unit has dozens.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeParallel)
	for sh, b := range ids.shards {
		if len(b) > 0 {
			g.Go(func() error { return s.putBytes(gctx, fanoutURI(j, "ids", unitName(sh), unitName(u.Index)+".bin"), b) })
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return s.putJSON(ctx, marker, sum)
}

// openUnit reads the lines of u: those that start in [Start, End) of its
// file, the last one read to its end even past End. A unit after the first
// of a file starts after the first '\n' at or after Start-1 (a line cut by
// Start belongs to the unit before).
func (s *Service) openUnit(ctx context.Context, field string, u Unit) (*jsonl.Reader, io.Closer, error) {
	v, ok := s.Blobs.(blob.Versioned)
	if !ok {
		return nil, nil, fmt.Errorf("the object store cannot read pinned versions")
	}
	pin := blob.Version{Size: u.Size, Tag: u.Tag}
	off := max(u.Start-1, 0)
	rc, err := retryRead(ctx, func() (io.ReadCloser, error) { return v.OpenVersionAt(ctx, u.URI, pin, off) })
	if errors.Is(err, blob.ErrChanged) || errors.Is(err, blob.ErrNotFound) {
		return nil, nil, changedField(field, u.URI)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open input %s at byte %d: %w", u.URI, off, err)
	}
	rr := &resumingReader{ctx: ctx, v: v, field: field, uri: u.URI, pin: pin, rc: rc, off: off, resumedAt: off}
	br := bufio.NewReaderSize(rr, 64<<10)
	start := u.Start
	if u.Start > 0 {
		start = off
		for {
			b, err := br.ReadSlice('\n')
			start += int64(len(b))
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				rr.Close()
				return nil, nil, fmt.Errorf("read input %s at byte %d: %w", u.URI, off, err)
			}
			break
		}
	}
	src := &lineBounded{r: br, left: u.End - start}
	if start >= u.End {
		src.done = true // the line cut by Start runs past End: no line starts here
	}
	return jsonl.NewReader(src, jsonl.Options{MaxLineBytes: maxFileLineBytes, StartOffset: start}), rr, nil
}

// lineBounded reads left bytes, then on to the end of the line they cut.
type lineBounded struct {
	r    *bufio.Reader
	left int64
	done bool
}

func (l *lineBounded) Read(p []byte) (int, error) {
	if l.done || len(p) == 0 {
		if l.done {
			return 0, io.EOF
		}
		return 0, nil
	}
	if l.left > 0 {
		p = p[:min(int64(len(p)), l.left)]
		n, err := l.r.Read(p)
		l.left -= int64(n)
		if l.left == 0 && n > 0 && p[n-1] == '\n' {
			l.done = true
		}
		return n, err
	}
	for n := range p {
		c, err := l.r.ReadByte()
		if err != nil {
			l.done = true
			return n, err
		}
		p[n] = c
		if c == '\n' {
			l.done = true
			return n + 1, nil
		}
	}
	return len(p), nil
}

// fingerprintIn is the 64-bit fingerprint of id in a fan-out keyed by salt:
// FNV-1a, finished by a 64-bit mix so its top bits (the shard) spread. Only
// equal fingerprints are compared by text, so a collision (even one crafted
// for a job's known salt) costs time, never a wrong answer.
func fingerprintIn(salt uint64, id string) uint64 {
	h := uint64(14695981039346656037) ^ salt
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// shardOf is the id shard of a fingerprint: shards are ranges of
// fingerprints, so the shards' sorted lists put end to end are sorted.
func shardOf(fp uint64, shards int) int {
	hi, _ := bits.Mul64(fp, uint64(shards))
	return int(hi)
}

// shardIDs is a check unit's dupCheck: each explicit id goes to its shard
// (fingerprint, line within the unit, the id), for the id shards to compare.
type shardIDs struct {
	salt   uint64
	shards [][]byte
	seen   int   // ids handed in (of a valid unit: its records with an id)
	taken  []int // the ids of the generated form, as numbers
}

func (d *shardIDs) check(line int, id string) int {
	d.seen++
	if n, ok := generatedNumber(id); ok {
		d.taken = append(d.taken, n)
	}
	fp := fingerprintIn(d.salt, id)
	sh := shardOf(fp, len(d.shards))
	b := binary.LittleEndian.AppendUint64(d.shards[sh], fp)
	b = binary.AppendUvarint(b, uint64(line))
	b = binary.AppendUvarint(b, uint64(len(id)))
	d.shards[sh] = append(b, id...)
	return 0
}

// idEntry is one id of a unit's shard object.
type idEntry struct {
	fp   uint64
	line int
	id   []byte // valid until the next entry
}

// eachID walks a shard object's entries in order.
func eachID(b []byte, fn func(e idEntry)) error {
	for len(b) > 0 {
		if len(b) < 8 {
			return errors.New("truncated id entry")
		}
		e := idEntry{fp: binary.LittleEndian.Uint64(b)}
		b = b[8:]
		line, n := binary.Uvarint(b)
		if n <= 0 {
			return errors.New("bad id entry line")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < size {
			return errors.New("bad id entry length")
		}
		e.line, e.id = int(line), b[n:n+int(size)]
		b = b[n+int(size):]
		fn(e)
	}
	return nil
}
