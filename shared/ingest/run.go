package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// run is the state of one Ingest call.
//
// The reading goroutine parses lines, counts them and sends batches to the
// workers. Every ChunkLines lines (and at the end of each file) it closes a
// chunk: the checkpoint of that position. A chunk's checkpoint becomes ready
// once every batch of it and of all earlier chunks is written; the saver
// goroutine saves the latest ready one. So a saved checkpoint never runs ahead
// of the writes, and reading never waits for a save.
type run struct {
	in      *Ingester
	j       *job.Job
	parse   Parser
	resolve IDResolver
	log     *slog.Logger
	// schema checks each succeeded output (nil: the job has no output schema).
	schema *outschema.Schema

	batchSize, chunkLines, keepBad, maxLine int
	maxBatchBytes                           int64
	saveTimeout                             time.Duration
	records                                 job.RecordSet

	parent context.Context
	ctx    context.Context // cancelled on a write or save error, or with parent
	cancel context.CancelCauseFunc

	work    chan batch
	budget  *budget
	workers sync.WaitGroup
	notify  chan struct{}
	saverWG sync.WaitGroup

	mu         sync.Mutex
	err        error
	pending    map[int]int // chunk -> batches sent and not yet written
	closed     []chunk     // closed chunks waiting for their batches, oldest first
	ready      *job.Checkpoint
	saved      job.Checkpoint
	saveFailed bool
	written    int

	// Reading goroutine only.
	counts job.Checkpoint
	chunk  int
	cur    batch
	// lastLen is the previous batch's length: a packed batch is cut by bytes
	// long before its 5,000 records, so sizing each one for 5,000 (272 B a
	// record) held ~1.4 MB of empty slice per batch in flight.
	lastLen int
	bad     []BadLine
	dups    int
}

type batch struct {
	chunk int
	recs  []job.Record
	bytes int64
}

type chunk struct {
	seq int
	cp  job.Checkpoint
}

func (in *Ingester) newRun(ctx context.Context, j *job.Job, parse Parser, resolve IDResolver, start job.Checkpoint) *run {
	log := in.Log
	if log == nil {
		log = slog.Default()
	}
	ictx, cancel := context.WithCancelCause(ctx)
	workers := or(in.Workers, DefaultWorkers)
	maxLine := or(in.MaxLineBytes, jsonl.DefaultMaxLineBytes)
	if in.MaxLineBytesFor != nil {
		maxLine = max(maxLine, in.MaxLineBytesFor(j))
	}
	schema, err := outschema.ForJob(j)
	if err != nil {
		// Checked at submit; a schema that no longer compiles leaves outputs as text.
		log.Error("ingest: output schema unusable; outputs are stored unchecked", "job", j.ID, "error", err)
	}
	return &run{
		schema:        schema,
		in:            in,
		j:             j,
		parse:         parse,
		resolve:       resolve,
		log:           log.With("job", j.ID),
		batchSize:     or(in.BatchSize, defaultBatchSize(j.RecordSet())),
		maxBatchBytes: batchBytes(j.RecordSet()),
		chunkLines:    or(in.ChunkLines, DefaultChunkLines),
		keepBad:       or(in.KeepBadLines, DefaultKeepBadLines),
		maxLine:       maxLine,
		saveTimeout:   or(in.SaveTimeout, DefaultSaveTimeout),
		records:       j.RecordSet(),
		parent:        ctx,
		ctx:           ictx,
		cancel:        cancel,
		work:          make(chan batch, workers),
		budget:        newBudget(or(in.MaxInFlightBytes, DefaultMaxInFlightBytes)),
		notify:        make(chan struct{}, 1),
		pending:       map[int]int{},
		saved:         start,
		counts:        start,
	}
}

func defaultBatchSize(rs job.RecordSet) int {
	if rs.Packed {
		return DefaultPackedBatchSize
	}
	return DefaultBatchSize
}

func batchBytes(rs job.RecordSet) int64 {
	if rs.Packed {
		return maxPackedBatchBytes
	}
	return maxBatchBytes
}

func (r *run) startWorkers() {
	for range or(r.in.Workers, DefaultWorkers) {
		r.workers.Go(r.worker)
	}
	r.saverWG.Go(func() {
		for range r.notify {
			r.saveReady()
		}
		r.saveReady()
	})
}

// stopWorkers waits for every batch sent to be written (or dropped after a
// failure) and for the last ready checkpoint to be saved.
func (r *run) stopWorkers() {
	close(r.work)
	r.workers.Wait()
	close(r.notify)
	r.saverWG.Wait()
	r.cancel(nil)
}

func (r *run) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.cancel(err)
}

func (r *run) firstErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *run) result() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Result{Checkpoint: r.saved, Bad: r.bad, Duplicates: r.dups, Written: r.written}
}

// readFiles runs in the calling goroutine. Its errors (a missing file, a broken
// stream) stop reading but let the batches already sent be written, so the
// checkpoint keeps everything done so far.
func (r *run) readFiles(files []File) error {
	for _, f := range files {
		if f.Part < r.counts.Part {
			continue // ingested by an earlier call
		}
		if f.Part > r.counts.Part {
			r.counts.Part, r.counts.Offset, r.counts.Line = f.Part, 0, 0
		}
		if err := r.readFile(f); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) readFile(f File) error {
	t0 := time.Now()
	startLine, startOff := r.counts.Line, r.counts.Offset
	// Duplicates are judged per file; a resumed file first relearns the ids
	// its earlier lines contributed, so a duplicate across the checkpoint is
	// still dropped exactly as in one clean run.
	seen, err := r.seenBefore(f, startOff)
	if err != nil {
		return err
	}
	rc, err := r.in.Blobs.Open(r.ctx, f.URI, startOff)
	if err != nil {
		return r.openErr(f, err)
	}
	defer rc.Close()

	bad := &jsonl.BadLog{Keep: max(r.keepBad-len(r.bad), -1)}
	if bad.Keep == 0 {
		bad.Keep = -1
	}
	before := r.counts
	dupsBefore := r.dups
	rd := jsonl.NewReader(rc, jsonl.Options{MaxLineBytes: r.maxLine, StartOffset: startOff, StartLine: startLine, Bad: bad})
	defer func() {
		for _, b := range bad.Lines() {
			r.bad = append(r.bad, BadLine{Part: f.Part, BadLine: b})
		}
	}()
	chunkStart := startLine
	skipped := 0
	for n := 1; rd.Next(); n++ {
		// Over-long lines the reader skipped are bad lines too.
		if s := rd.Skipped(); s != skipped {
			r.counts.BadLines += s - skipped
			skipped = s
		}
		if err := r.line(rd, seen); err != nil {
			return r.stopErr(f, rd, err)
		}
		r.counts.Offset, r.counts.Line = rd.Offset(), rd.Line()
		if r.counts.Line-chunkStart >= r.chunkLines {
			if err := r.closeChunk(r.counts); err != nil {
				return r.stopErr(f, rd, err)
			}
			chunkStart = r.counts.Line
		}
		if n%256 == 0 && r.ctx.Err() != nil {
			return r.stopErr(f, rd, context.Cause(r.ctx))
		}
	}
	r.counts.BadLines += rd.Skipped() - skipped
	r.counts.Offset, r.counts.Line = rd.Offset(), rd.Line()
	if err := rd.Err(); err != nil {
		// Everything before the break is processed: checkpoint it, then report.
		_ = r.closeChunk(r.counts)
		return fmt.Errorf("ingest: read part %d (%s) after line %d: %w", f.Part, f.URI, rd.Line(), err)
	}
	// The end of a file points at the start of the next part.
	next := r.counts
	next.Part, next.Offset, next.Line = f.Part+1, 0, 0
	if err := r.closeChunk(next); err != nil {
		return r.stopErr(f, rd, err)
	}
	r.log.Info("ingest file done", "part", f.Part, "uri", f.URI, "from_line", startLine, "lines", rd.Line()-startLine,
		"succeeded", r.counts.Succeeded-before.Succeeded, "failed", r.counts.Failed-before.Failed,
		"bad_lines", r.counts.BadLines-before.BadLines, "duplicates", r.dups-dupsBefore,
		"took", time.Since(t0).Round(time.Millisecond))
	r.counts = next
	return nil
}

func (r *run) stopErr(f File, rd *jsonl.Reader, err error) error {
	return fmt.Errorf("ingest: part %d (%s) stopped at line %d: %w", f.Part, f.URI, rd.Line(), err)
}

func (r *run) openErr(f File, err error) error {
	if errors.Is(err, blob.ErrNotFound) {
		return &MissingFileError{File: f, Err: err}
	}
	return fmt.Errorf("ingest: open part %d (%s) at %d: %w", f.Part, f.URI, r.counts.Offset, err)
}

// line handles one line: count it, and queue its record unless it is bad or a duplicate.
func (r *run) line(rd *jsonl.Reader, seen map[string]struct{}) error {
	rec, reason, err := r.check(rd.Bytes())
	if err != nil {
		return err
	}
	if reason != "" {
		r.counts.BadLines++
		rd.MarkBad(reason)
		return nil
	}
	if _, dup := seen[rec.ID]; dup {
		r.dups++
		return nil
	}
	seen[rec.ID] = struct{}{}
	if r.schema != nil {
		r.schema.Apply(&rec)
	}
	switch rec.Status {
	case job.RecordSucceeded:
		r.counts.Succeeded++
	case job.RecordFailed:
		r.counts.Failed++
	}
	r.counts.InputTokens += rec.InputTokens
	r.counts.OutputTokens += rec.OutputTokens
	r.counts.CacheReadTokens += rec.CacheReadTokens
	r.counts.CacheWriteTokens += rec.CacheWriteTokens
	rec.JobID = r.j.ID
	rec.ExpiresAt = r.j.ExpiresAt
	if r.j.Mode == job.ModeBatch {
		rec.Path = job.PathBatch
	}
	size := int64(len(rec.Output)+len(rec.ErrorMessage)+len(rec.StopReason)+len(rec.ID)) + recordOverhead
	if r.cur.recs == nil {
		r.cur.recs = make([]job.Record, 0, min(r.batchSize, max(r.lastLen+r.lastLen/8, 64)))
	}
	r.cur.recs = append(r.cur.recs, rec)
	r.cur.bytes += size
	if len(r.cur.recs) >= r.batchSize || r.cur.bytes >= r.maxBatchBytes {
		// A failed send means the run is stopping; the chunk stays unwritten and
		// the loop notices the cancelled context.
		_ = r.flush()
	}
	return nil
}

// check parses a line and says why it is bad ("" when it is good); an error
// is the resolver's failure to answer, not the line's.
func (r *run) check(line []byte) (rec job.Record, reason string, err error) {
	rec, perr := r.safeParse(line)
	switch {
	case perr != nil:
		return rec, truncate(perr.Error()), nil
	case rec.ID == "":
		return rec, "missing recordId", nil
	case !job.ValidRecordID(rec.ID):
		return rec, truncate(fmt.Sprintf("invalid recordId %q", rec.ID)), nil
	case rec.Status != job.RecordSucceeded && rec.Status != job.RecordFailed:
		return rec, truncate(fmt.Sprintf("record %s: unknown status %q", rec.ID, rec.Status)), nil
	}
	if r.resolve != nil {
		k, ok, err := r.resolve(rec.ID)
		if err != nil {
			return rec, "", fmt.Errorf("resolve record id %q: %w", rec.ID, err)
		}
		if !ok {
			return rec, fmt.Sprintf("unknown recordId %q", rec.ID), nil
		}
		rec.ID, rec.Ordinal = k.ID, k.Ordinal
	}
	return rec, "", nil
}

// safeParse turns a parser panic into a bad line: one odd line must not make
// every retry of the ingest crash at the same place.
func (r *run) safeParse(line []byte) (rec job.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parser panic: %v", p)
		}
	}()
	return r.parse(line)
}

// seenBefore rebuilds the ids of a file's lines before offset.
func (r *run) seenBefore(f File, offset int64) (map[string]struct{}, error) {
	seen := map[string]struct{}{}
	if offset == 0 {
		return seen, nil
	}
	rc, err := r.in.Blobs.Open(r.ctx, f.URI, 0)
	if err != nil {
		return nil, r.openErr(f, err)
	}
	defer rc.Close()
	rd := jsonl.NewReader(io.LimitReader(rc, offset), jsonl.Options{MaxLineBytes: r.maxLine, Bad: &jsonl.BadLog{Keep: -1}})
	for rd.Next() {
		rec, reason, err := r.check(rd.Bytes())
		if err != nil {
			return nil, fmt.Errorf("ingest: reread part %d (%s) at line %d: %w", f.Part, f.URI, rd.Line(), err)
		}
		if reason == "" {
			seen[rec.ID] = struct{}{}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("ingest: reread part %d (%s) before offset %d: %w", f.Part, f.URI, offset, err)
	}
	return seen, nil
}

// flush sends the current batch to the workers.
func (r *run) flush() error {
	if len(r.cur.recs) == 0 {
		return nil
	}
	b := r.cur
	b.chunk = r.chunk
	r.cur = batch{}
	r.lastLen = len(b.recs)
	// Count the batch before sending: a worker may finish it at once, and a
	// batch that never gets written must keep its chunk from being saved.
	r.mu.Lock()
	r.pending[b.chunk]++
	r.mu.Unlock()
	if err := r.budget.acquire(r.ctx, b.bytes); err != nil {
		return context.Cause(r.ctx)
	}
	select {
	case r.work <- b:
		return nil
	case <-r.ctx.Done():
		r.budget.release(b.bytes)
		return context.Cause(r.ctx)
	}
}

// closeChunk ends the current chunk at cp.
func (r *run) closeChunk(cp job.Checkpoint) error {
	err := r.flush()
	r.mu.Lock()
	r.closed = append(r.closed, chunk{seq: r.chunk, cp: cp})
	r.advance()
	r.mu.Unlock()
	r.chunk++
	return err
}

// advance moves fully written chunks to ready; r.mu is held.
func (r *run) advance() {
	moved := false
	for len(r.closed) > 0 && r.pending[r.closed[0].seq] == 0 {
		c := r.closed[0]
		r.closed = r.closed[1:]
		delete(r.pending, c.seq)
		cp := c.cp
		r.ready = &cp
		moved = true
	}
	if moved {
		select {
		case r.notify <- struct{}{}:
		default: // a save is already due; it will pick up the latest
		}
	}
}

func (r *run) worker() {
	for b := range r.work {
		if r.ctx.Err() == nil {
			if err := r.write(b); err != nil {
				r.fail(err)
			} else {
				r.mu.Lock()
				r.written += len(b.recs)
				r.pending[b.chunk]--
				r.advance()
				r.mu.Unlock()
			}
		}
		r.budget.release(b.bytes)
	}
}

// write moves big outputs to blobs, then writes the batch.
func (r *run) write(b batch) error {
	w := store.Writer{Records: r.in.Records, Objects: r.in.Blobs, Prefix: r.in.ResultsPrefix}
	if err := w.Put(r.ctx, r.records, b.recs); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	return nil
}

// saveReady saves the latest ready checkpoint. Saves run detached from
// cancellation (bounded by SaveTimeout): when the caller's deadline hits, the
// progress already written is still worth keeping.
func (r *run) saveReady() {
	r.mu.Lock()
	cp := r.ready
	r.ready = nil
	failed := r.saveFailed
	r.mu.Unlock()
	if cp == nil || failed {
		return
	}
	if r.in.Checkpoints != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.parent), r.saveTimeout)
		err := r.in.Checkpoints.SaveCheckpoint(ctx, r.j.ID, *cp)
		cancel()
		if err != nil {
			r.mu.Lock()
			r.saveFailed = true
			r.mu.Unlock()
			r.fail(fmt.Errorf("ingest: save checkpoint at part %d line %d: %w", cp.Part, cp.Line, err))
			return
		}
		r.log.Debug("checkpoint saved", "part", cp.Part, "line", cp.Line, "offset", cp.Offset)
	}
	r.mu.Lock()
	r.saved = *cp
	r.mu.Unlock()
}

func truncate(s string) string {
	if len(s) <= maxReasonBytes {
		return s
	}
	return s[:maxReasonBytes] + "..."
}

// budget bounds the record bytes queued or being written, so a file of big
// outputs cannot pile up in memory behind slow writes.
type budget struct {
	mu   sync.Mutex
	max  int64
	used int64
	wake chan struct{}
}

func newBudget(n int64) *budget { return &budget{max: n, wake: make(chan struct{})} }

func (b *budget) acquire(ctx context.Context, n int64) error {
	n = min(n, b.max) // a batch bigger than the budget waits for an empty pipeline
	for {
		b.mu.Lock()
		if b.used+n <= b.max {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *budget) release(n int64) {
	n = min(n, b.max)
	b.mu.Lock()
	b.used -= n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}
