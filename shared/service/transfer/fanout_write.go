package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// The write phase of a fan-out: one write unit per part writes the part's
// provider input and its pieces of the id list and the caller records
// (service.PieceURI), reading the check units its records lie in; the
// last one to finish stores the parts and starts the job.

// jobLayout is what every write unit shares: the split and the job's facts.
type jobLayout struct {
	Records    int    `json:"records"`
	Parts      []int  `json:"parts"` // records per part
	Invocation string `json:"invocation,omitempty"`
	MaxLine    int    `json:"maxLine"`
	// Taken are the numbers of explicit ids of the generated form, sorted.
	Taken []int `json:"taken,omitempty"`
}

// partLayout is where one part's records are: from record Skip of the first
// of Units (the check units holding them, in order), NoIDBefore records
// without an id coming before that unit in the job.
type partLayout struct {
	First      int    `json:"first"` // the job's index of the part's first record
	Skip       int    `json:"skip"`
	NoIDBefore int    `json:"noIdBefore"`
	Units      []Unit `json:"units"`
}

// generatedNumber reports whether id is what idGen would generate (r00001,
// r123456) and its number.
func generatedNumber(id string) (int, bool) {
	if len(id) < 6 || id[0] != 'r' || (len(id) > 6 && id[1] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil || n < 1 || fmt.Sprintf("r%05d", n) != id {
		return 0, false
	}
	return n, true
}

// idGen gives the ids of records without one as a single pass does: r00001,
// r00002, … in record order, skipping the ones explicit ids take. It starts
// after the first m of them, so each part generates its own.
type idGen struct {
	taken []int // sorted
	n     int   // the last number given
}

func newIDGen(taken []int, m int) *idGen {
	g := &idGen{taken: taken}
	if m > 0 {
		// The m-th free number n is the least with n = m + (taken numbers <= n).
		n := m
		for {
			k, _ := slices.BinarySearch(taken, n+1)
			if m+k == n {
				break
			}
			n = m + k
		}
		g.n = n
	}
	return g
}

func (g *idGen) next() string {
	for {
		g.n++
		if _, hit := slices.BinarySearch(g.taken, g.n); !hit {
			return fmt.Sprintf("r%05d", g.n)
		}
	}
}

// layoutParts writes the write phase's layout and sends a write unit per part.
func (s *Service) layoutParts(ctx context.Context, j *job.Job, u Unit, p *plan, sums []unitSummary, lay jobLayout) error {
	recBase, noIDBase := make([]int, len(sums)+1), make([]int, len(sums)+1)
	var taken []int
	for k, sum := range sums {
		recBase[k+1], noIDBase[k+1] = recBase[k]+sum.Records, noIDBase[k]+sum.NoIDs
		taken = append(taken, sum.Taken...)
	}
	slices.Sort(taken)
	lay.Taken = slices.Compact(taken)
	if err := s.putJSON(ctx, fanoutURI(j, "layout.json"), lay); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallel)
	first, k := 0, 0
	for pi, count := range lay.Parts {
		for recBase[k+1] <= first { // units wholly before the part (or empty)
			k++
		}
		pl := partLayout{First: first, Skip: first - recBase[k], NoIDBefore: noIDBase[k]}
		for q := k; q < len(sums) && recBase[q] < first+count; q++ {
			if sums[q].Records > 0 {
				pl.Units = append(pl.Units, p.Units[q])
			}
		}
		first += count
		g.Go(func() error { return s.putJSON(gctx, fanoutURI(j, "layout", unitName(pi)+".json"), pl) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	units := make([]Unit, len(lay.Parts))
	for i := range units {
		units[i] = Unit{JobID: j.ID, Kind: UnitWrite, Index: i, Units: u.Units, Shards: u.Shards, Parts: len(lay.Parts), Salt: u.Salt}
	}
	if err := s.Units.SendUnits(ctx, units); err != nil {
		return fmt.Errorf("send write units of %s: %w", j.ID, err)
	}
	return nil
}

// runWrite writes one part and, when it completes the parts, starts the job.
func (s *Service) runWrite(ctx context.Context, j *job.Job, u Unit) error {
	done, err := s.unitOnce(ctx, j, u, UnitWrite, u.Parts, "start", func(marker string) error { return s.writePart(ctx, j, u, marker) })
	if err != nil || !done {
		return err
	}
	c, err := s.unitSetup(ctx, j)
	if err != nil {
		return ignoreGone(err)
	}
	var lay jobLayout
	if err := s.getJSON(ctx, fanoutURI(j, "layout.json"), &lay); err != nil {
		return err
	}
	draft := s.draftParts(j, lay.Records, lay.Parts, lay.Invocation)
	return s.startValidated(ctx, &draft, lay.MaxLine, c.req, c.prov, c.md)
}

func ignoreGone(err error) error {
	if errors.Is(err, errGone) {
		return nil
	}
	return err
}

func (s *Service) writePart(ctx context.Context, j *job.Job, u Unit, marker string) error {
	c, err := s.unitSetup(ctx, j)
	if err != nil {
		return err
	}
	var lay jobLayout
	var pl partLayout
	if err := s.getJSON(ctx, fanoutURI(j, "layout.json"), &lay); err != nil {
		return err
	}
	if err := s.getJSON(ctx, fanoutURI(j, "layout", unitName(u.Index)+".json"), &pl); err != nil {
		return err
	}
	draft := s.draftParts(j, lay.Records, lay.Parts, lay.Invocation)
	r := &unitsReader{s: s, ctx: ctx, field: c.fr.Field, units: pl.Units}
	defer r.Close()
	noID := pl.NoIDBefore
	for range pl.Skip {
		if !r.Next() {
			return fmt.Errorf("part %d of %s: the input ended before its first record: %w", u.Index, j.ID, cmpErr(r.Err()))
		}
		if in, err := decodeLine(r.Bytes()); err == nil && in.ID == "" {
			noID++
		}
	}
	out := partsOut{
		parts: draft.Parts[u.Index : u.Index+1], first: pl.First, total: lay.Records,
		idsURI: service.PieceURI(service.IDsURI(&draft), u.Index), insURI: service.PieceURI(service.InputsURI(&draft), u.Index),
		newID: newIDGen(lay.Taken, noID).next,
	}
	err = s.writeParts(ctx, r, "the job's input files", out, j.ID, c.req, c.prov, c.md)
	var fe *job.FieldError
	if errors.As(err, &fe) {
		_, err = s.failValidation(ctx, j.ID, fe.Error())
		return errors.Join(errGone, err)
	}
	if err != nil {
		return err
	}
	return s.putJSON(ctx, marker, struct{}{})
}

// cmpErr names a clean end (nil) as one.
func cmpErr(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}

// unitsReader reads the lines of check units one after another.
type unitsReader struct {
	s     *Service
	ctx   context.Context
	field string
	units []Unit
	cur   *jsonl.Reader
	c     io.Closer
	err   error
}

func (r *unitsReader) Next() bool {
	for r.err == nil {
		if r.cur != nil {
			if r.cur.Next() {
				return true
			}
			if r.err = r.cur.Err(); r.err != nil {
				return false
			}
			r.c.Close()
			r.cur, r.c = nil, nil
		}
		if len(r.units) == 0 {
			return false
		}
		r.cur, r.c, r.err = r.s.openUnit(r.ctx, r.field, r.units[0])
		r.units = r.units[1:]
	}
	return false
}

func (r *unitsReader) Bytes() []byte { return r.cur.Bytes() }

func (r *unitsReader) Line() int {
	if r.cur == nil {
		return 0
	}
	return r.cur.Line()
}

func (r *unitsReader) Err() error { return r.err }

func (r *unitsReader) Close() {
	if r.c != nil {
		r.c.Close()
	}
}
