package transfer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// ValidationStaleAfter is how long a job may stay validating before the
// reconciler steps in: past the validate function's 15 minutes and Lambda's
// two retries of an async event, with room to spare.
const ValidationStaleAfter = time.Hour

// Provider statuses of a job waiting for its input to be checked.
const (
	statusValidating = "InputValidating"
	statusRetried    = "InputValidationRetried"
)

// MaxValidationRequests bounds how often a job's validation is asked for:
// the submit's request and three more, ValidationStaleAfter apart, so a job
// whose file is still there is given up only after four requests were lost
// or failed, ValidationBound after its last progress.
const (
	MaxValidationRequests = 4
	ValidationBound       = MaxValidationRequests * ValidationStaleAfter
)

// RecoverValidation is the reconciler's backstop for a job stuck validating
// (its event lost, or the validate function failing past its retries): it
// asks for the validation again, up to MaxValidationRequests in all (the
// count is kept in Retries, which a validated job sets back to 0); then the
// job fails and says where to look. It reports whether j waits for
// validation, so the reconciler has nothing else to do with it.
func (s *Service) RecoverValidation(ctx context.Context, j *job.Job) (bool, error) {
	if !inputValidating(j) {
		return false, nil
	}
	if s.Clock.Now().Sub(j.UpdatedAt) < ValidationStaleAfter {
		return true, nil
	}
	if j.Retries < MaxValidationRequests-1 {
		tries := j.Retries
		_, err := s.Jobs.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
			if !inputValidating(cur) || cur.Retries != tries {
				return store.ErrNoChange // validated, or another reconciler asked first
			}
			cur.ProviderStatus = statusRetried
			cur.Retries++ // and UpdatedAt moves: the request gets its hour
			return nil
		})
		if errors.Is(err, store.ErrNoChange) || errors.Is(err, store.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return true, fmt.Errorf("mark validation retry of %s: %w", j.ID, err)
		}
		service.Logger(s.Log).WarnContext(ctx, "job stuck validating; validation requested again", "job_id", j.ID, "request", tries+2, "of", MaxValidationRequests)
		if err := s.Bus.Publish(ctx, config.DetailInputValidation, ValidationRequest{JobID: j.ID}); err != nil {
			return true, fmt.Errorf("request validation of %s again: %w", j.ID, err)
		}
		return true, nil
	}
	_, err := s.failValidation(ctx, j.ID, fmt.Sprintf("the input file was not validated within %s (%d requests); nothing was submitted; "+
		"submit it again (operators: see the validate function's logs and dead-letter queue)", ValidationBound, MaxValidationRequests))
	return true, err
}
