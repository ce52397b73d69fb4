// Package vectors joins embedding jobs and vector indexes: it writes a job's
// vectors, with the caller's record ids and metadata, into the index the job
// named at submit and commits the job once it completed (Sink), and it serves
// the index tools: search by text, list and delete (Tools). Indexes are the
// port of shared/index (Amazon S3 Vectors, or pgvector).
package vectors

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Records pages through a job's stored results.
type Records interface {
	ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error)
}

// Blobs reads and writes object storage.
type Blobs interface {
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
}

// TextKey is the metadata key holding a record's text in the index: stored
// and returned, not filterable (it would not fit the filterable budget).
const TextKey = "text"

// Sink writes embedding jobs into their vector index.
type Sink struct {
	Index   index.Index
	Records Records
	Blobs   Blobs
	Log     *slog.Logger
	// PageSize is how many records are read per page (default 500, one Put).
	PageSize int
}

// MetadataName is the file beside a job's input with its records' ids, texts and metadata.
const MetadataName = "index-metadata.jsonl"

// MetadataURI is where a job's record ids and metadata are kept.
func MetadataURI(inputURI string) string { return blob.Join(inputURI, MetadataName) }

type metaLine struct {
	ID       string         `json:"id"`
	Text     string         `json:"text,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// OpenIndex creates the owner's index, or checks that it matches.
func (s *Sink) OpenIndex(ctx context.Context, owner, model string, t *job.IndexTarget) error {
	ref := index.Ref{Owner: owner, Name: t.Name}
	_, err := s.Index.Open(ctx, ref, index.Spec{Dimension: t.Dimension, Metric: index.Metric(t.Metric), Model: model, Normalize: t.Normalize, NonFilterable: []string{TextKey}})
	var me *index.MismatchError
	switch {
	case errors.As(err, &me):
		return job.Fieldf("index", "%s; use another index name, or submit with the index's %s", me.Error(), me.Field)
	case errors.Is(err, index.ErrInvalid):
		return job.Fieldf("index", "%v", err)
	case err != nil:
		return fmt.Errorf("open index %q: %w", t.Name, err)
	}
	return nil
}

// WriteMetadata keeps each record's caller id, text and metadata, one JSON
// line per record in submit order. Metadata is checked here against the
// index's limits so a bad record is refused at submit.
func (s *Sink) WriteMetadata(ctx context.Context, inputURI string, recs []job.Input) error {
	for i, r := range recs {
		if len(r.Metadata) == 0 {
			continue
		}
		if _, ok := r.Metadata[TextKey]; ok {
			return job.Fieldf(fmt.Sprintf("records[%d].metadata.%s", i, TextKey), "reserved: the index keeps the record's text under this key")
		}
		v := index.Vector{Key: "k", Data: []float32{1}, Metadata: r.Metadata}
		if _, err := index.CheckVectors(index.Info{Dimension: 1, NonFilterable: []string{TextKey}}, []index.Vector{v}); err != nil {
			return job.Fieldf(fmt.Sprintf("records[%d].metadata", i), "%v", errors.Unwrap(err))
		}
	}
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 256<<10)
		enc := json.NewEncoder(w)
		for _, r := range recs {
			if err := enc.Encode(metaLine{ID: r.ID, Text: clip(r.Text), Metadata: r.Metadata}); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := s.Blobs.Put(ctx, MetadataURI(inputURI), pr, "application/jsonl"); err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("write index metadata: %w", err)
	}
	return nil
}

// maxStoredText bounds the text kept beside a vector (S3 Vectors allows
// 40 KB of metadata per vector).
const maxStoredText = 8 << 10

func clip(s string) string {
	if len(s) <= maxStoredText {
		return s
	}
	cut := maxStoredText
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut]
}

// loadMetadata reads the job's metadata lines by caller id.
func (s *Sink) loadMetadata(ctx context.Context, j *job.Job) (map[string]metaLine, error) {
	rc, err := s.Blobs.Open(ctx, MetadataURI(j.InputURI), 0)
	if errors.Is(err, blob.ErrNotFound) {
		return map[string]metaLine{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open index metadata of %s: %w", j.ID, err)
	}
	defer rc.Close()
	out := make(map[string]metaLine, j.RecordCount)
	dec := json.NewDecoder(bufio.NewReaderSize(rc, 256<<10))
	for {
		var m metaLine
		if err := dec.Decode(&m); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("read index metadata of %s: %w", j.ID, err)
		}
		if len(m.Metadata) == 0 && m.Text == "" {
			continue
		}
		out[m.ID] = m
	}
}

// WriteJob writes the vectors of the job's succeeded records into its index,
// a page of records per Put. Keys are the caller's record ids, so a retried
// write replaces what it wrote before.
func (s *Sink) WriteJob(ctx context.Context, j *job.Job) error {
	if j.Index == nil {
		return nil
	}
	ref := index.Ref{Owner: j.Owner, Name: j.Index.Name}
	meta, err := s.loadMetadata(ctx, j)
	if err != nil {
		return err
	}
	size := s.PageSize
	if size <= 0 {
		size = index.MaxVectorsPerPut
	}
	var n, bad int
	vecs := make([]index.Vector, 0, size)
	for recs, err := range store.Pages(ctx, s.Records, j.RecordSet(), store.RecordQuery{Status: job.RecordSucceeded, Limit: size}) {
		if err != nil {
			return fmt.Errorf("read results of %s: %w", j.ID, err)
		}
		vecs = vecs[:0]
		for _, r := range recs {
			out, err := s.output(ctx, r)
			if err != nil {
				return err
			}
			v, err := bedrock.Vector(out)
			if err != nil || len(v) != j.Index.Dimension {
				bad++ // counted and logged: a record without a usable vector is left out
				continue
			}
			iv := index.Vector{Key: r.ID, Data: v}
			if m, ok := meta[r.ID]; ok {
				iv.Metadata = make(map[string]any, len(m.Metadata)+1)
				for k, x := range m.Metadata {
					iv.Metadata[k] = x
				}
				if m.Text != "" {
					iv.Metadata[TextKey] = m.Text
				}
			}
			vecs = append(vecs, iv)
		}
		if len(vecs) > 0 {
			if err := s.Index.Put(ctx, ref, vecs); err != nil {
				return refusal(j, fmt.Errorf("put %d vectors of %s into index %q: %w", len(vecs), j.ID, j.Index.Name, err))
			}
			n += len(vecs)
		}
	}
	s.log().InfoContext(ctx, "vectors written", "job_id", j.ID, "index", j.Index.Name, "vectors", n, "unusable", bad)
	return nil
}

func (s *Sink) output(ctx context.Context, r job.Record) ([]byte, error) {
	if r.OutputRef == "" {
		return []byte(r.Output), nil
	}
	rc, err := s.Blobs.Open(ctx, r.OutputRef, 0)
	if err != nil {
		return nil, fmt.Errorf("open output of record %s: %w", r.ID, err)
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// refusal classifies a failed write: an index that no longer exists or that
// refuses the vectors (limits, its catalog entry) never takes them, whatever
// the retries; anything else may pass on a retry.
func refusal(j *job.Job, err error) error {
	switch {
	case errors.Is(err, index.ErrNotFound):
		return &batch.VectorsRefusedError{Index: j.Index.Name, Reason: "the index was deleted while the job ran"}
	case errors.Is(err, index.ErrInvalid):
		return &batch.VectorsRefusedError{Index: j.Index.Name, Reason: err.Error()}
	}
	return err
}

// CommitJob records that the job's vectors are a complete set.
func (s *Sink) CommitJob(ctx context.Context, j *job.Job) error {
	if j.Index == nil {
		return nil
	}
	return s.Index.Commit(ctx, index.Ref{Owner: j.Owner, Name: j.Index.Name}, j.ID)
}

func (s *Sink) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
