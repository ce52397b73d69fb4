package transfer

// The readers of input files: capped at the upload limit, and resumed from
// their offset after a transient read error.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// limitErr is returned by countingReader past MaxUploadBytes.
var errTooBig = errors.New("input file too big")

type cappedReader struct {
	r   io.Reader
	n   int64
	max int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n, errTooBig
	}
	return n, err
}

// inputTries bounds what a transient fault may cost a read of an input file
// (S3 throttling that outlasted the SDK's own retries, a connection reset
// mid-body): each open, and the resumes of one pass, are tried this often
// before the error goes to the event's retry.
const inputTries = 4

// inputBackoff is the wait before try n+1 of an input read (n from 1).
func inputBackoff(n int) time.Duration { return time.Duration(100<<(n-1)) * time.Millisecond }

// transientRead: an input read worth trying again (not a changed or missing
// object, a caller's limit, or the end of the run).
func transientRead(ctx context.Context, err error) bool {
	var fe *job.FieldError
	return err != nil && ctx.Err() == nil && !errors.Is(err, blob.ErrChanged) && !errors.Is(err, blob.ErrNotFound) &&
		!errors.Is(err, errTooBig) && !errors.As(err, &fe)
}

// retryRead calls fn until it succeeds, fails for good, or inputTries tries failed.
func retryRead[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	for n := 1; ; n++ {
		v, err := fn()
		if !transientRead(ctx, err) || n == inputTries {
			return v, err
		}
		t := time.NewTimer(inputBackoff(n))
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
	}
}

// resumingReader reads a pinned version of an input file and, when a read
// fails with a transient error, reopens the same version where it stopped
// (giving up after inputTries resumes in a row without progress):
// a reset connection costs a ranged GET, not the pass (and, once the
// event's retries are spent, the job). A version replaced meanwhile ends
// the read with the input field's "changed" error.
type resumingReader struct {
	ctx        context.Context
	v          blob.Versioned
	field, uri string
	pin        blob.Version
	rc         io.ReadCloser
	off        int64
	resumes    int   // resumes in a row that made no progress
	resumedAt  int64 // offset of the last resume
}

func (r *resumingReader) Read(p []byte) (int, error) {
	for {
		n, err := r.rc.Read(p)
		r.off += int64(n)
		if r.off > r.resumedAt {
			r.resumes = 0 // the last resume made progress: a long read may meet several resets
		}
		if err == nil || err == io.EOF || r.resumes+1 >= inputTries || !transientRead(r.ctx, err) {
			return n, err
		}
		r.resumes++
		r.resumedAt = r.off
		r.rc.Close()
		rc, oerr := retryRead(r.ctx, func() (io.ReadCloser, error) { return r.v.OpenVersionAt(r.ctx, r.uri, r.pin, r.off) })
		if errors.Is(oerr, blob.ErrChanged) || errors.Is(oerr, blob.ErrNotFound) {
			oerr = changedField(r.field, r.uri)
		}
		if oerr != nil {
			r.rc = io.NopCloser(errReader{oerr})
			return n, fmt.Errorf("resume read of %s at byte %d after %v: %w", r.uri, r.off, err, oerr)
		}
		r.rc = rc
		if n > 0 {
			return n, nil
		}
	}
}

func (r *resumingReader) Close() error { return r.rc.Close() }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
