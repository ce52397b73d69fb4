package sagemaker

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// SageMakerEvent is one async inference notification, already decoded.
type SageMakerEvent struct {
	InferenceID    string
	Status         string // SageMakerCompleted or SageMakerFailed
	FailureReason  string
	OutputLocation string
	ContentType    string
	// Body is the decoded responseBody when SageMaker included it (≤ 128 KB).
	Body    []byte
	HasBody bool
}

// OnSageMakerEvent settles an async job from its notification. It is idempotent
// and order tolerant: the first terminal notification wins, a duplicate of it only
// rewrites the same record, a contradicting late one changes nothing, and
// invocations this stack did not start are acknowledged and ignored.
func (m *Service) OnSageMakerEvent(ctx context.Context, ev SageMakerEvent) error {
	log := service.Logger(m.Log).With("inference_id", ev.InferenceID, "invocation_status", ev.Status)
	outcome, ok := SageMakerOutcome(ev.Status)
	if !ok || !outcome.Ended {
		log.WarnContext(ctx, "unknown SageMaker invocationStatus; ignored")
		return nil
	}
	if !job.ValidID(ev.InferenceID) {
		log.InfoContext(ctx, "notification for an invocation this stack did not start; ignored")
		return nil
	}
	j, err := m.Jobs.GetJob(ctx, ev.InferenceID)
	if errors.Is(err, store.ErrNotFound) {
		log.InfoContext(ctx, "notification for an unknown or expired job; ignored")
		return nil
	}
	if err != nil {
		return fmt.Errorf("load job %s: %w", ev.InferenceID, err)
	}
	if j.Provider != job.ProviderSageMaker {
		log.WarnContext(ctx, "notification names a job of another provider; ignored", "provider", j.Provider)
		return nil
	}
	if j.Status.Terminal() && j.Status != outcome.Status {
		log.InfoContext(ctx, "late notification contradicts the job's final status; ignored", "status", j.Status)
		return nil
	}
	rec, err := m.record(ctx, j, ev)
	if err != nil {
		return err
	}
	// The record goes first, so a reader that sees the job terminal also sees its result;
	// rewriting it on a duplicate is harmless (a keyed overwrite with the same content).
	if err := m.Results.Put(ctx, j.RecordSet(), []job.Record{rec}); err != nil {
		return fmt.Errorf("store result of job %s: %w", j.ID, err)
	}
	now := m.Clock.Now()
	j, err = m.Jobs.UpdateJob(ctx, j.ID, func(j *job.Job) error {
		if !job.CanMove(j.Status, outcome.Status) {
			return store.ErrNoChange
		}
		j.Status, j.ProviderStatus, j.LastEventAt, j.CompletedAt = outcome.Status, ev.Status, now, now
		j.Retain()
		if j.OutputURI == "" && ev.OutputLocation != "" {
			j.OutputURI = ev.OutputLocation
		}
		if outcome.Status == job.StatusFailed {
			j.Failed, j.Error = 1, "SageMaker inference failed: "+ev.FailureReason
		} else {
			j.Succeeded = 1
		}
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		log.InfoContext(ctx, "duplicate notification; job unchanged", "job_id", j.ID, "status", j.Status)
		return nil
	}
	if err != nil {
		return fmt.Errorf("settle job %s: %w", ev.InferenceID, err)
	}
	log.InfoContext(ctx, "async inference settled", "job_id", j.ID, "status", j.Status)
	m.Telemetry.PublishCompleted(ctx, j)
	return nil
}

// record builds the job's one result from a notification: the decoded body inline
// when it fits an item, else a pointer to SageMaker's output object. At most
// MaxInlineOutputBytes+1 bytes of an output are read, so memory stays flat.
func (m *Service) record(ctx context.Context, j *job.Job, ev SageMakerEvent) (job.Record, error) {
	rec := job.Record{JobID: j.ID, ID: j.ID, ExpiresAt: job.RecordExpiresAt(j, m.Clock.Now()), ContentType: ev.ContentType}
	if ev.Status == SageMakerFailed {
		rec.Status, rec.ErrorCode, rec.ErrorMessage = job.RecordFailed, "InferenceFailed", ev.FailureReason
		if rec.ErrorMessage == "" {
			rec.ErrorMessage = "SageMaker reported the invocation failed without a reason; see " + j.FailureURI
		}
		if ev.HasBody && len(ev.Body) <= job.MaxInlineOutputBytes {
			// The model's own error answer (error topic responseBody) says why.
			rec.Output, rec.Note = decodeOutput(ev.Body, ev.ContentType)
			if rec.Note == "" {
				rec.Note = "output is the model's error response from the notification"
			}
		}
		return rec, nil
	}
	rec.Status = job.RecordSucceeded
	body := ev.Body
	if !ev.HasBody {
		if ev.OutputLocation == "" {
			return rec, fmt.Errorf("job %s: success notification has neither responseBody nor outputLocation", j.ID)
		}
		rc, err := m.Blobs.Open(ctx, ev.OutputLocation, 0)
		if err != nil {
			return rec, fmt.Errorf("open output %s of job %s: %w", ev.OutputLocation, j.ID, err)
		}
		body, err = io.ReadAll(io.LimitReader(rc, job.MaxInlineOutputBytes+1))
		// Drain nothing more: closing the stream early is how a big object is left unread.
		rc.Close()
		if err != nil {
			return rec, fmt.Errorf("read output %s of job %s: %w", ev.OutputLocation, j.ID, err)
		}
		if len(body) > job.MaxInlineOutputBytes {
			rec.OutputRef = ev.OutputLocation
			rec.Note = fmt.Sprintf("output is over %d bytes, too big to keep inline: read it from output_url", job.MaxInlineOutputBytes)
			return rec, nil
		}
	}
	rec.Output, rec.Note = decodeOutput(body, ev.ContentType)
	return rec, nil
}

// decodeOutput renders an output as text for the record, with a note when it is
// not what its content type says.
func decodeOutput(body []byte, contentType string) (string, string) {
	switch {
	case !utf8.Valid(body):
		if len(body) > base64.StdEncoding.DecodedLen(job.MaxInlineOutputBytes) {
			// Never reached with responseBody (≤ 128 KB) or a read capped above; kept for safety.
			return "", "binary output too big to inline"
		}
		return base64.StdEncoding.EncodeToString(body), fmt.Sprintf("binary output (%s), base64-encoded", orUnknown(contentType))
	case IsJSONType(contentType) && !json.Valid(body):
		return string(body), fmt.Sprintf("output is not valid JSON although its content type is %s; stored as text", contentType)
	}
	return string(body), ""
}

func orUnknown(ct string) string {
	if ct == "" {
		return "no content type"
	}
	return ct
}

// IsJSONType reports whether a MIME type is JSON (application/json, application/*+json).
func IsJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// RefuseCancel refuses cancel_job on an async inference: SageMaker has no API to
// withdraw one; it ends by itself within its invocation timeout and request TTL.
func RefuseCancel(j *job.Job) error {
	if j.Provider != job.ProviderSageMaker {
		return nil
	}
	return job.Fieldf("job_id", "job %s is a SageMaker async inference, which cannot be cancelled (SageMaker has no API for it); "+
		"it ends by itself within its inference_timeout_s after leaving the queue, or its request_ttl_s in the queue", j.ID)
}

// ReconcileSageMaker settles async jobs whose notification never arrived (a
// mis-configured topic, a delivery that ended in the DLQ): for each in-flight
// SageMaker job last updated before the given time, an output object at its
// OutputLocation completes it and a failure object at its FailureLocation fails it
// with the object's text as the reason, through the same idempotent path as a
// notification. A job still queued (the answer of InvokeEndpointAsync was
// never written, so there is nothing to probe) has its kept request sent
// again, or is failed once no answer can come (see replay). It returns how
// many jobs it settled or re-sent. A job it cannot probe or
// settle (S3 answering 403 for a missing object when ListBucket is not
// granted) is logged and counted, and the run goes on; the error joins them.
func (m *Service) ReconcileSageMaker(ctx context.Context, updatedBefore time.Time, limit int) (int, error) {
	jobs, err := m.Jobs.ListInFlight(ctx, job.ProviderSageMaker, updatedBefore, limit)
	if err != nil {
		return 0, fmt.Errorf("list in-flight SageMaker jobs: %w", err)
	}
	settled := 0
	var errs []error
	for _, j := range jobs {
		if j.Status == job.StatusQueued && j.OutputURI == "" && j.FailureURI == "" {
			// The invocation's answer was never written: nothing to probe.
			moved, err := m.replay(ctx, j)
			if moved {
				settled++
			}
			if err != nil {
				service.Logger(m.Log).ErrorContext(ctx, "replay SageMaker invocation", "job_id", j.ID, "error", err)
				errs = append(errs, err)
			}
			continue
		}
		ev, found, err := m.probe(ctx, j)
		if err == nil && found {
			if err = m.OnSageMakerEvent(ctx, ev); err == nil {
				settled++
			}
		}
		if err != nil {
			service.Logger(m.Log).ErrorContext(ctx, "reconcile SageMaker job", "job_id", j.ID, "error", err)
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return settled, fmt.Errorf("%d of %d SageMaker jobs could not be reconciled: %w", len(errs), len(jobs), errors.Join(errs...))
	}
	return settled, nil
}

// maxFailureReason bounds what is read of a failure object.
const maxFailureReason = 4 << 10

// probe looks for the output, then the failure object of an async job.
func (m *Service) probe(ctx context.Context, j *job.Job) (SageMakerEvent, bool, error) {
	if j.OutputURI != "" {
		rc, err := m.Blobs.Open(ctx, j.OutputURI, 0)
		switch {
		case err == nil:
			rc.Close()
			return SageMakerEvent{InferenceID: j.ID, Status: SageMakerCompleted, OutputLocation: j.OutputURI}, true, nil
		case !errors.Is(err, blob.ErrNotFound):
			return SageMakerEvent{}, false, fmt.Errorf("probe output of job %s: %w", j.ID, err)
		}
	}
	if j.FailureURI != "" {
		rc, err := m.Blobs.Open(ctx, j.FailureURI, 0)
		switch {
		case err == nil:
			reason, rerr := io.ReadAll(io.LimitReader(rc, maxFailureReason))
			rc.Close()
			if rerr != nil {
				return SageMakerEvent{}, false, fmt.Errorf("read failure of job %s: %w", j.ID, rerr)
			}
			return SageMakerEvent{InferenceID: j.ID, Status: SageMakerFailed, FailureReason: strings.TrimSpace(string(reason))}, true, nil
		case !errors.Is(err, blob.ErrNotFound):
			return SageMakerEvent{}, false, fmt.Errorf("probe failure of job %s: %w", j.ID, err)
		}
	}
	return SageMakerEvent{}, false, nil
}
