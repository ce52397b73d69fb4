package batch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// IndexRequest names the vector index an embedding submit writes into.
type IndexRequest struct {
	Name string
	// Metric is cosine (default) or euclidean.
	Metric string
}

// VectorSink takes the vectors of embedding jobs that name an index. The
// vectors are written while the job ingests and the job is committed to the
// index only when it completed, so a failed job's vectors never pass for a
// complete set.
type VectorSink interface {
	// OpenIndex creates the owner's index or checks it matches the target and
	// model; a mismatch is a *job.FieldError on "index".
	OpenIndex(ctx context.Context, owner, model string, t *job.IndexTarget) error
	// WriteMetadata keeps the records' ids and metadata for the vectors of
	// the job whose input folder is inputURI.
	WriteMetadata(ctx context.Context, inputURI string, recs []job.Input) error
	// WriteJob writes the succeeded records' vectors (idempotent).
	WriteJob(ctx context.Context, j *job.Job) error
	// CommitJob records that the job completed writing.
	CommitJob(ctx context.Context, j *job.Job) error
}

// VectorsRefusedError is a write into an index that can never succeed (the
// index was deleted while the job ran, or the index refuses the vectors):
// the job ends with the reason instead of retrying forever.
type VectorsRefusedError struct {
	Index  string
	Reason string
}

func (e *VectorsRefusedError) Error() string {
	return fmt.Sprintf("vectors not written into index %q: %s", e.Index, e.Reason)
}

// VectorsRefused records a refused write on the job being finalised: its
// reason in the job's error, and a job whose records all succeeded ends
// partially_completed, never committed to the index as a complete set.
func VectorsRefused(j *job.Job, e *VectorsRefusedError) {
	msg := e.Error() + "; the results are kept (get_job_results); submit again into an existing index"
	if !strings.Contains(j.Error, msg) {
		j.Error = strings.TrimPrefix(j.Error+"; "+msg, "; ")
	}
	if j.Status == job.StatusCompleted {
		j.Status = job.StatusPartiallyCompleted
		for i := range j.Parts {
			if j.Parts[i].Status == job.StatusCompleted {
				j.Parts[i].Status = job.StatusPartiallyCompleted
			}
		}
	}
}

// CohereInputTypes are Cohere Embed's input_type values (Bedrock model
// parameters for Cohere Embed, as of 2026-12).
var CohereInputTypes = []string{"search_document", "search_query", "classification", "clustering"}

// checkEmbedding holds an embedding submit to its model's rules: the records'
// text (not empty; over the model's input limit refused, or cut when truncate
// says so), and the settings the model's family takes. It settles the
// dimensions (default: the model's largest).
func checkEmbedding(req *SubmitRequest, m *model.Model) error {
	if req.Params.Embed == nil {
		req.Params.Embed = &job.EmbedParams{}
	}
	ep := req.Params.Embed
	titan := strings.HasPrefix(m.Family, "titan")
	switch {
	case ep.Dimensions == 0:
		ep.Dimensions = slices.Max(m.EmbeddingDimensions)
	case !slices.Contains(m.EmbeddingDimensions, ep.Dimensions):
		return job.Fieldf("dimensions", "model %s offers %s (got %d)", m.ID, ints(m.EmbeddingDimensions), ep.Dimensions)
	}
	if ep.Normalize != nil && !titan {
		return job.Fieldf("normalize", "only Titan Text Embeddings takes normalize; model %s returns unit vectors", m.ID)
	}
	switch {
	case ep.InputType == "":
	case titan:
		return job.Fieldf("input_type", "only Cohere Embed takes input_type; model %s has none", m.ID)
	case !slices.Contains(CohereInputTypes, ep.InputType):
		return job.Fieldf("input_type", "must be one of %s (got %q)", strings.Join(CohereInputTypes, ", "), ep.InputType)
	}
	switch ep.Truncate {
	case "":
		ep.Truncate = job.TruncateNone
	case job.TruncateNone, job.TruncateStart, job.TruncateEnd:
	default:
		return job.Fieldf("truncate", "must be NONE (refuse a text over the limit), START or END (got %q)", ep.Truncate)
	}
	cuts := 0
	for i := range req.Records {
		r := &req.Records[i]
		if r.Prompt != "" || len(r.Messages) > 0 {
			return job.Fieldf(fmt.Sprintf("records[%d]", i), "model %s is an embedding model: give text (or model_input, its native request body); prompt and messages are for text models", m.ID)
		}
		if len(r.ModelInput) > 0 {
			if req.Index != nil {
				return job.Fieldf(fmt.Sprintf("records[%d].model_input", i), "a submit with an index takes text records, so the vectors match the index")
			}
			continue
		}
		if strings.TrimSpace(r.Text) == "" {
			return job.Fieldf(fmt.Sprintf("records[%d].text", i), "empty; give 1..%d characters to embed", m.MaxInputChars)
		}
		cut, err := fitEmbeddingText(i, r, m, ep.Truncate)
		if err != nil {
			return err
		}
		if cut {
			cuts++
		}
	}
	if cuts > 0 {
		req.Warnings = append(req.Warnings, fmt.Sprintf("%d text(s) over model %s's input limit (%s) were cut at the %s (truncate %s)",
			cuts, m.ID, limitWords(m), map[string]string{job.TruncateEnd: "end", job.TruncateStart: "start"}[ep.Truncate], ep.Truncate))
	}
	return nil
}

// fitEmbeddingText holds record i's text to the model's input limits, in
// characters and in estimated tokens (content.TextTokens, about 4 characters
// a token; the model counts with its own tokenizer, so the estimate is a
// guide, not a guarantee). Over a limit, truncate NONE refuses naming the
// record and the limit (Cohere's own NONE would fail the record at the
// service); END or START cut the text here, so no record fails or is cut
// silently, and the caller warns. It reports whether it cut.
func fitEmbeddingText(i int, r *job.Input, m *model.Model, truncate string) (bool, error) {
	n := utf8.RuneCountInString(r.Text)
	keep := n
	if m.MaxInputChars > 0 && keep > m.MaxInputChars {
		keep = m.MaxInputChars
	}
	if m.MaxInputTokens > 0 {
		if maxRunes := m.MaxInputTokens * charsPerToken; keep > maxRunes {
			keep = maxRunes
		}
	}
	if keep == n {
		return false, nil
	}
	switch truncate {
	case job.TruncateEnd:
		r.Text = string([]rune(r.Text)[:keep])
	case job.TruncateStart:
		rs := []rune(r.Text)
		r.Text = string(rs[len(rs)-keep:])
	default:
		return false, job.Fieldf(fmt.Sprintf("records[%d].text", i), "%d characters (about %d tokens) is over model %s's input limit of %s; shorten it, or set truncate to END or START to cut it (with a warning on the job)",
			n, content.TextTokens(r.Text), m.ID, limitWords(m))
	}
	return true, nil
}

// charsPerToken is content.TextTokens' rule: a token per 4 characters.
const charsPerToken = 4

// limitWords names a model's input limits ("512 tokens, 2048 characters").
func limitWords(m *model.Model) string {
	var parts []string
	if m.MaxInputTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", m.MaxInputTokens))
	}
	if m.MaxInputChars > 0 {
		parts = append(parts, fmt.Sprintf("%d characters", m.MaxInputChars))
	}
	return strings.Join(parts, ", ")
}

// checkIndex settles the index a submit names: only embedding models write
// one, the metric defaults to cosine and the dimension is the job's.
func (s *Service) checkIndex(req *SubmitRequest, m *model.Model) (*job.IndexTarget, error) {
	if req.Index == nil {
		return nil, nil
	}
	if m.Task != model.TaskEmbedding {
		return nil, job.Fieldf("index", "model %s is a text model; only embedding models (task embedding in list_models) write into an index", m.ID)
	}
	if s.Vectors == nil {
		return nil, job.Fieldf("index", "this deployment has no vector store configured")
	}
	t := &job.IndexTarget{Name: req.Index.Name, Metric: req.Index.Metric, Dimension: req.Params.Embed.Dimensions, Normalize: req.Params.Embed.Normalize}
	switch t.Metric {
	case "":
		t.Metric = string(index.Cosine)
	case string(index.Cosine), string(index.Euclidean):
	default:
		return nil, job.Fieldf("index.metric", "must be %s or %s (got %q)", index.Cosine, index.Euclidean, t.Metric)
	}
	if n := len(t.Name); n == 0 || n > index.MaxNameLen {
		return nil, job.Fieldf("index.name", "%d characters; name the index with 1..%d letters, digits, '-', '_', '.'", n, index.MaxNameLen)
	}
	return t, nil
}

// prepareIndex opens (or creates) the submit's index before anything of the
// job is written, so a mismatching submit leaves nothing behind, and keeps
// the records' metadata for the vectors.
func (s *Service) prepareIndex(ctx context.Context, req *SubmitRequest) (*job.IndexTarget, error) {
	m, _ := s.Models.LookupModel(req.Model)
	if m == nil || req.Index == nil {
		return nil, nil
	}
	t, err := s.checkIndex(req, m)
	if err != nil {
		return nil, err
	}
	if err := s.Vectors.OpenIndex(ctx, req.Owner, m.ID, t); err != nil {
		return nil, err
	}
	if req.ID == "" {
		req.ID = job.NewID(s.Clock.Now())
	}
	if err := s.Vectors.WriteMetadata(ctx, blob.Join(s.Bucket, "input", req.ID), req.Records); err != nil {
		return nil, err
	}
	return t, nil
}

func ints(xs []int) string {
	var out []string
	for _, x := range xs {
		out = append(out, fmt.Sprint(x))
	}
	return strings.Join(out, ", ")
}

// CommitVectors marks a completed job's vectors complete in its index. A job
// that did not complete is not committed; a failing commit is logged (the
// vectors stay, not presented as a complete set).
func (s *Service) CommitVectors(ctx context.Context, j *job.Job) {
	if j.Index == nil || s.Vectors == nil || j.Status != job.StatusCompleted {
		return
	}
	if err := s.Vectors.CommitJob(ctx, j); err != nil {
		service.Logger(s.Log).ErrorContext(ctx, "commit of job to its vector index failed", "job_id", j.ID, "index", j.Index.Name, "error", err)
	}
}
