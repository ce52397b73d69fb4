package service

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// OrdinalsURI is where a retry keeps its records' input ordinals in the job
// first retried (job.Job.KeptOrdinals): one number per line, record i's on
// line i+1, beside ids.jsonl.
func OrdinalsURI(j *job.Job) string { return blob.Join(j.InputURI, "ordinals.jsonl") }

// KeyRecords settles how a new job's records are keyed before it is stored:
// by input ordinal (every new job), with a retry's ordinals kept beside its
// input; by id only when byID (a retry of a job stored before ordinals is
// keyed as its parent, so the merged view finds its records by id). Records
// keyed by ordinal are stored packed (job.RecordSet.Packed).
func KeyRecords(ctx context.Context, blobs Blobs, j *job.Job, ordinals []int, byID bool) error {
	j.InputOrder, j.PackedRecords = !byID, !byID
	if byID || ordinals == nil {
		return nil
	}
	if len(ordinals) != j.RecordCount {
		return fmt.Errorf("job %s: %d ordinals for %d records", j.ID, len(ordinals), j.RecordCount)
	}
	if err := WriteOrdinals(ctx, blobs, OrdinalsURI(j), ordinals); err != nil {
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	j.KeptOrdinals = true
	return nil
}

// WriteOrdinals stores a list of record ordinals at uri, one a line: what
// Ordinals and ReadOrdinals read back by position.
func WriteOrdinals(ctx context.Context, blobs Blobs, uri string, ordinals []int) error {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriter(pw)
		for _, o := range ordinals {
			w.WriteString(strconv.Itoa(o))
			w.WriteByte('\n')
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := blobs.Put(ctx, uri, pr, "application/jsonl"); err != nil {
		return fmt.Errorf("write record ordinals %s: %w", uri, err)
	}
	return nil
}

// Ordinals returns the input ordinal of j's record at each position of its
// input: the kept list of a retry, else the position itself. A position past
// the list answers ok false.
func Ordinals(ctx context.Context, blobs Opener, j *job.Job) (func(pos int) (int, bool), error) {
	if !j.KeptOrdinals {
		return func(pos int) (int, bool) { return pos, pos >= 0 }, nil
	}
	ord, err := ReadOrdinals(ctx, blobs, OrdinalsURI(j))
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", j.ID, err)
	}
	return ord, nil
}

// RunOrdinalsURI is where a run over an input file of its own (a deadline
// re-drive's OnDemand.InputURI, a subset of the job's records) keeps the job
// ordinal of each of its lines.
func RunOrdinalsURI(input string) string {
	return strings.TrimSuffix(input, ".jsonl") + ".ordinals.jsonl"
}

// RunOrdinals is Ordinals for the input an on-demand run of j reads: its own
// file's kept list when it has one (a re-drive), else the job's.
func RunOrdinals(ctx context.Context, blobs Opener, j *job.Job) (func(pos int) (int, bool), error) {
	if j.OnDemand == nil || j.OnDemand.InputURI == "" {
		return Ordinals(ctx, blobs, j)
	}
	ord, err := ReadOrdinals(ctx, blobs, RunOrdinalsURI(j.OnDemand.InputURI))
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", j.ID, err)
	}
	return ord, nil
}

// ReadOrdinals reads a list WriteOrdinals stored: the ordinal at each
// position, ok false past the list. A missing list is an error: a run that
// needs one must not fall back to positions.
func ReadOrdinals(ctx context.Context, blobs Opener, uri string) (func(pos int) (int, bool), error) {
	rc, err := blobs.Open(ctx, uri, 0)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("record ordinals %s missing: %w", uri, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open record ordinals %s: %w", uri, err)
	}
	defer rc.Close()
	var ords []int
	sc := bufio.NewScanner(rc)
	for sc.Scan() {
		o, err := strconv.Atoi(sc.Text())
		if err != nil || o < 0 {
			return nil, fmt.Errorf("record ordinals %s: line %d: %q is not an ordinal", uri, len(ords)+1, sc.Text())
		}
		ords = append(ords, o)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read record ordinals %s: %w", uri, err)
	}
	return func(pos int) (int, bool) {
		if pos < 0 || pos >= len(ords) {
			return 0, false
		}
		return ords[pos], true
	}, nil
}
