package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcptasks"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// taskTools start a job and answer a task-capable client with a task.
var taskTools = map[string]bool{"submit_batch": true, "retry_failed": true, "invoke_endpoint_async": true, "run_pipeline": true}

// Suggested tasks/get intervals: on-demand jobs finish in seconds to minutes,
// provider batch jobs in minutes to hours.
const (
	pollOnDemand = 2 * time.Second
	pollBatch    = 30 * time.Second
)

// tasks is the job service seen as the tasks layer's Jobs.
type tasks struct{ s *Server }

var _ mcptasks.Jobs = tasks{}

func (t tasks) TaskState(ctx context.Context, owner, id string) (mcptasks.State, error) {
	j, err := t.s.taskJob(ctx, owner, id)
	if err != nil {
		return mcptasks.State{}, err
	}
	v := viewOf(j)
	st := mcptasks.State{
		Status: "working", Message: taskMessage(j, v),
		CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, ExpiresAt: j.ExpiresAt, Poll: pollBatch,
	}
	if j.Mode == "on_demand" {
		st.Poll = pollOnDemand
	}
	switch j.Status {
	case job.StatusCancelled:
		st.Status = "cancelled"
	case job.StatusCompleted, job.StatusPartiallyCompleted, job.StatusFailed, job.StatusExpired:
		// The result inline is what get_job answers for the finished job. A
		// failed or expired job is a tool error inside a completed task: the
		// extension keeps "failed" for JSON-RPC errors (SEP-2663, Task
		// Execution Errors).
		text := jobSummary(j)
		if j.Error != "" {
			text += " " + j.Error
		}
		st.Status = "completed"
		st.Result = map[string]any{
			"content":           []map[string]any{{"type": "text", "text": text}},
			"structuredContent": v,
			"isError":           j.Status == job.StatusFailed || j.Status == job.StatusExpired,
			"resultType":        "complete",
		}
	}
	return st, nil
}

// CancelTask cancels the caller's own job only: a report pipeline's run is
// readable by every caller (taskJob), not theirs to stop, as cancel_job says.
func (t tasks) CancelTask(ctx context.Context, owner, id string) error {
	_, err := t.s.Jobs.Cancel(ctx, owner, id)
	if errors.Is(err, service.ErrJobNotFound) {
		return mcptasks.ErrNotFound
	}
	return err
}

// taskJob reads the job behind a task: the caller's own, or the job of a
// report pipeline run (owned by the pipeline; any caller of this deployment
// may read reports, as list_reports shows). Anything else is not found.
func (s *Server) taskJob(ctx context.Context, owner, id string) (*job.Job, error) {
	j, err := s.Queries.Get(ctx, owner, id)
	if errors.Is(err, service.ErrJobNotFound) && s.Features.Reports && s.Reports != nil {
		// The id itself is read, so an unknown id costs one read.
		ri, ok, rerr := s.Reports.RunOf(ctx, id)
		if rerr != nil {
			return nil, rerr
		}
		if ok {
			j, err = s.Queries.Get(ctx, pipeline.Owner(ri.Pipeline), id)
		}
	}
	if errors.Is(err, service.ErrJobNotFound) {
		return nil, mcptasks.ErrNotFound
	}
	return j, err
}

// taskMessage is a task's statusMessage: progress, tokens and cost.
func taskMessage(j *job.Job, v JobView) string {
	done := j.Succeeded + j.Failed
	msg := fmt.Sprintf("%s: %d/%d records done (%d succeeded, %d failed), %d input + %d output tokens, $%.4f",
		j.Status, done, j.RecordCount, j.Succeeded, j.Failed, j.InputTokens, j.OutputTokens, v.CostUSD)
	if len(j.Warnings) > 0 {
		msg += fmt.Sprintf("; %d warning(s), see get_job", len(j.Warnings))
	}
	return msg
}
