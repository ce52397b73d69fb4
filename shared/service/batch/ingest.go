package batch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Ingest reads a finished job's output into the store, resuming from its
// checkpoint, then settles the final status and counts. Re-running it on a job
// already finished does nothing. A failure is recorded on the job (LastError),
// so the reconciler can name it when it gives up on the job.
func (s *Service) Ingest(ctx context.Context, id string) error {
	err := s.ingest(ctx, id)
	if err != nil && ctx.Err() == nil {
		service.RecordError(ctx, s.Store, s.Log, id, "ingest", err)
	}
	return err
}

func (s *Service) ingest(ctx context.Context, id string) error {
	log := service.Logger(s.Log).With("job_id", id)
	j, err := s.Store.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		log.InfoContext(ctx, "output ready for an unknown or expired job; ignored")
		return nil
	}
	if err != nil {
		return fmt.Errorf("load job %s: %w", id, err)
	}
	if j.Status != job.StatusIngesting {
		log.InfoContext(ctx, "job is not waiting for ingest; nothing to do", "status", j.Status)
		return nil
	}
	if j.Redrive != nil && j.Redrive.Started {
		// The batch output was read and the deadline re-drive runs: a repeated
		// "Job Output Ready" reads nothing twice.
		log.InfoContext(ctx, "batch output already read; the deadline re-drive runs on demand")
		return nil
	}
	prov := s.Providers.Get(j.Provider)
	began := s.Clock.Now()
	var files []ingest.File
	var missingOK = map[int]bool{}
	for _, p := range j.Parts {
		if p.Status != job.StatusIngesting || p.Ref == "" {
			continue
		}
		if err := s.fetchResults(ctx, j, p); err != nil {
			return err
		}
		outs, _ := prov.OutputFiles(p)
		for _, f := range outs {
			files = append(files, ingest.File{Part: p.Index, URI: f})
		}
		// A stopped or expired job may have written nothing.
		missingOK[p.Index] = prov.MissingOutputOK(p)
	}
	resolve, err := s.loadIDs(ctx, j)
	if err != nil {
		return err
	}
	// Records expire TTL after the first ingest began (the provider's end),
	// the same instant for every retry; the finished job expires with them.
	if j.RecordsExpireAt.IsZero() {
		if j, err = s.Store.UpdateJob(ctx, id, func(cur *job.Job) error {
			if !cur.RecordsExpireAt.IsZero() {
				return store.ErrNoChange
			}
			cur.RecordsExpireAt = job.ExpiresAt(s.Clock.Now(), cur.TTLDays)
			return nil
		}); err != nil && !errors.Is(err, store.ErrNoChange) {
			return fmt.Errorf("fix the record expiry of job %s: %w", id, err)
		}
	}
	held := *j
	held.ExpiresAt = j.RecordsExpireAt
	res, err := s.ingestFiles(ctx, &held, files, missingOK, resolve)
	if err != nil {
		return err
	}
	notRun, err := s.writeHeld(ctx, &held, resolve)
	if err != nil {
		return err
	}
	res.Failed += notRun
	if res.InputTokens == 0 && res.OutputTokens == 0 && res.Succeeded > 0 {
		// Some families (Mistral, Cohere Embed) put no token counts in their
		// output lines; the provider's manifest has the totals.
		if res.InputTokens, res.OutputTokens, err = s.manifestTokens(ctx, j, prov); err != nil {
			return err
		}
	}
	var refused *VectorsRefusedError
	if j.Index != nil && s.Vectors != nil {
		// Before the job is final: a transient error here leaves it
		// ingesting, and the retried ingest writes the same keys again; a
		// write that can never succeed ends the job with its reason.
		err := s.writeVectors(ctx, j)
		if errors.Is(err, errOtherWriter) {
			log.InfoContext(ctx, "another ingest is writing this job's vectors; it finishes the job, this one stops")
			return nil
		}
		if err != nil && !errors.As(err, &refused) {
			return fmt.Errorf("write vectors of %s: %w", id, err)
		}
	}
	if j.Redrive != nil {
		started, err := s.startRedrive(ctx, j, res)
		if started || err != nil {
			return err
		}
	}
	now := s.Clock.Now()
	j, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.Status != job.StatusIngesting || (j.Redrive != nil && j.Redrive.Started) {
			return store.ErrNoChange
		}
		j.Succeeded, j.Failed, j.BadLines = res.Succeeded, res.Failed, res.BadLines
		j.InputTokens, j.OutputTokens = res.InputTokens, res.OutputTokens
		j.CacheReadTokens, j.CacheWriteTokens = res.CacheReadTokens, res.CacheWriteTokens
		s.Models.PriceJob(j)
		final := j.FinalStatus
		if final == "" || (j.Redrive != nil && final == job.StatusCancelled) {
			// Parts stopped for a deadline (with every record produced) are no cancel.
			final = job.StatusCompleted
		}
		// Never report success without counting failures: missing records count as failures too.
		if final == job.StatusCompleted && (j.Failed > 0 || j.Succeeded < j.RecordCount) {
			final = job.StatusPartiallyCompleted
		}
		if missing := j.RecordCount - j.Succeeded - j.Failed; missing > 0 && final != job.StatusCancelled && final != job.StatusExpired {
			j.Error = strings.TrimPrefix(j.Error+fmt.Sprintf("; %d records had no result in the provider output", missing), "; ")
		}
		if res.BadLines > 0 {
			j.Error = strings.TrimPrefix(j.Error+fmt.Sprintf("; %d output lines could not be read (%s)", res.BadLines, badLineSummary(res.Bad)), "; ")
		}
		if msg := budgetStopMessage(j); msg != "" {
			j.Error = strings.TrimPrefix(j.Error+"; "+msg, "; ")
		}
		for i := range j.Parts {
			if j.Parts[i].Status == job.StatusIngesting {
				j.Parts[i].Status = final
			}
		}
		j.Status = final
		if refused != nil {
			VectorsRefused(j, refused)
		}
		j.Checkpoint = nil
		j.CompletedAt = now
		j.Retain()
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finalize job %s: %w", id, err)
	}
	log.InfoContext(ctx, "job ingested", "status", j.Status, "succeeded", j.Succeeded, "failed", j.Failed, "bad_lines", j.BadLines)
	s.measureIngest(ctx, j, began, now)
	s.CommitVectors(ctx, j)
	s.Telemetry.PublishCompleted(ctx, j)
	return nil
}

func (s *Service) ingestFiles(ctx context.Context, j *job.Job, files []ingest.File, missingOK map[int]bool, resolve ingest.IDResolver) (ingest.Result, error) {
	for {
		res, err := s.Ingester.Ingest(ctx, j, files, outputParser(s.Providers.Get(j.Provider), s.Providers.Abilities(j.Provider), j), resolve)
		if err == nil {
			return res, nil
		}
		var nf *ingest.MissingFileError
		if errors.As(err, &nf) && missingOK[nf.File.Part] {
			service.Logger(s.Log).InfoContext(ctx, "stopped or expired part wrote no output", "job_id", j.ID, "part", nf.File.Part)
			files = removeFile(files, nf.File)
			// Resume from what the failed run checkpointed, not from the stale copy.
			id := j.ID
			if j, err = s.Store.GetJob(ctx, id); err != nil {
				return res, fmt.Errorf("reload job %s: %w", id, err)
			}
			continue
		}
		return res, fmt.Errorf("ingest job %s: %w", j.ID, err)
	}
}

// outputParser reads a job's output lines the way its parts were submitted
// (every part of a job is submitted the same way).
func outputParser(prov service.BatchProvider, ab service.Abilities, j *job.Job) ingest.Parser {
	if ab.OutputParser != nil && len(j.Parts) > 0 {
		return ab.OutputParser(j.Parts[0])
	}
	return prov.ParseOutputLine
}

// badLineSummary names the first few bad lines for the job's error text.
func badLineSummary(bad []ingest.BadLine) string {
	var parts []string
	for i, b := range bad {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("part %d line %d: %s", b.Part+1, b.Line, b.Reason))
	}
	return strings.Join(parts, "; ")
}

func removeFile(files []ingest.File, f ingest.File) []ingest.File {
	out := files[:0:0]
	for _, x := range files {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

// partManifest reads the token totals of part p's manifest; found is false
// when the part has none (never submitted, or a stopped job that wrote none).
func (s *Service) partManifest(ctx context.Context, prov service.BatchProvider, tokens func(io.Reader) (int64, int64, error), j *job.Job, p job.Part) (in, out int64, found bool, err error) {
	_, uri := prov.OutputFiles(p)
	if uri == "" || p.Ref == "" {
		return 0, 0, false, nil
	}
	rc, err := s.Blobs.Open(ctx, uri, 0)
	if errors.Is(err, blob.ErrNotFound) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("open manifest of %s part %d: %w", j.ID, p.Index, err)
	}
	defer rc.Close()
	if in, out, err = tokens(rc); err != nil {
		return 0, 0, false, fmt.Errorf("read manifest of %s part %d: %w", j.ID, p.Index, err)
	}
	return in, out, true, nil
}

// manifestTokens sums the token totals of the parts' manifests (0, 0 when the
// provider writes none). A missing manifest (a stopped job) counts nothing.
func (s *Service) manifestTokens(ctx context.Context, j *job.Job, prov service.BatchProvider) (in, out int64, err error) {
	tokens := s.abilities(prov).ManifestTokens
	if tokens == nil {
		return 0, 0, nil
	}
	for _, p := range j.Parts {
		i, o, _, err := s.partManifest(ctx, prov, tokens, j, p)
		if err != nil {
			return 0, 0, err
		}
		in, out = in+i, out+o
	}
	return in, out, nil
}

// loadIDs reads the job's caller record ids written at submit and returns the
// map from the ids the provider saw back to them and their input ordinals:
// provider id i is the job's record i, whose ordinal is i (or, in a retry,
// the one it kept).
func (s *Service) loadIDs(ctx context.Context, j *job.Job) (ingest.IDResolver, error) {
	ordinal, err := service.Ordinals(ctx, s.Blobs, j)
	if err != nil {
		return nil, err
	}
	if pieced, err := idsInPieces(ctx, s.Blobs, j); err != nil {
		return nil, err
	} else if pieced {
		return newPieceIDs(ctx, s.Blobs, j, ordinal).resolve, nil
	}
	rc, err := service.OpenKept(ctx, s.Blobs, j, service.IDsURI(j))
	if errors.Is(err, blob.ErrNotFound) {
		return s.loadLegacyIDs(ctx, j)
	}
	if err != nil {
		return nil, fmt.Errorf("open record ids of %s: %w", j.ID, err)
	}
	defer rc.Close()
	ids, err := readIDs(rc, make([]string, 0, j.RecordCount))
	if err != nil {
		return nil, fmt.Errorf("read record ids of %s: %w", j.ID, err)
	}
	return func(pid string) (job.RecordKey, bool, error) {
		i, ok := job.ProviderRecordIndex(pid)
		if !ok || i >= len(ids) {
			return job.RecordKey{}, false, nil
		}
		o, ok := ordinal(i)
		return job.RecordKey{ID: ids[i], Ordinal: o}, ok, nil
	}, nil
}

// idsInPieces says whether j keeps its ids as one piece per part (no single
// list, a piece 0), the layout OpenKept also reads.
func idsInPieces(ctx context.Context, blobs service.Opener, j *job.Job) (bool, error) {
	if len(j.Parts) == 0 {
		return false, nil
	}
	for _, uri := range []string{service.IDsURI(j), service.PieceURI(service.IDsURI(j), 0)} {
		rc, err := blobs.Open(ctx, uri, 0)
		if errors.Is(err, blob.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("open record ids of %s: %w", j.ID, err)
		}
		rc.Close()
		return uri != service.IDsURI(j), nil
	}
	return false, nil
}

// loadLegacyIDs serves jobs submitted before provider ids: their providers saw
// the caller ids themselves (and their records are keyed by id, so no
// ordinal is needed).
func (s *Service) loadLegacyIDs(ctx context.Context, j *job.Job) (ingest.IDResolver, error) {
	rc, err := s.Blobs.Open(ctx, service.LegacyIDsURI(j), 0)
	if errors.Is(err, blob.ErrNotFound) {
		service.Logger(s.Log).WarnContext(ctx, "record id list missing; unknown record ids will not be detected", "job_id", j.ID)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open record ids of %s: %w", j.ID, err)
	}
	defer rc.Close()
	ids := make(map[string]struct{}, j.RecordCount)
	sc := bufio.NewScanner(rc)
	for sc.Scan() {
		ids[sc.Text()] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read record ids of %s: %w", j.ID, err)
	}
	return func(id string) (job.RecordKey, bool, error) { _, ok := ids[id]; return job.RecordKey{ID: id}, ok, nil }, nil
}

// ContinueIngest republishes "Job Output Ready" so another run resumes from the checkpoint.
func (s *Service) ContinueIngest(ctx context.Context, id string) error {
	j, err := s.Store.GetJob(ctx, id)
	if err != nil {
		return fmt.Errorf("load job %s: %w", id, err)
	}
	if err := s.Bus.Publish(ctx, config.DetailJobOutputReady, service.OutputReady{JobID: id, Provider: j.Provider}); err != nil {
		return fmt.Errorf("publish continuation for %s: %w", id, err)
	}
	return nil
}

// SaveCheckpoint records ingest progress on the job, only while it is still ingesting.
func (s *Service) SaveCheckpoint(ctx context.Context, jobID string, cp job.Checkpoint) error {
	_, err := s.Store.UpdateJob(ctx, jobID, func(j *job.Job) error {
		if j.Status != job.StatusIngesting {
			return store.ErrNoChange
		}
		j.Checkpoint = &cp
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return fmt.Errorf("save checkpoint of %s: %w", jobID, err)
	}
	return nil
}

// fetchResults copies a part's results into object storage once, for providers
// that only stream them. An existing copy is complete (blob writes are atomic),
// so a resumed ingest reads it again from its checkpoint.
func (s *Service) fetchResults(ctx context.Context, j *job.Job, p job.Part) error {
	prov := s.Providers.Get(j.Provider)
	fetch := s.abilities(prov).FetchResults
	if fetch == nil {
		return nil
	}
	outs, _ := prov.OutputFiles(p)
	for _, uri := range outs {
		rc, err := s.Blobs.Open(ctx, uri, 0)
		if err == nil {
			rc.Close()
			continue
		}
		if !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("check results of %s part %d: %w", j.ID, p.Index, err)
		}
		if err := fetch(ctx, p, uri); err != nil {
			return fmt.Errorf("fetch results of %s part %d: %w", j.ID, p.Index, err)
		}
	}
	return nil
}
