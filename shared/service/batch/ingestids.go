package batch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// pieceIDs answers provider ids of a job over many files from its per-part
// pieces of ids, holding one piece at a time: ingest reads the outputs in part
// order, so each piece is read about once and memory is one part's ids, not
// the job's (issue 28: ~3 GB for 100 M records).
type pieceIDs struct {
	ctx     context.Context
	blobs   service.Opener
	uri     string
	starts  []int // provider index of each part's first record
	ordinal func(pos int) (int, bool)

	held  int // part whose ids are held (-1: none)
	ids   []string
	loads int // pieces read, for tests
}

func newPieceIDs(ctx context.Context, blobs service.Opener, j *job.Job, ordinal func(int) (int, bool)) *pieceIDs {
	starts := make([]int, len(j.Parts)+1)
	for p, part := range j.Parts {
		starts[p+1] = starts[p] + part.RecordCount
	}
	return &pieceIDs{ctx: ctx, blobs: blobs, uri: service.IDsURI(j), starts: starts, ordinal: ordinal, held: -1}
}

// resolve is an ingest.IDResolver; an error is a failed read of a piece.
func (p *pieceIDs) resolve(pid string) (job.RecordKey, bool, error) {
	i, ok := job.ProviderRecordIndex(pid)
	if !ok || i < 0 || i >= p.starts[len(p.starts)-1] {
		return job.RecordKey{}, false, nil
	}
	part := p.partOf(i)
	if part != p.held {
		if err := p.load(part); err != nil {
			return job.RecordKey{}, false, err
		}
	}
	k := i - p.starts[part]
	if k >= len(p.ids) {
		return job.RecordKey{}, false, nil
	}
	o, ok := p.ordinal(i)
	return job.RecordKey{ID: p.ids[k], Ordinal: o}, ok, nil
}

// partOf is the part holding provider index i (starts is sorted).
func (p *pieceIDs) partOf(i int) int {
	lo, hi := 0, len(p.starts)-2
	for lo < hi {
		m := (lo + hi + 1) / 2
		if p.starts[m] <= i {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

func (p *pieceIDs) load(part int) error {
	p.held, p.ids = -1, p.ids[:0]
	rc, err := p.blobs.Open(p.ctx, service.PieceURI(p.uri, part), 0)
	if err != nil {
		return fmt.Errorf("open record ids piece %d of %s: %w", part, p.uri, err)
	}
	defer rc.Close()
	ids, err := readIDs(rc, p.ids)
	if err != nil {
		return fmt.Errorf("record ids piece %d of %s: %w", part, p.uri, err)
	}
	p.ids, p.held = ids, part
	p.loads++
	return nil
}

// readIDs appends the JSON string ids of r, one a line, to ids.
func readIDs(r io.Reader, ids []string) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	for sc.Scan() {
		var id string
		if err := json.Unmarshal(sc.Bytes(), &id); err != nil {
			return ids, fmt.Errorf("line %d: %w", len(ids)+1, err)
		}
		ids = append(ids, id)
	}
	return ids, sc.Err()
}
