package transfer

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// readParallel and writeParallel bound the fan-out objects one step reads
// or writes at once.
const (
	readParallel  = 32
	writeParallel = 8
)

// dupHit is a duplicate id: its line and the earlier line of the same id,
// each a unit and a line within it.
type dupHit struct {
	Unit     int    `json:"unit"`
	Line     int    `json:"line"`
	PrevUnit int    `json:"prevUnit"`
	PrevLine int    `json:"prevLine"`
	ID       string `json:"id"`
}

// shardResult is an id shard's answer, and its done marker.
type shardResult struct {
	Count int      `json:"count"` // duplicates found
	Hits  []dupHit `json:"hits,omitempty"`
}

// idMarkAt is one id of a shard while it is sorted: 16 bytes.
type idMarkAt struct {
	fp         uint64
	unit, line uint32
}

// runDups finds the duplicate ids of one shard over every unit and, when it
// completes the shards, sends the finish.
func (s *Service) runDups(ctx context.Context, j *job.Job, u Unit) error {
	done, err := s.unitOnce(ctx, j, u, UnitDups, u.Shards, UnitFinish, func(marker string) error { return s.dupShard(ctx, j, u, marker) })
	if err != nil || !done {
		return err
	}
	if err := s.Units.SendUnits(ctx, []Unit{{JobID: j.ID, Kind: UnitFinish, Units: u.Units, Shards: u.Shards, Salt: u.Salt}}); err != nil {
		return fmt.Errorf("send finish of %s: %w", j.ID, err)
	}
	return nil
}

func (s *Service) dupShard(ctx context.Context, j *job.Job, u Unit, marker string) error {
	l, ok := s.Blobs.(lister)
	if !ok {
		return fmt.Errorf("the object store cannot list id shards")
	}
	prefix := fanoutURI(j, "ids", unitName(u.Index)) + "/"
	objs, err := l.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("list id shard %s: %w", prefix, err)
	}
	unitOf := func(o blob.Object) (uint32, error) {
		var k uint32
		_, err := fmt.Sscanf(strings.TrimPrefix(o.URI, prefix), "%d.bin", &k)
		return k, err
	}
	// Each object is read twice at most (the second time only when
	// fingerprints are shared), one at a time: memory is the marks.
	each := func(fn func(unit uint32, e idEntry)) error {
		for _, o := range objs {
			k, err := unitOf(o)
			if err != nil {
				return fmt.Errorf("id shard object %s: %w", o.URI, err)
			}
			b, err := s.getBytes(ctx, o.URI)
			if err != nil {
				return err
			}
			if err := eachID(b, func(e idEntry) { fn(k, e) }); err != nil {
				return fmt.Errorf("id shard object %s: %w", o.URI, err)
			}
		}
		return nil
	}
	var marks []idMarkAt
	if err := each(func(k uint32, e idEntry) { marks = append(marks, idMarkAt{e.fp, k, uint32(e.line)}) }); err != nil {
		return err
	}
	slices.SortFunc(marks, func(a, b idMarkAt) int {
		return cmp.Or(cmp.Compare(a.fp, b.fp), cmp.Compare(a.unit, b.unit), cmp.Compare(a.line, b.line))
	})
	// Lines whose fingerprint another line shares are compared by text.
	type at struct{ unit, line uint32 }
	cand := map[at]bool{}
	for i := 0; i < len(marks); {
		k := i + 1
		for k < len(marks) && marks[k].fp == marks[i].fp {
			k++
		}
		if k-i > 1 {
			for _, m := range marks[i:k] {
				cand[at{m.unit, m.line}] = true
			}
		}
		i = k
	}
	marks = nil
	var res shardResult
	if len(cand) > 0 {
		first := map[string]at{}
		// Objects by unit and entries by line: the walk is in input order,
		// so the first hits kept are the first in the input.
		err := each(func(k uint32, e idEntry) {
			if !cand[at{k, uint32(e.line)}] {
				return
			}
			prev, dup := first[string(e.id)]
			if !dup {
				first[string(e.id)] = at{k, uint32(e.line)}
				return
			}
			res.Count++
			if len(res.Hits) < maxFileProblems {
				res.Hits = append(res.Hits, dupHit{Unit: int(k), Line: e.line, PrevUnit: int(prev.unit), PrevLine: int(prev.line), ID: string(e.id)})
			}
		})
		if err != nil {
			return err
		}
	}
	return s.putJSON(ctx, marker, res)
}

// runFinish gathers the units' shares: the job fails with its first problems
// (by file and line), or its parts are laid out for the write units.
func (s *Service) runFinish(ctx context.Context, j *job.Job, u Unit) error {
	c, err := s.unitSetup(ctx, j)
	if errors.Is(err, errGone) {
		return nil
	}
	if err != nil {
		return err
	}
	p, err := s.loadPlan(ctx, j)
	if err != nil {
		return fmt.Errorf("load fan-out plan of %s: %w", j.ID, err)
	}
	sums := make([]unitSummary, len(p.Units))
	results := make([]shardResult, u.Shards)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallel)
	for i := range sums {
		g.Go(func() error { return s.getJSON(gctx, markerURI(j, UnitCheck, i), &sums[i]) })
	}
	for i := range results {
		g.Go(func() error { return s.getJSON(gctx, markerURI(j, UnitDups, i), &results[i]) })
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("read fan-out shares of %s: %w", j.ID, err)
	}
	if why := s.fanoutProblems(p, sums, results); why != "" {
		_, err := s.failValidation(ctx, j.ID, job.Fieldf(c.fr.Field, "%s", why).Error())
		return err
	}
	records, maxLine := 0, 0
	for _, sum := range sums {
		records += sum.Records
		maxLine = max(maxLine, sum.MaxLine)
	}
	lim := s.limitsFor(c.prov, j.Model)
	why := ""
	switch {
	case records == 0:
		why = fmt.Sprintf("the files hold no records; a %s job needs at least %d", lim.Title, max(lim.MinRecords, 1))
	case records < lim.MinRecords:
		why = fmt.Sprintf("%d records is under %s's minimum of %d per job; add records, or call the model on demand for small sets", records, lim.Title, lim.MinRecords)
	case records > MaxJobRecords:
		why = fmt.Sprintf("the files hold %d records, over the %d one job takes; submit them as several jobs", records, MaxJobRecords)
	}
	if why != "" {
		_, err := s.failValidation(ctx, j.ID, job.Fieldf(c.fr.Field, "%s", why).Error())
		return err
	}
	parts, err := s.splitSegments(ctx, j, sums, lim)
	var fe *job.FieldError
	if errors.As(err, &fe) {
		_, err = s.failValidation(ctx, j.ID, job.Fieldf(c.fr.Field, "%v", err).Error())
		return err
	}
	if err != nil {
		return err
	}
	invocation := ""
	for _, sum := range sums {
		invocation = cmp.Or(invocation, sum.Invocation)
	}
	return s.layoutParts(ctx, j, u, p, sums, jobLayout{Records: records, Parts: parts, Invocation: invocation, MaxLine: maxLine})
}

// fanoutProblems is why the job fails, from every unit's and shard's
// problems put in input order ("" when it does not).
func (s *Service) fanoutProblems(p *plan, sums []unitSummary, results []shardResult) string {
	// base[k] is the number of lines of unit k's file before it.
	base := make([]int, len(sums))
	for k := 1; k < len(sums); k++ {
		if sums[k].File == sums[k-1].File {
			base[k] = base[k-1] + sums[k-1].Lines
		}
	}
	where := func(k, line int) string {
		return fmt.Sprintf("%s line %d", fileLabel(p.Files[sums[k].File]), base[k]+line)
	}
	type located struct {
		unit, line int
		msg        string
	}
	var all []located
	bad, count := 0, 0
	invocation, first := "", 0
	for k, sum := range sums {
		bad += sum.Bad
		count += sum.Count
		for _, q := range sum.Problems {
			all = append(all, located{k, q.Line, q.Msg})
		}
		switch {
		case sum.Invocation == "":
		case invocation == "":
			invocation, first = sum.Invocation, k
		case sum.Invocation != invocation:
			return fmt.Sprintf("%s needs %s provider jobs but %s needs %s: one job runs one way; give prompts/messages (or Converse model_input) and native model_input bodies in separate jobs",
				fileLabel(p.Files[sum.File]), sum.Invocation, fileLabel(p.Files[sums[first].File]), invocation)
		}
	}
	for _, r := range results {
		bad += r.Count
		for _, h := range r.Hits {
			all = append(all, located{h.Unit, h.Line, fmt.Sprintf("duplicate id %q (also %s); ids must be unique within a job",
				service.Truncate(h.ID, 80), where(h.PrevUnit, h.PrevLine))})
		}
	}
	if bad == 0 {
		return ""
	}
	slices.SortStableFunc(all, func(a, b located) int { return cmp.Or(cmp.Compare(a.unit, b.unit), cmp.Compare(a.line, b.line)) })
	var lines []string
	for _, q := range all[:min(len(all), maxFileProblems)] {
		lines = append(lines, where(q.unit, q.line)+": "+q.msg)
	}
	return fmt.Sprintf("%d of %d lines are invalid; nothing was submitted; fix the files and submit again. First problems:\n%s",
		bad, count, strings.Join(lines, "\n"))
}

// segmentRecords is about how many records one split holds (32 MB of
// sizes): the job's records are split a segment (consecutive units) at a
// time, so the finish holds one segment's sizes whatever the job's size.
// Parts never cross a segment; a job within one segment (every job a single
// pass takes) splits exactly as a single pass does.
var segmentRecords = 4_000_000 // a variable so a test can lower it

// splitSegments splits the job's records into parts, a segment at a time.
// Every segment holds at least segmentRecords/2 records (the last one is
// merged into the one before when smaller), so none leaves a part under a
// provider's minimum.
func (s *Service) splitSegments(ctx context.Context, j *job.Job, sums []unitSummary, lim service.BatchLimits) ([]int, error) {
	var segs [][2]int // units [a, b)
	a, acc := 0, 0
	for k, sum := range sums {
		if acc+sum.Records > segmentRecords && acc >= segmentRecords/2 {
			segs, a, acc = append(segs, [2]int{a, k}), k, 0
		}
		acc += sum.Records
	}
	if n := len(segs); n > 0 && acc < segmentRecords/2 {
		segs[n-1][1] = len(sums)
	} else {
		segs = append(segs, [2]int{a, len(sums)})
	}
	var parts []int
	base := 0
	for _, sg := range segs {
		sizes, err := s.unitSizes(ctx, j, sg[0], sg[1])
		if err != nil {
			return nil, err
		}
		ps, err := service.Split(sizes, lim)
		var fe *job.FieldError
		if errors.As(err, &fe) {
			var i int
			if _, serr := fmt.Sscanf(fe.Field, "records[%d]", &i); serr == nil {
				fe.Field = fmt.Sprintf("records[%d]", base+i) // the job's record, not the segment's
			}
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, ps...)
		base += len(sizes)
	}
	return parts, nil
}

// unitSizes reads the record sizes of units [a, b), in order.
func (s *Service) unitSizes(ctx context.Context, j *job.Job, a, b int) ([]int, error) {
	var sizes []int
	for k := a; k < b; k++ {
		raw, err := s.getBytes(ctx, fanoutURI(j, "sizes", unitName(k)+".bin"))
		if err != nil {
			return nil, fmt.Errorf("read record sizes of %s: %w", j.ID, err)
		}
		for len(raw) > 0 {
			v, n := binary.Uvarint(raw)
			if n <= 0 {
				return nil, fmt.Errorf("record sizes of %s unit %d: bad entry", j.ID, k)
			}
			sizes = append(sizes, int(v))
			raw = raw[n:]
		}
	}
	return sizes, nil
}
