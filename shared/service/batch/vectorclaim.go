package batch

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// errOtherWriter: another ingest of the job holds its vector write.
var errOtherWriter = errors.New("another ingest is writing this job's vectors")

// writeVectors writes j's vectors into its index as the job's only writer:
// a second ingest (a duplicate "Job Output Ready") finding another's claim
// live stops with errOtherWriter, and the one writing finishes the job; a
// claim of a run that died lapses after job.RunClaim, and the reconciler's
// nudge then writes again (a re-write adds no vector twice).
func (s *Service) writeVectors(ctx context.Context, j *job.Job) error {
	me := rand.Text()
	now := s.Clock.Now()
	_, err := s.Store.UpdateJob(ctx, j.ID, func(cur *job.Job) error {
		ix := cur.Index
		if ix == nil {
			return store.ErrNoChange
		}
		if ix.Writer != "" && ix.Writer != me && now.Before(ix.WriterUntil) {
			return errOtherWriter
		}
		ix.Writer, ix.WriterUntil = me, now.Add(job.RunClaim)
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		if errors.Is(err, errOtherWriter) {
			return err
		}
		return fmt.Errorf("claim the vector write of %s: %w", j.ID, err)
	}
	defer func() {
		_, err := s.Store.UpdateJob(context.WithoutCancel(ctx), j.ID, func(cur *job.Job) error {
			if cur.Index == nil || cur.Index.Writer != me {
				return store.ErrNoChange
			}
			cur.Index.Writer, cur.Index.WriterUntil = "", time.Time{}
			return nil
		})
		if err != nil && !errors.Is(err, store.ErrNoChange) && !errors.Is(err, store.ErrNotFound) {
			service.Logger(s.Log).WarnContext(ctx, "release of a vector write's claim failed; it lapses by itself", "job_id", j.ID, "error", err)
		}
	}()
	return s.Vectors.WriteJob(ctx, j)
}
