package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// Pipeline kinds: a report (default) renders and sends a report of a job's
// answers; a corpus keeps a vector index in step with a documents folder.
const (
	KindReport = "report"
	KindCorpus = "corpus"
)

// CorpusConfig is what a corpus pipeline embeds its documents into. Each run
// embeds only the documents whose content hash changed since the run that
// last embedded them (in chunks of ChunkChars characters overlapping by
// OverlapChars), and deletes the vectors of documents that are gone.
type CorpusConfig struct {
	// Index is the vector index (of the pipeline's owner, "pipeline:<name>").
	Index  string `json:"index"`
	Metric string `json:"metric,omitempty"`
	// Dimensions of the embedding model (default its largest).
	Dimensions   int `json:"dimensions,omitempty"`
	ChunkChars   int `json:"chunk_chars,omitempty"`
	OverlapChars int `json:"overlap_chars,omitempty"`
}

// Corpus chunking defaults and limits.
const (
	DefaultChunkChars = 2000
	MaxChunkChars     = 50000
)

// VectorDeleter removes vectors by key (the index port).
type VectorDeleter interface {
	Delete(ctx context.Context, ref index.Ref, keys []string) error
}

func (p *Pipeline) validateCorpus(f func(string) string) error {
	c := p.Corpus
	if c == nil {
		return job.Fieldf(f("corpus"), "required for kind corpus: {\"index\": ..., \"chunk_chars\"?, \"overlap_chars\"?}")
	}
	if err := index.CheckRef(index.Ref{Owner: Owner(p.Name), Name: c.Index}); err != nil {
		return job.Fieldf(f("corpus.index"), "%v", errors.Unwrap(err))
	}
	if c.ChunkChars == 0 {
		c.ChunkChars = DefaultChunkChars
	}
	if c.ChunkChars < 100 || c.ChunkChars > MaxChunkChars {
		return job.Fieldf(f("corpus.chunk_chars"), "must be 100..%d (got %d)", MaxChunkChars, c.ChunkChars)
	}
	if c.OverlapChars < 0 || c.OverlapChars >= c.ChunkChars/2 {
		return job.Fieldf(f("corpus.overlap_chars"), "must be 0..%d, under half of chunk_chars (got %d)", c.ChunkChars/2-1, c.OverlapChars)
	}
	if p.Prompt != "" || p.Output.Kind != "" || p.Title != "" {
		return job.Fieldf(f("prompt"), "a corpus pipeline embeds documents as they are: leave prompt, output and title out")
	}
	if p.TTLDays != 0 && (p.TTLDays < job.MinTTLDays || p.TTLDays > job.MaxTTLDays) {
		return job.Fieldf(f("ttl_days"), "must be %d..%d (got %d)", job.MinTTLDays, job.MaxTTLDays, p.TTLDays)
	}
	switch {
	case p.MaxDocumentBytes == 0:
		p.MaxDocumentBytes = MaxDocumentBytesLimit
	case p.MaxDocumentBytes < 1 || p.MaxDocumentBytes > MaxDocumentBytesLimit:
		return job.Fieldf(f("max_document_bytes"), "must be 1..%d (got %d)", MaxDocumentBytesLimit, p.MaxDocumentBytes)
	}
	return nil
}

// Chunk cuts text into pieces of at most size characters, each starting
// overlap characters before the previous one ended; a cut prefers the last
// whitespace of the piece's final fifth, so words stay whole.
func Chunk(text string, size, overlap int) []string {
	rs := []rune(strings.TrimSpace(text))
	if len(rs) == 0 {
		return nil
	}
	var out []string
	for start := 0; ; {
		end := min(start+size, len(rs))
		if end < len(rs) {
			for i := end - 1; i > end-size/5 && i > start; i-- {
				if rs[i] == ' ' || rs[i] == '\n' || rs[i] == '\t' {
					end = i + 1
					break
				}
			}
		}
		if piece := strings.TrimSpace(string(rs[start:end])); piece != "" {
			out = append(out, piece)
		}
		if end >= len(rs) {
			return out
		}
		start = max(end-overlap, start+1)
	}
}

// corpusManifest is what the last runs embedded: per document its content
// hash, its chunks' vector keys and the job that embedded them.
type corpusManifest struct {
	Index string               `json:"index"`
	Docs  map[string]corpusDoc `json:"docs"`
}

type corpusDoc struct {
	Hash   string   `json:"hash"`
	Chunks []string `json:"chunks"`
	JobID  string   `json:"job_id"`
}

func (r *Runner) corpusManifestURI(p *Pipeline) string {
	return blob.Join(r.Bucket, "pipelines", p.Name, "corpus-manifest.json")
}

// ChunkKey is the vector key of chunk i of a document.
func ChunkKey(docKey string, i int) string { return fmt.Sprintf("%s-%04d", RecordID(docKey), i) }

// CorpusRun is what one corpus run did (logged).
type CorpusRun struct {
	Documents int
	Embedded  []string // document keys submitted for embedding
	Deleted   []string // document keys whose vectors were deleted
	Chunks    int
}

// tickCorpus runs a corpus pipeline: documents whose hash changed (or whose
// last embedding job did not complete) are chunked and submitted in one job
// that writes into the index; vectors of deleted documents and of chunks a
// shorter document no longer has are deleted; the manifest is rewritten.
func (r *Runner) tickCorpus(ctx context.Context, p *Pipeline, src Source, date, id string) (RunInfo, error) {
	if r.Vectors == nil {
		return RunInfo{}, fmt.Errorf("pipeline %s is a corpus pipeline, but this deployment has no vector store", p.Name)
	}
	c := p.Corpus
	ref := index.Ref{Owner: Owner(p.Name), Name: c.Index}
	var man corpusManifest
	if err := r.getJSON(ctx, r.corpusManifestURI(p), &man); err != nil && !errors.Is(err, blob.ErrNotFound) {
		return RunInfo{}, err
	}
	if man.Docs == nil || man.Index != c.Index {
		man = corpusManifest{Index: c.Index, Docs: map[string]corpusDoc{}}
	}
	refs, err := src.List(ctx)
	if err != nil {
		return RunInfo{}, err
	}
	run := CorpusRun{Documents: len(refs)}
	var recs []job.Input
	var stale []string
	seen := map[string]bool{}
	next := map[string]corpusDoc{}
	for _, d := range refs {
		seen[d.Key] = true
		if d.Size > p.MaxDocumentBytes {
			r.log().WarnContext(ctx, "corpus document too big; skipped", "pipeline", p.Name, "key", d.Key, "bytes", d.Size, "limit", p.MaxDocumentBytes)
			if old, ok := man.Docs[d.Key]; ok {
				next[d.Key] = old
			}
			continue
		}
		body, err := readDoc(ctx, src, d.Key, p.MaxDocumentBytes)
		if err != nil {
			return RunInfo{}, err
		}
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])
		old, had := man.Docs[d.Key]
		if had && old.Hash == hash && r.embedded(ctx, old.JobID) {
			next[d.Key] = old
			continue
		}
		if !utf8.Valid(body) {
			r.log().WarnContext(ctx, "corpus document is not UTF-8 text; skipped", "pipeline", p.Name, "key", d.Key)
			continue
		}
		chunks := Chunk(string(body), c.ChunkChars, c.OverlapChars)
		doc := corpusDoc{Hash: hash, JobID: id}
		for i, text := range chunks {
			k := ChunkKey(d.Key, i)
			doc.Chunks = append(doc.Chunks, k)
			recs = append(recs, job.Input{ID: k, Text: text, Metadata: map[string]any{"doc": d.Key, "chunk": i}})
		}
		for _, k := range old.Chunks {
			if !slices.Contains(doc.Chunks, k) {
				stale = append(stale, k)
			}
		}
		next[d.Key] = doc
		run.Embedded = append(run.Embedded, d.Key)
	}
	for key, old := range man.Docs {
		if !seen[key] {
			stale = append(stale, old.Chunks...)
			run.Deleted = append(run.Deleted, key)
		}
	}
	sort.Strings(run.Deleted)
	run.Chunks = len(recs)
	if len(stale) > 0 {
		if err := r.Vectors.Delete(ctx, ref, stale); err != nil && !errors.Is(err, index.ErrNotFound) {
			return RunInfo{}, fmt.Errorf("delete %d stale vectors of pipeline %s: %w", len(stale), p.Name, err)
		}
	}
	ri := RunInfo{Pipeline: p.Name, Date: date}
	if len(recs) > 0 {
		var ep *job.EmbedParams
		if c.Dimensions != 0 {
			ep = &job.EmbedParams{Dimensions: c.Dimensions}
		}
		j, err := r.Svc.Submit(ctx, batch.SubmitRequest{
			ID: id, Owner: Owner(p.Name), Model: p.Model, Name: p.Name + " " + date, Mode: p.Mode, Records: recs,
			Params: job.Params{Embed: ep}, TTLDays: p.TTLDays,
			Index:    &batch.IndexRequest{Name: c.Index, Metric: c.Metric},
			Pipeline: &job.PipelineRun{Name: p.Name, Date: date, Documents: run.Documents},
		})
		if errors.Is(err, service.ErrJobExists) {
			j, err = r.Jobs.GetJob(ctx, id) // a concurrent tick won
			if err != nil {
				return RunInfo{}, fmt.Errorf("load run %s: %w", id, err)
			}
			return info(j), nil
		}
		if err != nil {
			return RunInfo{}, fmt.Errorf("submit corpus run of %s %s: %w", p.Name, date, err)
		}
		ri = info(j)
		ri.Created = true
	}
	if err := r.putJSON(ctx, r.corpusManifestURI(p), corpusManifest{Index: c.Index, Docs: next}); err != nil {
		return RunInfo{}, err
	}
	r.log().InfoContext(ctx, "corpus run", "pipeline", p.Name, "date", date, "job_id", ri.JobID, "documents", run.Documents,
		"embedded", len(run.Embedded), "chunks", run.Chunks, "deleted", len(run.Deleted), "stale_vectors", len(stale))
	return ri, nil
}

// embedded reports whether the job that last embedded a document completed
// (or is still running: it is not submitted twice).
func (r *Runner) embedded(ctx context.Context, jobID string) bool {
	j, err := r.Jobs.GetJob(ctx, jobID)
	if err != nil {
		return false // expired or unknown: embed again
	}
	return j.Status == job.StatusCompleted || !j.Status.Terminal()
}

func readDoc(ctx context.Context, src Source, key string, limit int64) ([]byte, error) {
	rc, err := src.Open(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("open document %s: %w", key, err)
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(rc, limit+1)); err != nil {
		return nil, fmt.Errorf("read document %s: %w", key, err)
	}
	return b.Bytes(), nil
}
