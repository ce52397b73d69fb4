package service

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// ProviderEvent is a provider's state change for one provider job.
type ProviderEvent struct {
	JobName string // provider job name: <prefix>-<job id>[-p<n>]
	Ref     string // provider job ARN
	Status  string // provider's word
	Message string
}

// OutputReady is the detail of "Job Output Ready".
type OutputReady struct {
	JobID    string `json:"jobId"`
	Provider string `json:"provider"`
}

// Completed is the detail of "Job Completed".
type Completed struct {
	JobID        string     `json:"jobId"`
	Provider     string     `json:"provider"`
	Model        string     `json:"model"`
	Status       job.Status `json:"status"`
	RecordCount  int        `json:"recordCount"`
	Succeeded    int        `json:"succeeded"`
	Failed       int        `json:"failed"`
	BadLines     int        `json:"badLines"`
	InputTokens  int64      `json:"inputTokens"`
	OutputTokens int64      `json:"outputTokens"`
	CompletedAt  string     `json:"completedAt"`
}

// ParseJobName maps a provider job name back to (job id, part index) without a lookup.
func (s *Service) ParseJobName(name string) (id string, part int, ok bool) {
	rest, ok := strings.CutPrefix(name, s.JobPrefix+"-")
	if !ok {
		return "", 0, false
	}
	id, suffix, hasPart := strings.Cut(rest, "-p")
	if !job.ValidID(id) {
		return "", 0, false
	}
	if !hasPart {
		return id, 0, true
	}
	n, err := strconv.Atoi(suffix)
	if err != nil || n < 1 {
		return "", 0, false
	}
	return id, n - 1, true
}

// OnProviderEvent applies a provider's state change for one of its jobs (a
// Bedrock "Batch Inference Job State Change" event, or a poll's answer). It is
// idempotent and order tolerant: a status never moves back, duplicates change
// nothing, and events for jobs we do not know are acknowledged and ignored (the
// default bus carries every batch job in the account).
func (s *Service) OnProviderEvent(ctx context.Context, ev ProviderEvent) error {
	log := s.log().With("job_name", ev.JobName, "provider_status", ev.Status)
	id, idx, ok := s.ParseJobName(ev.JobName)
	if !ok {
		log.InfoContext(ctx, "event for a job this stack did not create; ignored")
		return nil
	}
	j, _, _, err := s.applyState(ctx, id, idx, ev)
	switch {
	case errors.Is(err, store.ErrNotFound):
		log.InfoContext(ctx, "event for an unknown or expired job; ignored", "job_id", id)
		return nil
	case errors.Is(err, errUnknownPart):
		log.WarnContext(ctx, "event for an unknown part; ignored", "error", err)
		return nil
	case errors.Is(err, errUnknownStatus):
		log.WarnContext(ctx, "unknown provider status; ignored", "error", err)
		return nil
	case errors.Is(err, store.ErrNoChange):
		log.InfoContext(ctx, "duplicate or late event; status unchanged", "job_id", id, "status", j.Status)
	case err != nil:
		return fmt.Errorf("apply %s to job %s: %w", ev.Status, id, err)
	default:
		log.InfoContext(ctx, "job status applied", "job_id", id, "status", j.Status)
	}
	return s.afterStatus(ctx, j)
}

var (
	errUnknownPart   = errors.New("unknown part")
	errUnknownStatus = errors.New("unknown provider status")
)

// applyState moves part idx of job id forward by the provider's word for it:
// to a later neutral status, or to a later provider step within the same one.
// It reports whether this write moved the part and the job's status before it;
// a move that is not forward is store.ErrNoChange.
func (s *Service) applyState(ctx context.Context, id string, idx int, ev ProviderEvent) (*job.Job, bool, job.Status, error) {
	now := s.now()
	var moved bool
	var was job.Status
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		moved, was = false, j.Status
		if idx >= len(j.Parts) {
			return fmt.Errorf("%w: job %s has %d parts, event names part %d", errUnknownPart, id, len(j.Parts), idx+1)
		}
		prov := s.provider(j.Provider)
		p := &j.Parts[idx]
		outcome, ok := prov.Outcome(ev.Status, p.CancelRequested)
		if !ok {
			return fmt.Errorf("%w: job %s part %d: %s status %q", errUnknownStatus, id, idx, prov.Name(), ev.Status)
		}
		if p.Ref == "" && ev.Ref != "" {
			p.Ref = ev.Ref
			moved = true
		}
		switch {
		case advancePart(p, outcome.Status, ev.Status, ev.Message):
			moved = true
		case p.Status == outcome.Status && prov.Later(p.ProviderStatus, ev.Status):
			// Same neutral status, later provider step (Validating → Scheduled).
			p.ProviderStatus = ev.Status
			moved = true
		}
		if !moved {
			return store.ErrNoChange
		}
		j.LastEventAt = now
		s.settle(j, now)
		return nil
	})
	return j, moved, was, err
}

// advancePart moves a part forward to status with the provider's word for it; it
// reports false, changing nothing, for a move that is not forward.
func advancePart(p *job.Part, status job.Status, providerStatus, message string) bool {
	if !job.CanMove(p.Status, status) {
		return false
	}
	p.Status = status
	p.ProviderStatus = providerStatus
	if message != "" {
		p.Message = message
	}
	return true
}

// leastAdvanced is the part that holds the job back: its provider status is the job's.
func leastAdvanced(prov BatchProvider, parts []job.Part) job.Part {
	least := parts[0]
	for _, p := range parts[1:] {
		if p.Status.Rank() < least.Status.Rank() ||
			(p.Status == least.Status && prov.Later(p.ProviderStatus, least.ProviderStatus)) {
			least = p
		}
	}
	return least
}

// afterStatus publishes what a status calls for. Publishing "Job Output Ready" is
// recorded on the job, so a retried event republishes only when the first try failed.
func (s *Service) afterStatus(ctx context.Context, j *job.Job) error {
	switch {
	case j.Status == job.StatusIngesting && !j.OutputReadyPublished:
		if err := s.Bus.Publish(ctx, config.DetailJobOutputReady, OutputReady{JobID: j.ID, Provider: j.Provider}); err != nil {
			return fmt.Errorf("publish output ready for %s: %w", j.ID, err)
		}
		_, err := s.Store.UpdateJob(ctx, j.ID, func(j *job.Job) error {
			if j.OutputReadyPublished {
				return store.ErrNoChange
			}
			j.OutputReadyPublished = true
			return nil
		})
		if err != nil && !errors.Is(err, store.ErrNoChange) {
			return fmt.Errorf("record output ready for %s: %w", j.ID, err)
		}
	case j.Status == job.StatusFailed:
		s.publishCompleted(ctx, j)
	}
	return nil
}

func (s *Service) publishCompleted(ctx context.Context, j *job.Job) {
	err := s.Bus.Publish(ctx, config.DetailJobCompleted, Completed{
		JobID: j.ID, Provider: j.Provider, Model: j.Model, Status: j.Status, RecordCount: j.RecordCount,
		Succeeded: j.Succeeded, Failed: j.Failed, BadLines: j.BadLines, InputTokens: j.InputTokens,
		OutputTokens: j.OutputTokens, CompletedAt: j.CompletedAt.Format("2006-01-02T15:04:05Z"),
	})
	if err != nil {
		// Job Completed is a notification for downstream pipelines; the job item is the truth.
		s.log().ErrorContext(ctx, "publish job completed", "job_id", j.ID, "error", err)
	}
}

// Ingest reads a finished job's output into the store, resuming from its
// checkpoint, then settles the final status and counts. Re-running it on a job
// already finished does nothing.
func (s *Service) Ingest(ctx context.Context, id string) error {
	log := s.log().With("job_id", id)
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
	prov := s.provider(j.Provider)
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
	known, err := s.loadIDs(ctx, j)
	if err != nil {
		return err
	}
	res, err := s.ingestFiles(ctx, j, files, missingOK, known)
	if err != nil {
		return err
	}
	now := s.now()
	j, err = s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.Status != job.StatusIngesting {
			return store.ErrNoChange
		}
		j.Succeeded, j.Failed, j.BadLines = res.Succeeded, res.Failed, res.BadLines
		j.InputTokens, j.OutputTokens = res.InputTokens, res.OutputTokens
		final := j.FinalStatus
		if final == "" {
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
		for i := range j.Parts {
			if j.Parts[i].Status == job.StatusIngesting {
				j.Parts[i].Status = final
			}
		}
		j.Status = final
		j.Checkpoint = nil
		j.CompletedAt = now
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finalize job %s: %w", id, err)
	}
	log.InfoContext(ctx, "job ingested", "status", j.Status, "succeeded", j.Succeeded, "failed", j.Failed, "bad_lines", j.BadLines)
	s.publishCompleted(ctx, j)
	return nil
}

func (s *Service) ingestFiles(ctx context.Context, j *job.Job, files []ingest.File, missingOK map[int]bool, known func(string) bool) (ingest.Result, error) {
	for {
		res, err := s.Ingester.Ingest(ctx, j, files, s.provider(j.Provider).ParseOutputLine, known)
		if err == nil {
			return res, nil
		}
		var nf *ingest.MissingFileError
		if errors.As(err, &nf) && missingOK[nf.File.Part] {
			s.log().InfoContext(ctx, "stopped or expired part wrote no output", "job_id", j.ID, "part", nf.File.Part)
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

// loadIDs reads the job's record ids written at submit.
func (s *Service) loadIDs(ctx context.Context, j *job.Job) (func(string) bool, error) {
	rc, err := s.Blobs.Open(ctx, idsURI(j), 0)
	if errors.Is(err, blob.ErrNotFound) {
		s.log().WarnContext(ctx, "record id list missing; unknown record ids will not be detected", "job_id", j.ID)
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
	return func(id string) bool { _, ok := ids[id]; return ok }, nil
}

// ownerTag identifies an owner in provider tags without exposing the principal.
func ownerTag(owner string) string {
	h := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(h[:8])
}

// ContinueIngest republishes "Job Output Ready" so another run resumes from the checkpoint.
func (s *Service) ContinueIngest(ctx context.Context, id string) error {
	j, err := s.Store.GetJob(ctx, id)
	if err != nil {
		return fmt.Errorf("load job %s: %w", id, err)
	}
	if err := s.Bus.Publish(ctx, config.DetailJobOutputReady, OutputReady{JobID: id, Provider: j.Provider}); err != nil {
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
