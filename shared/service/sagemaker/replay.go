package sagemaker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// A job stays queued only until InvokeEndpointAsync's answer is written. When
// that answer is lost (the process died after SageMaker accepted, or before
// the call) and the notification is lost too, nothing names the output object:
// SageMaker picks its name, so the reconciler has nothing to probe. To keep
// such a job from staying queued for ever, every async request is kept beside
// its input (request.json) before the call, and the reconciler replays the
// request of a job still queued past its grace, with the job id as the
// InferenceId. If the first call was accepted after all, SageMaker runs the
// inference twice: either answer is the job's one result (the record is keyed
// by the job id, so it is stored and counted once), and the first notification
// to arrive settles the job. A deployment whose reconciler has no SageMaker
// runtime, or a job without a kept request, is failed with a clear error once
// no answer can come any more (maxAsyncLife after it was created).

// maxAsyncLife bounds how long SageMaker may take to answer an async request:
// the longest RequestTTLSeconds (21,600) plus the longest
// InvocationTimeoutSeconds (3,600), from the InvokeEndpointAsync API reference
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html, 2026-11-30).
const maxAsyncLife = 6*time.Hour + time.Hour

// errAnswerLost fails a queued job that can no longer be answered.
var errAnswerLost = errors.New("the answer to InvokeEndpointAsync was lost and no notification came within the longest time an async request may take (7 h)")

func (m *Service) requestURI(id string) string { return blob.Join(m.inputPrefix(), id, "request.json") }

// keepRequest stores the invocation so a lost answer can be replayed.
func (m *Service) keepRequest(ctx context.Context, inv AsyncInvocation) error {
	b, err := json.Marshal(inv)
	if err != nil {
		return fmt.Errorf("encode async request %s: %w", inv.InferenceID, err)
	}
	uri := m.requestURI(inv.InferenceID)
	if _, err := m.Blobs.Put(ctx, uri, bytes.NewReader(b), "application/json"); err != nil {
		return fmt.Errorf("keep async request %s: %w", uri, err)
	}
	return nil
}

// replay settles a job still queued past the reconciler's grace: it sends the
// kept request again, or fails the job once no answer can come. It reports
// whether the job moved.
func (m *Service) replay(ctx context.Context, j *job.Job) (bool, error) {
	if m.Runtime != nil {
		inv, err := m.loadRequest(ctx, j.ID)
		switch {
		case err == nil:
			service.Logger(m.Log).WarnContext(ctx, "async job still queued; its invocation's answer was lost, sending it again", "job_id", j.ID)
			acc, invErr := m.Runtime.InvokeAsync(ctx, inv)
			if _, err := m.recordInvocation(ctx, j.ID, acc, invErr); err != nil {
				return false, err
			}
			return true, nil
		case !errors.Is(err, blob.ErrNotFound):
			return false, err
		}
	}
	if m.Clock.Now().Sub(j.CreatedAt) < maxAsyncLife {
		return false, nil
	}
	if _, err := m.recordInvocation(ctx, j.ID, AsyncAccepted{}, errAnswerLost); err != nil {
		return false, err
	}
	return true, nil
}

func (m *Service) loadRequest(ctx context.Context, id string) (AsyncInvocation, error) {
	var inv AsyncInvocation
	rc, err := m.Blobs.Open(ctx, m.requestURI(id), 0)
	if err != nil {
		return inv, fmt.Errorf("open async request of %s: %w", id, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 4*job.SageMakerMaxInlineBody))
	if err != nil {
		return inv, fmt.Errorf("read async request of %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &inv); err != nil {
		return inv, fmt.Errorf("decode async request of %s: %w", id, err)
	}
	if inv.InferenceID != id {
		return inv, fmt.Errorf("async request of %s names inference %q", id, inv.InferenceID)
	}
	return inv, nil
}
