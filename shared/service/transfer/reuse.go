package transfer

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// reuseChunk is how many records one cache look-up takes (the batch flow
// bounds its own concurrency within it).
const reuseChunk = 1000

// reusePass answers what it can of a validated file job from the result
// cache (submit_batch reuse: true, batch/reuse.go), after the scan and
// before anything is written for the provider: the file read once more,
// ids settled as the write pass settles them (newIDs over taken), record
// by record looked up with the inline submit's key. It returns, by input
// ordinal, the records answered (their results already stored on j) — nil
// when the job does not reuse.
func (s *Service) reusePass(ctx context.Context, src inputSource, j *job.Job, req batch.SubmitRequest, taken takenIDs, count int) ([]bool, error) {
	if !req.Reuse {
		return nil, nil
	}
	rc, err := src.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("reopen input %s: %w", src.uri, err)
	}
	defer rc.Close()
	newID := newIDs(taken)
	reused := make([]bool, 0, count)
	ins := make([]job.Input, 0, reuseChunk)
	ords := make([]int, 0, reuseChunk)
	flush := func() error {
		if len(ins) == 0 {
			return nil
		}
		got, err := s.Batch.ReuseChunk(ctx, req, j, ins, ords)
		if err != nil {
			return err
		}
		reused = append(reused, got...)
		ins, ords = ins[:0], ords[:0]
		return nil
	}
	r := jsonl.NewReader(rc, jsonl.Options{MaxLineBytes: maxFileLineBytes})
	for r.Next() {
		in, err := decodeLine(r.Bytes())
		if err != nil {
			return nil, fmt.Errorf("input %s changed between validation and submit (line %d): %w", src.uri, r.Line(), err)
		}
		if in.ID == "" {
			in.ID = newID()
		}
		ords = append(ords, len(reused)+len(ins))
		ins = append(ins, in)
		if len(ins) == reuseChunk {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("read input %s after line %d: %w", src.uri, r.Line(), err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(reused) != count {
		return nil, fmt.Errorf("input %s changed between validation and submit (%d records, validated %d)", src.uri, len(reused), count)
	}
	return reused, nil
}

// keepSent drops the reused records' sizes (the scan measured every record)
// and returns the input ordinals of those still to send.
func keepSent(sizes []int, reused []bool) ([]int, []int) {
	var keep, ords []int
	for i, size := range sizes {
		if !reused[i] {
			keep = append(keep, size)
			ords = append(ords, i)
		}
	}
	return keep, ords
}

// completeReused ends a validating file job whose every record was
// answered from the cache: completed at once, cost 0, nothing sent.
func (s *Service) completeReused(ctx context.Context, id string, n int) error {
	now := s.Clock.Now()
	j, err := s.Jobs.UpdateJob(ctx, id, func(cur *job.Job) error {
		if !inputValidating(cur) {
			return store.ErrNoChange
		}
		// The results were stored with the in-flight expiry; the job keeps them that long.
		cur.RecordsExpireAt = cur.ExpiresAt
		cur.Status, cur.ProviderStatus = job.StatusCompleted, "Reused"
		cur.RecordCount, cur.Shards, cur.Reused = 0, job.ShardsFor(n), n
		cur.CompletedAt, cur.UpdatedAt = now, now
		return nil
	})
	if errors.Is(err, store.ErrNoChange) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("complete reused job %s: %w", id, err)
	}
	service.Logger(s.Log).InfoContext(ctx, "every record answered from earlier results", "job_id", id, "reused", n)
	s.Telemetry.PublishCompleted(ctx, j)
	return nil
}
