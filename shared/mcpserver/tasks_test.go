package mcpserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcptasks"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// oneJob is a Service holding one job of one owner.
type oneJob struct {
	j         *job.Job
	cancelled bool
}

func (o *oneJob) Submit(context.Context, batch.SubmitRequest) (*job.Job, error) {
	return nil, errors.New("unused")
}
func (o *oneJob) Get(_ context.Context, owner, id string) (*job.Job, error) {
	if owner != o.j.Owner || id != o.j.ID {
		return nil, service.ErrJobNotFound
	}
	return o.j, nil
}
func (o *oneJob) ResultsPage(context.Context, string, service.ResultsQuery) (service.ResultsPage, error) {
	return service.ResultsPage{}, errors.New("unused")
}
func (o *oneJob) Cancel(ctx context.Context, owner, id string) (*job.Job, error) {
	j, err := o.Get(ctx, owner, id)
	o.cancelled = o.cancelled || err == nil
	return j, err
}
func (o *oneJob) List(context.Context, string, service.ListQuery) ([]*job.Job, string, error) {
	return nil, "", errors.New("unused")
}

// A job's status maps to the task's: still running is working; finished is
// completed with get_job's answer inline, a tool error when the job failed or
// expired (SEP-2663 keeps "failed" for JSON-RPC errors); cancelled is cancelled.
func TestTaskState(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status       job.Status
		mode         string
		want         string
		isError      bool
		pollOnDemand bool
	}{
		{job.StatusInProgress, "batch", "working", false, false},
		{job.StatusSubmitted, "on_demand", "working", false, true},
		{job.StatusCompleted, "batch", "completed", false, false},
		{job.StatusPartiallyCompleted, "batch", "completed", false, false},
		{job.StatusFailed, "batch", "completed", true, false},
		{job.StatusExpired, "batch", "completed", true, false},
		{job.StatusCancelled, "batch", "cancelled", false, false},
	} {
		t.Run(string(tc.status), func(t *testing.T) {
			svc := &oneJob{j: &job.Job{ID: "j1", Owner: "alice", Status: tc.status, Mode: tc.mode, RecordCount: 10, Succeeded: 6, Failed: 2,
				CreatedAt: now, UpdatedAt: now.Add(time.Minute), ExpiresAt: now.Add(24 * time.Hour), Error: "provider said no"}}
			ts := tasks{&Server{Jobs: svc, Queries: svc}}
			st, err := ts.TaskState(context.Background(), "alice", "j1")
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != tc.want || st.Message == "" || (tc.pollOnDemand != (st.Poll == pollOnDemand)) {
				t.Fatalf("state %+v, want %s", st, tc.want)
			}
			if tc.want == "completed" {
				if st.Result["isError"] != tc.isError || st.Result["resultType"] != "complete" || st.Result["structuredContent"].(JobView).JobID != "j1" {
					t.Errorf("inline result %+v, want isError %v", st.Result, tc.isError)
				}
			} else if st.Result != nil {
				t.Errorf("a %s task carries a result", tc.want)
			}
			if _, err := ts.TaskState(context.Background(), "bob", "j1"); !errors.Is(err, mcptasks.ErrNotFound) {
				t.Errorf("bob reading alice's task: %v, want not found", err)
			}
			if err := ts.CancelTask(context.Background(), "bob", "j1"); !errors.Is(err, mcptasks.ErrNotFound) || svc.cancelled {
				t.Errorf("bob cancelling alice's task: %v (cancelled %v)", err, svc.cancelled)
			}
		})
	}
}

// oneRun lists one report pipeline run.
type oneRun struct{ run pipeline.RunInfo }

func (r oneRun) ListReports(context.Context, string, string, int) ([]pipeline.RunInfo, string, error) {
	return []pipeline.RunInfo{r.run}, "", nil
}
func (oneRun) GetReport(context.Context, string, string, time.Duration) (pipeline.ReportView, error) {
	return pipeline.ReportView{}, errors.New("unused")
}
func (oneRun) Request(context.Context, string, string, float64) (pipeline.RunInfo, error) {
	return pipeline.RunInfo{}, errors.New("unused")
}
func (r oneRun) RunOf(_ context.Context, id string) (pipeline.RunInfo, bool, error) {
	return r.run, id == r.run.JobID, nil
}

// A report pipeline's run is every caller's to read as a task, as
// list_reports shows it, but nobody's to cancel through tasks/cancel, as
// cancel_job refuses it (before: bob stopped pipeline daily's run).
func TestPipelineTaskReadNotCancelled(t *testing.T) {
	svc := &oneJob{j: &job.Job{ID: "r1", Owner: pipeline.Owner("daily"), Status: job.StatusInProgress, Mode: "batch", RecordCount: 3}}
	ts := tasks{&Server{Jobs: svc, Queries: svc, Features: Features{Reports: true}, Reports: oneRun{pipeline.RunInfo{Pipeline: "daily", JobID: "r1"}}}}
	if st, err := ts.TaskState(context.Background(), "bob", "r1"); err != nil || st.Status != "working" {
		t.Fatalf("bob reading the pipeline's run: %+v, %v; want it working", st, err)
	}
	if err := ts.CancelTask(context.Background(), "bob", "r1"); !errors.Is(err, mcptasks.ErrNotFound) || svc.cancelled {
		t.Fatalf("bob cancelling the pipeline's run: %v (cancelled %v), want not found", err, svc.cancelled)
	}
}

// listCounting is oneRun counting its list_reports pages.
type listCounting struct {
	oneRun
	lists int
}

func (r *listCounting) ListReports(ctx context.Context, p, c string, n int) ([]pipeline.RunInfo, string, error) {
	r.lists++
	return r.oneRun.ListReports(ctx, p, c, n)
}

// tasks/get and tasks/update for an id that is not the caller's look the id
// up directly, never page through report runs (a 500-item query per call
// before); a pipeline's run is still found.
func TestTaskLookupReadsTheIDDirectly(t *testing.T) {
	svc := &oneJob{j: &job.Job{ID: "r1", Owner: pipeline.Owner("daily"), Status: job.StatusInProgress, Mode: "batch", RecordCount: 3,
		Pipeline: &job.PipelineRun{Name: "daily", Date: "2026-12-01"}}}
	runs := &listCounting{oneRun: oneRun{pipeline.RunInfo{Pipeline: "daily", JobID: "r1"}}}
	ts := tasks{&Server{Jobs: svc, Queries: svc, Features: Features{Reports: true}, Reports: runs}}
	if _, err := ts.TaskState(context.Background(), "bob", "unknown-id"); !errors.Is(err, mcptasks.ErrNotFound) {
		t.Fatalf("unknown task: %v, want not found", err)
	}
	if st, err := ts.TaskState(context.Background(), "bob", "r1"); err != nil || st.Status != "working" {
		t.Fatalf("the pipeline's run: %+v, %v", st, err)
	}
	if runs.lists != 0 {
		t.Errorf("%d list_reports pages read to look up two ids, want none", runs.lists)
	}
}
