// Package ingest turns provider output files into record results: it streams
// each JSONL output line by line, parses lines with a provider's Parser, moves
// big outputs to object storage, writes records in batches with bounded
// concurrency and saves checkpoints, so an interrupted ingest resumes where it
// stopped and a replay never double counts (it runs on "Job Output Ready").
package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Defaults for the Ingester's zero fields.
const (
	// DefaultBatchSize is DynamoDB BatchWriteItem's limit: a batch of a job
	// that keeps one item per record is one write call.
	DefaultBatchSize = 25
	// DefaultPackedBatchSize is the batch of a job whose records are packed
	// (job.RecordSet.Packed): a chunk's records (maxBatchBytes and the
	// in-flight budget still bound its bytes). The store packs only the
	// records of one call together, and providers answer in their own
	// order, so the more records a call has the fuller its pages.
	DefaultPackedBatchSize = DefaultChunkLines
	// DefaultWorkers bounds batch writes in flight.
	DefaultWorkers = 16
	// DefaultChunkLines is how often (in lines) a checkpoint is taken.
	DefaultChunkLines = 5_000
	// DefaultKeepBadLines is how many bad lines are returned with details.
	DefaultKeepBadLines = 20
	// DefaultMaxInFlightBytes bounds the record bytes queued or being written.
	// Writes, not reading, bound ingest: 16 workers × 25 records of a few KB
	// are well under 1 MB, so a deeper queue only raised peak RSS (64 MB here
	// put a 106 MB file's ingest at 66 MB peak RSS).
	DefaultMaxInFlightBytes = 16 << 20
	// DefaultSaveTimeout bounds one checkpoint save.
	DefaultSaveTimeout = 10 * time.Second

	// maxBatchBytes flushes a batch early when its outputs are big, so one
	// batch of 25 large outputs (moved to blobs by the worker) stays bounded.
	maxBatchBytes = 8 << 20
	// maxPackedBatchBytes bounds a packed batch (DefaultPackedBatchSize
	// records): the store holds the batch, its compressed pages and a
	// page of documents while it writes (memprobe -moto, 2026-12-03: 53 MB
	// peak RSS at 2 MB, 85 MB at 4 MB before pooled page buffers).
	maxPackedBatchBytes = 2 << 20
	// recordOverhead approximates a record's fixed fields, for the byte budget.
	recordOverhead = 256
	maxReasonBytes = 200
)

// Parser turns one output line into a record. An error marks the line bad
// (truncated JSON, wrong types, no recordId...): it is counted, never fatal.
type Parser func(line []byte) (job.Record, error)

// IDResolver maps the record id the provider saw (one the suite generated, safe
// for every provider) back to the record the caller gave: its id and its input
// ordinal (providers answer in their own order); ok is false for an id the job
// never had. An error says it could not answer (a read of the ids failed): the
// ingest stops there, to resume from its checkpoint, instead of counting the
// line as bad.
type IDResolver func(providerID string) (caller job.RecordKey, ok bool, err error)

// RecordWriter writes record results idempotently (store.Store satisfies it).
type RecordWriter interface {
	PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error
}

// CheckpointSaver persists the ingest position of a job (usually onto the job item).
type CheckpointSaver interface {
	SaveCheckpoint(ctx context.Context, jobID string, cp job.Checkpoint) error
}

// SaveFunc adapts a function to CheckpointSaver.
type SaveFunc func(ctx context.Context, jobID string, cp job.Checkpoint) error

// SaveCheckpoint calls f.
func (f SaveFunc) SaveCheckpoint(ctx context.Context, jobID string, cp job.Checkpoint) error {
	return f(ctx, jobID, cp)
}

// Blobs is the object storage the ingester reads outputs from and writes big outputs to.
type Blobs interface {
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
}

var (
	_ Blobs        = blob.Store(nil)
	_ RecordWriter = store.Store(nil)
)

// File is one output file of one part (provider job) of a job.
type File struct {
	Part int
	URI  string
}

// BadLine is a line that could not be used, with the part whose file holds it.
type BadLine struct {
	Part int `json:"part"`
	jsonl.BadLine
}

// Result is the outcome of an Ingest call.
type Result struct {
	// Checkpoint holds the final counters on success; its Part is then one past
	// the last file's part, so a replayed Ingest with it skips every file and
	// returns the same totals. On error it is the last checkpoint saved: every
	// line before it is written and counted exactly once.
	job.Checkpoint
	// Bad holds the first bad lines met in this call, with line numbers (lines
	// before a resumed checkpoint were reported by the earlier call); the
	// count of all of them is BadLines.
	Bad []BadLine
	// Duplicates counts lines of this call whose recordId an earlier line of
	// the same file already had; they are neither counted nor written.
	Duplicates int
	// Written counts records written in this call.
	Written int
}

// MissingFileError: an output file is not there. It unwraps to blob.ErrNotFound;
// the caller decides whether that fails the job or only the part.
type MissingFileError struct {
	File File
	Err  error
}

func (e *MissingFileError) Error() string {
	return fmt.Sprintf("ingest: output of part %d missing (%s): %v", e.File.Part, e.File.URI, e.Err)
}

func (e *MissingFileError) Unwrap() error { return e.Err }

// Ingester reads provider output into record results. Zero-valued tuning fields take the defaults.
type Ingester struct {
	Records RecordWriter
	Blobs   Blobs
	// Checkpoints saves progress; nil saves none (a re-run then starts over).
	Checkpoints CheckpointSaver
	// ResultsPrefix is where outputs over job.MaxInlineOutputBytes go:
	// <ResultsPrefix>/<jobID>/<recordID>.out (e.g. s3://bucket/results).
	ResultsPrefix string

	BatchSize    int
	Workers      int
	ChunkLines   int
	MaxLineBytes int // per output line; 0 is jsonl.DefaultMaxLineBytes
	// MaxLineBytesFor, when set, raises the cap for a job whose output lines
	// may be longer (they repeat a big input).
	MaxLineBytesFor  func(*job.Job) int
	KeepBadLines     int
	MaxInFlightBytes int64
	SaveTimeout      time.Duration
	Log              *slog.Logger
}

// Ingest reads files (any order; at most one per part) into records of j and
// returns the counters. It resumes from j.Checkpoint: files of earlier parts are
// skipped and the checkpoint's file is read from its offset with its counters.
// resolve, when not nil, maps the provider-side record id of a line to the
// caller's record id; lines with ids it does not know count as bad. j is not
// modified.
func (in *Ingester) Ingest(ctx context.Context, j *job.Job, files []File, parse Parser, resolve IDResolver) (Result, error) {
	if err := in.validate(j, parse); err != nil {
		return Result{}, err
	}
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b File) int { return cmp.Compare(a.Part, b.Part) })
	for i := 1; i < len(files); i++ {
		if files[i].Part == files[i-1].Part {
			return Result{}, fmt.Errorf("ingest: job %s: two output files for part %d (%s, %s)", j.ID, files[i].Part, files[i-1].URI, files[i].URI)
		}
	}
	var start job.Checkpoint
	if j.Checkpoint != nil {
		start = *j.Checkpoint
	}
	r := in.newRun(ctx, j, parse, resolve, start)
	t0 := time.Now()
	r.log.Info("ingest start", "files", len(files), "part", start.Part, "offset", start.Offset, "line", start.Line)

	r.startWorkers()
	readErr := r.readFiles(files)
	r.stopWorkers()

	res := r.result()
	err := r.firstErr()
	if err == nil && readErr != nil {
		err = readErr
	}
	if cause := context.Cause(ctx); cause != nil && err != nil && !errors.Is(err, cause) {
		// A cancelled read can surface as a transport error; keep the cause visible.
		err = fmt.Errorf("%w: %w", cause, err)
	}
	if err != nil {
		r.log.Warn("ingest stopped", "err", err, "checkpoint_part", res.Part, "checkpoint_line", res.Line,
			"succeeded", res.Succeeded, "failed", res.Failed, "bad_lines", res.BadLines)
		return res, err
	}
	r.log.Info("ingest done", "succeeded", res.Succeeded, "failed", res.Failed, "bad_lines", res.BadLines,
		"duplicates", res.Duplicates, "written", res.Written, "input_tokens", res.InputTokens,
		"output_tokens", res.OutputTokens, "took", time.Since(t0).Round(time.Millisecond))
	return res, nil
}

func (in *Ingester) validate(j *job.Job, parse Parser) error {
	switch {
	case in.Records == nil:
		return errors.New("ingest: no RecordWriter")
	case in.Blobs == nil:
		return errors.New("ingest: no Blobs")
	case in.ResultsPrefix == "":
		return errors.New("ingest: no ResultsPrefix for big outputs")
	case parse == nil:
		return errors.New("ingest: no Parser")
	case j == nil || j.ID == "":
		return errors.New("ingest: no job id")
	}
	if _, _, err := blob.ParseURI(in.ResultsPrefix); err != nil {
		return fmt.Errorf("ingest: ResultsPrefix: %w", err)
	}
	return nil
}

// or returns v, or def when v is not positive.
func or[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
