package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// ValidationRequest is the detail of "Input Validation Requested".
type ValidationRequest struct {
	JobID string `json:"jobId"`
}

// fileRequest is what ValidateFile needs of the submit beyond the job item:
// kept beside the job's inputs, as the job item has no place for parameters.
type fileRequest struct {
	Field string `json:"field"`
	URI   string `json:"uri"`
	// Files are the inputs of a job over many files (URI is empty then):
	// kept apart in filesURI (100,000 of them would make every unit's read
	// of the request megabytes), Many saying they are there.
	Files  []inputFile `json:"-"`
	Many   bool        `json:"many,omitempty"`
	Params job.Params  `json:"params"`
	// Reuse, ReuseSampled: the submit's reuse (batch/reuse.go), done per
	// record after the scan (reuse.go).
	Reuse        bool `json:"reuse,omitempty"`
	ReuseSampled bool `json:"reuse_sampled,omitempty"`
}

func filesURI(j *job.Job) string { return blob.Join(j.InputURI, "files.json") }

func requestURI(j *job.Job) string { return blob.Join(j.InputURI, "request.json") }

func (s *Service) putRequest(ctx context.Context, j *job.Job, r fileRequest) error {
	if len(r.Files) > 0 {
		if err := s.putJSON(ctx, filesURI(j), r.Files); err != nil {
			return fmt.Errorf("store the input files of %s: %w", j.ID, err)
		}
		r.Many = true
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode file request of %s: %w", j.ID, err)
	}
	if _, err := s.Blobs.Put(ctx, requestURI(j), bytes.NewReader(b), "application/json"); err != nil {
		return fmt.Errorf("store file request of %s: %w", j.ID, err)
	}
	return nil
}

func (s *Service) getRequest(ctx context.Context, j *job.Job) (fileRequest, error) {
	var r fileRequest
	rc, err := s.Blobs.Open(ctx, requestURI(j), 0)
	if err != nil {
		return r, fmt.Errorf("open file request of %s: %w", j.ID, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		return r, fmt.Errorf("read file request of %s: %w", j.ID, err)
	}
	return r, nil
}

// ValidateFile checks a validating job's input file line by line, then writes
// the provider inputs and starts the job. An invalid file fails the job with
// the first problems and their line numbers; nothing reaches a provider. A
// redelivered event for a job already past validation does nothing, and two
// concurrent runs write the same inputs, only one of them moving the job on.
// Both passes read one pinned version of the file; a throttled read is
// retried and a read cut mid-body resumes on that version (openInput), so
// transient S3 faults cost time, not the job. Errors it returns (storage,
// provider) are worth a retry.
func (s *Service) ValidateFile(ctx context.Context, id string) error {
	log := service.Logger(s.Log).With("job_id", id)
	j, err := s.Jobs.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		log.InfoContext(ctx, "input validation for an unknown or expired job; ignored")
		return nil
	}
	if err != nil {
		return fmt.Errorf("load job %s: %w", id, err)
	}
	if !inputValidating(j) {
		log.InfoContext(ctx, "job is past input validation; nothing to do", "status", j.Status)
		return nil
	}
	prov := s.Providers.Get(j.Provider)
	if prov == nil {
		_, err := s.failValidation(ctx, id, fmt.Sprintf("provider %s is not configured in this deployment", j.Provider))
		return err
	}
	fr, err := s.getRequest(ctx, j)
	if err != nil {
		return err
	}
	if fr.Many {
		return s.planFanout(ctx, j, fr)
	}
	req, md, err := s.requestOf(j, fr, prov)
	if err != nil {
		return err
	}
	pin, err := s.pinInput(ctx, fr.Field, fr.URI)
	var fe *job.FieldError
	if errors.As(err, &fe) {
		_, err = s.failValidation(ctx, id, fe.Error())
		return err
	}
	if err != nil {
		return err
	}
	scan, err := s.scanFile(ctx, fr.Field, fr.URI, pin, req, prov, md)
	if errors.As(err, &fe) {
		_, err = s.failValidation(ctx, id, fe.Error())
		return err
	}
	if err != nil {
		return err
	}
	src := s.fileSource(fr.Field, fr.URI, pin)
	// Reused results are stored before the job's parts: over the shards of
	// every record, which the job keeps (records are placed by ordinal).
	into := *j
	into.Shards = job.ShardsFor(scan.count)
	reused, err := s.reusePass(ctx, src, &into, req, scan.taken, scan.count)
	if err != nil {
		return err
	}
	lim := s.limitsFor(prov, j.Model)
	var ords []int
	if reused != nil {
		scan.sizes, ords = keepSent(scan.sizes, reused)
		switch sent := len(scan.sizes); {
		case sent == 0:
			return s.completeReused(ctx, id, scan.count)
		case sent < lim.MinRecords:
			_, err = s.failValidation(ctx, id, job.Fieldf("reuse", "%d of the %d records were answered from earlier results, leaving %d, under %s's minimum of %d per job; submit those records inline (mode auto runs them on demand)",
				scan.count-sent, scan.count, sent, lim.Title, lim.MinRecords).Error())
			return err
		}
	}
	parts, err := service.Split(scan.sizes, lim)
	if err != nil {
		_, err = s.failValidation(ctx, id, job.Fieldf(fr.Field, "%v", err).Error())
		return err
	}
	n := len(scan.sizes)
	maxLine := 0
	for _, size := range scan.sizes {
		maxLine = max(maxLine, size) // the ingest line cap grows with the biggest input line
	}
	scan.sizes = nil // the split is all the second pass needs
	draft := s.draftParts(j, n, parts, scan.invocation.Type)
	if ords != nil {
		// Positions past the reused records: ingest maps each sent record to its input ordinal.
		draft.Reused, draft.Shards = scan.count-n, into.Shards
		if err := service.WriteOrdinals(ctx, s.Blobs, service.OrdinalsURI(&draft), ords); err != nil {
			return err
		}
		draft.KeptOrdinals = true
	}
	return s.writeAndStart(ctx, src, &draft, maxLine, req, prov, scan.taken, reused, md)
}

// requestOf is the submit request a validation checks the lines against.
func (s *Service) requestOf(j *job.Job, fr fileRequest, prov service.BatchProvider) (batch.SubmitRequest, *batch.Media, error) {
	req := batch.SubmitRequest{Owner: j.Owner, Provider: j.Provider, Model: j.Model, Name: j.Name, Params: fr.Params, TTLDays: j.TTLDays,
		Reuse: fr.Reuse, ReuseSampled: fr.ReuseSampled}
	md, err := s.Batch.NewMedia(&req, prov.Limits())
	return req, md, err
}

// draftParts lays out a validated job's parts (record counts from the split).
func (s *Service) draftParts(j *job.Job, n int, parts []int, invocation string) job.Job {
	draft := *j
	draft.RecordCount, draft.Shards, draft.Parts = n, job.ShardsFor(n), nil
	for i, size := range parts {
		draft.Parts = append(draft.Parts, job.Part{
			Index: i, Name: job.PartName(s.JobPrefix, j.ID, i, len(parts)), Status: job.StatusQueued,
			RecordCount:    size,
			InputURI:       blob.Join(j.InputURI, fmt.Sprintf("part-%d", i+1), "records.jsonl"),
			OutputURI:      blob.Join(j.OutputURI, fmt.Sprintf("part-%d", i+1)) + "/",
			InvocationType: invocation,
		})
	}
	return draft
}

// writeAndStart writes a validated job's provider inputs from src, stores
// its parts and starts it: the end of a validation, one file or many.
func (s *Service) writeAndStart(ctx context.Context, src inputSource, draft *job.Job, maxLine int, req batch.SubmitRequest, prov service.BatchProvider, taken takenIDs, skip []bool, md *batch.Media) error {
	if err := s.writeFileParts(ctx, src, draft, req, prov, taken, skip, md); err != nil {
		var fe *job.FieldError
		if errors.As(err, &fe) {
			_, err = s.failValidation(ctx, draft.ID, fe.Error())
		}
		return err
	}
	return s.startValidated(ctx, draft, maxLine, req, prov, md)
}

// startValidated stores a validated job's parts, their inputs written, and
// starts it (unless another run got there first).
func (s *Service) startValidated(ctx context.Context, draft *job.Job, maxLine int, req batch.SubmitRequest, prov service.BatchProvider, md *batch.Media) error {
	id := draft.ID
	log := service.Logger(s.Log).With("job_id", id)
	j, err := s.Jobs.UpdateJob(ctx, id, func(cur *job.Job) error {
		if !inputValidating(cur) {
			return store.ErrNoChange // another run got there first (or the job was cancelled)
		}
		cur.RecordCount, cur.Shards, cur.Parts = draft.RecordCount, draft.Shards, draft.Parts
		cur.Reused, cur.KeptOrdinals = draft.Reused, draft.KeptOrdinals
		cur.MaxInputLineBytes = maxLine
		if warn := s.Providers.Abilities(prov.Name()).JobWarnings; warn != nil {
			cur.AddWarning(warn(req.Model, nil, req.Params)...)
		}
		cur.AddWarning(md.Warnings()...)
		// The job stays validating while its parts start queued: the status a
		// user sees never moves back, and Settle moves it on only once every
		// part has passed the provider's own validation (to in_progress or on).
		cur.ProviderStatus, cur.Retries = "", 0 // Retries counted validation requests
		cur.UpdatedAt = s.Clock.Now()
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		log.InfoContext(ctx, "job moved on during input validation; left as it is")
		return nil
	}
	if err != nil {
		return fmt.Errorf("store validated job %s: %w", id, err)
	}
	log.InfoContext(ctx, "input validated", "records", j.RecordCount, "parts", len(j.Parts))
	_, err = s.Batch.StartNew(ctx, prov, j)
	return err
}

// inputValidating reports whether j waits for its input file to be checked:
// validating with no parts yet (a provider's own validation has parts).
func inputValidating(j *job.Job) bool {
	return j.Status == job.StatusValidating && len(j.Parts) == 0
}

// failValidation ends a validating job as failed with why (the same text the
// synchronous check gave as its error).
func (s *Service) failValidation(ctx context.Context, id, why string) (*job.Job, error) {
	now := s.Clock.Now()
	j, err := s.Jobs.UpdateJob(ctx, id, func(cur *job.Job) error {
		if !inputValidating(cur) {
			return store.ErrNoChange
		}
		cur.Status, cur.ProviderStatus, cur.Error = job.StatusFailed, "InputInvalid", why
		cur.CompletedAt, cur.UpdatedAt = now, now
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return j, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fail job %s after input validation: %w", id, err)
	}
	s.Telemetry.PublishCompleted(ctx, j)
	return j, nil
}
