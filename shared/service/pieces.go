package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// PieceURI is piece p of a kept list (IDsURI, InputsURI): a job over many
// files writes its parts in parallel, each its own piece of the lists.
func PieceURI(uri string, p int) string {
	return strings.TrimSuffix(uri, ".jsonl") + fmt.Sprintf("/part-%05d.jsonl", p)
}

// OpenKept opens the kept list of j at uri (IDsURI, InputsURI): the object
// itself or, for a job over many files, its pieces one per part in part
// order, read as one stream. blob.ErrNotFound when neither is there.
func OpenKept(ctx context.Context, blobs Opener, j *job.Job, uri string) (io.ReadCloser, error) {
	rc, err := blobs.Open(ctx, uri, 0)
	if !errors.Is(err, blob.ErrNotFound) || len(j.Parts) == 0 {
		return rc, err
	}
	first, perr := blobs.Open(ctx, PieceURI(uri, 0), 0)
	if perr != nil {
		return nil, err // not a job of pieces: the list's own absence
	}
	return &piecesReader{ctx: ctx, blobs: blobs, uri: uri, n: len(j.Parts), next: 1, cur: first}, nil
}

// Opener opens objects (the reading half of Blobs).
type Opener interface {
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
}

// piecesReader reads pieces 0..n-1 of a kept list in turn; a piece missing
// past the first is an error (the list would be cut short).
type piecesReader struct {
	ctx   context.Context
	blobs Opener
	uri   string
	n     int
	next  int
	cur   io.ReadCloser
}

func (p *piecesReader) Read(b []byte) (int, error) {
	for {
		n, err := p.cur.Read(b)
		if !errors.Is(err, io.EOF) {
			return n, err
		}
		if p.next == p.n {
			return n, io.EOF
		}
		p.cur.Close()
		rc, oerr := p.blobs.Open(p.ctx, PieceURI(p.uri, p.next), 0)
		if oerr != nil {
			p.cur = io.NopCloser(strings.NewReader(""))
			return n, fmt.Errorf("open piece %d of %s: %w", p.next, p.uri, oerr)
		}
		p.cur = rc
		p.next++
		if n > 0 {
			return n, nil
		}
	}
}

func (p *piecesReader) Close() error { return p.cur.Close() }
