package transfer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// Duplicate ids are found without keeping the ids. A map of every id costs
// about 100 bytes a record plus the id itself (a 1 GiB file of short records
// holds millions), so the first pass keeps a 64-bit fingerprint and the line
// of each id (16 bytes a record), sorted afterwards to find equal
// fingerprints. Only when some are equal is the file read a second time to check exactly: the ids of those lines alone
// are compared as text, so a fingerprint collision (about n²/2^65: 3e-8 at the
// record cap) never fails a valid file, and the problems reported are the
// ones a map would have given. The fingerprints are also the set generated
// ids avoid (a collision there only skips one generated id). Memory is then
// bounded by MaxFileRecords, not by the file's bytes: 16 bytes a record for
// the fingerprints and 8 for each record's size (the split needs them).
//
// The seed is per process: fingerprints are compared only within one
// validation, and no one can craft ids that collide on purpose.
var idSeed = maphash.MakeSeed()

// fingerprint is a variable so a test can make every id collide.
var fingerprint = func(id string) uint64 { return maphash.String(idSeed, id) }

// recordCap is MaxFileRecords (a variable so a test can lower it).
var recordCap = MaxFileRecords

// idMark is one explicit id of the file: its fingerprint and line.
type idMark struct {
	fp   uint64
	line int
}

// idSet is the sorted fingerprints of a file's explicit ids.
type idSet []uint64

// has reports whether id may be one of the file's ids (true for a
// fingerprint collision too).
func (s idSet) has(id string) bool {
	_, ok := slices.BinarySearch(s, fingerprint(id))
	return ok
}

type fileScan struct {
	count int
	sizes []int // encoded length of each record, to split by bytes
	taken idSet // the explicit ids, so generated ones can avoid them
	// invocation is the provider job's invocation type the records settle.
	invocation *batch.InvocationCheck
}

// problemList keeps the first maxFileProblems problems and counts all.
type problemList struct {
	bad  int
	list []problem
}

// problem is one invalid line: its number (in the file, or in a fan-out
// unit until the unit's place in its file is known) and what is wrong.
type problem struct {
	Line int    `json:"line"`
	Msg  string `json:"msg"`
}

func (p *problemList) add(line int, format string, args ...any) {
	p.bad++
	if len(p.list) < maxFileProblems {
		p.list = append(p.list, problem{line, fmt.Sprintf(format, args...)})
	}
}

// text is the problems kept, one "line N: why" a line.
func (p *problemList) text() string {
	out := make([]string, len(p.list))
	for i, q := range p.list {
		out[i] = fmt.Sprintf("line %d: %s", q.Line, q.Msg)
	}
	return strings.Join(out, "\n")
}

// dupCheck sees every explicit id that passed its own checks, in line order;
// prev > 0 reports a duplicate of that earlier line.
type dupCheck interface {
	check(line int, id string) (prev int)
}

// markIDs is the first pass's check: it records fingerprints and finds nothing.
type markIDs struct{ marks []idMark }

func (m *markIDs) check(line int, id string) int {
	m.marks = append(m.marks, idMark{fingerprint(id), line})
	return 0
}

// candidate is a line whose id's fingerprint another line shares; last is the
// last line sharing it, after which its id need not be kept.
type candidate struct{ line, last int }

// exactIDs is the second pass's check: only candidate lines are compared, by
// their text. It keeps the ids of groups still open at the current line.
type exactIDs struct {
	cand  []candidate // by line
	next  int
	first map[string]int
}

func (e *exactIDs) check(line int, id string) int {
	for e.next < len(e.cand) && e.cand[e.next].line < line {
		e.next++
	}
	if e.next == len(e.cand) || e.cand[e.next].line != line {
		return 0
	}
	prev, dup := e.first[id]
	if !dup {
		e.first[id] = line
	}
	if e.cand[e.next].last == line {
		delete(e.first, id)
	}
	return prev
}

// candidates are the lines of marks (sorted by fingerprint) whose fingerprint
// is shared, sorted by line.
func candidates(marks []idMark) []candidate {
	var out []candidate
	for i := 0; i < len(marks); {
		j := i + 1
		for j < len(marks) && marks[j].fp == marks[i].fp {
			j++
		}
		if j-i > 1 {
			last := marks[j-1].line // marks of one fingerprint are sorted by line
			for _, m := range marks[i:j] {
				out = append(out, candidate{m.line, last})
			}
		}
		i = j
	}
	slices.SortFunc(out, func(a, b candidate) int { return cmp.Compare(a.line, b.line) })
	return out
}

// scanFile validates the file: every line parsed, checked and encoded, with no
// more than MaxFileRecords records. See idSeed for how duplicates are found.
func (s *Service) scanFile(ctx context.Context, field, uri string, pin *blob.Version, req batch.SubmitRequest, prov service.BatchProvider, md *batch.Media) (*fileScan, error) {
	marks := &markIDs{}
	scan, probs, err := s.scanPass(ctx, field, uri, pin, req, prov, md, marks)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(marks.marks, func(a, b idMark) int {
		return cmp.Or(cmp.Compare(a.fp, b.fp), cmp.Compare(a.line, b.line))
	})
	if cand := candidates(marks.marks); len(cand) > 0 {
		scan.sizes = nil
		scan, probs, err = s.scanPass(ctx, field, uri, pin, req, prov, md, &exactIDs{cand: cand, first: map[string]int{}})
		if err != nil {
			return nil, err
		}
	}
	if probs.bad > 0 {
		return nil, job.Fieldf(field, "%d of %d lines are invalid; nothing was submitted; fix the file and upload it again. First problems:\n%s",
			probs.bad, scan.count, probs.text())
	}
	lim := s.limitsFor(prov, req.Model)
	switch {
	case scan.count == 0:
		return nil, job.Fieldf(field, "the file holds no records; a %s job needs at least %d", lim.Title, max(lim.MinRecords, 1))
	case scan.count < lim.MinRecords:
		return nil, job.Fieldf(field, "%d records is under %s's minimum of %d per job; add records, or call the model on demand for small sets", scan.count, lim.Title, lim.MinRecords)
	}
	taken := make(idSet, 0, len(marks.marks))
	for _, m := range marks.marks {
		taken = append(taken, m.fp)
	}
	scan.taken = slices.Compact(taken)
	return scan, nil
}

// scanPass reads the file once: every line parsed, checked and encoded, the
// explicit ids handed to dups.
func (s *Service) scanPass(ctx context.Context, field, uri string, pin *blob.Version, req batch.SubmitRequest, prov service.BatchProvider, md *batch.Media, dups dupCheck) (*fileScan, *problemList, error) {
	rc, err := s.openInput(ctx, field, uri, pin)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	r := jsonl.NewReader(&cappedReader{r: rc, max: MaxUploadBytes}, jsonl.Options{MaxLineBytes: maxFileLineBytes})
	scan, probs, err := s.scanLines(ctx, r, req, prov, md, dups, func() error {
		return job.Fieldf(field, "the file holds more than %d records, the most one submit takes; split it over several submits", recordCap)
	}, recordCap)
	if err != nil {
		return nil, nil, err
	}
	if err := r.Err(); err != nil {
		if errors.Is(err, errTooBig) {
			return nil, nil, job.Fieldf(field, "the file is over the %d-byte (1 GiB) limit of one input file; split it over several submits", int64(MaxUploadBytes))
		}
		return nil, nil, fmt.Errorf("read input %s: %w", uri, err)
	}
	return scan, probs, nil
}

// scanLines checks every line r gives: parsed, checked and encoded, the
// explicit ids handed to dups; past limit records it fails with tooMany. A
// read error is left in r (the caller names the input).
func (s *Service) scanLines(ctx context.Context, r *jsonl.Reader, req batch.SubmitRequest, prov service.BatchProvider, md *batch.Media, dups dupCheck, tooMany func() error, limit int) (*fileScan, *problemList, error) {
	scan := &fileScan{invocation: batch.NewInvocationCheck(s.Providers.Abilities(prov.Name()).InvocationFor)}
	probs := &problemList{}
	for r.Next() {
		scan.count++
		if scan.count > limit {
			return nil, nil, tooMany()
		}
		if scan.count%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		in, err := decodeLine(r.Bytes())
		if err != nil {
			probs.add(r.Line(), "%v", err)
			continue
		}
		if in.ID != "" {
			if why := job.CheckCallerRecordID(in.ID); why != "" {
				probs.add(r.Line(), "id: %s", why)
				continue
			}
			if prev := dups.check(r.Line(), in.ID); prev > 0 {
				probs.add(r.Line(), "duplicate id %q (also line %d); ids must be unique within a job", service.Truncate(in.ID, 80), prev)
				continue
			}
		}
		if err := s.inputs().CheckModelInputRefs("model_input", req.Owner, in.ModelInput); err != nil {
			probs.add(r.Line(), "%s", err)
			continue
		}
		// Images and documents: checked here (s3:// held to the caller's
		// upload area), rendered into the part when it is written.
		rec, ps := md.Check(ctx, scan.count-1, in)
		for _, p := range ps {
			probs.add(r.Line(), "%s", p.Error())
		}
		if len(ps) > 0 {
			continue
		}
		if err := scan.invocation.Add(scan.count-1, in); err != nil {
			probs.add(r.Line(), "%s", err.(*job.FieldError).Reason)
			continue
		}
		in.ID = job.ProviderRecordID(scan.count - 1) // what the provider will see, so the measure is exact
		enc := func(in job.Input) ([]byte, error) { return prov.EncodeRecord(scan.count-1, req.Model, in, req.Params) }
		var size int
		if rec != nil {
			_, _, size, err = md.Encode(scan.count-1, in, rec, enc)
		} else {
			var line []byte
			line, err = enc(in)
			size = len(line)
		}
		if err != nil {
			var fe *job.FieldError
			if errors.As(err, &fe) {
				// records[i].x → x: the line number already says which record.
				f := fe.Field
				if i := strings.Index(f, "]."); i >= 0 {
					f = f[i+2:]
				}
				probs.add(r.Line(), "%s: %s", f, fe.Reason)
				continue
			}
			return nil, nil, fmt.Errorf("encode line %d: %w", r.Line(), err)
		}
		scan.sizes = append(scan.sizes, size)
	}
	for _, b := range r.Bad().Lines() {
		probs.add(b.Line, "%s", b.Reason)
	}
	return scan, probs, nil
}
