//go:build linux

package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// withPipelines puts the shipped pipelines file beside fn's bootstrap, as the
// Makefile's build does for the deployed asset.
func withPipelines(t *testing.T, fn string) {
	t.Helper()
	raw := readFile(t, "../infra/pipelines/pipelines.json")
	if err := os.WriteFile(filepath.Join(filepath.Dir(bootstrap(t, fn)), "pipelines.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNightlyReportTick: the scheduler payload lists the day's source in S3
// (moto), submits one on-demand job tagged with the pipeline, and a second tick
// of the same date submits nothing.
func TestNightlyReportTick(t *testing.T) {
	withPipelines(t, "nightly-report")
	st := newStack(t)
	const date = "2025-11-28"
	ctx := context.Background()
	for i := range 30 {
		key := fmt.Sprintf("sources/support-triage/%s/ticket-%02d.txt", date, i)
		body := fmt.Sprintf("Ticket %d: I was charged twice, a billing question.", i)
		if _, err := st.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	// A document the run must skip, not die on.
	if _, err := st.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(st.bucket),
		Key: aws.String("sources/support-triage/" + date + "/broken.json"), Body: strings.NewReader(`{"subject":`)}); err != nil {
		t.Fatal(err)
	}
	fn := startLambda(t, "nightly-report", st)
	tick, _ := json.Marshal(pipeline.TickRequest{Pipeline: "support-triage", Date: date})
	for range 2 {
		acknowledged(t, fn.invoke(t, tick))
	}
	jobs, _, err := st.store.ListJobs(ctx, pipeline.Owner("support-triage"), store.JobQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("%d jobs after two ticks of one date, want 1", len(jobs))
	}
	j := jobs[0]
	day, _ := time.ParseInLocation(time.DateOnly, date, mustZone(t, "Europe/Berlin"))
	if j.ID != job.RunID(day, "support-triage/"+date) || j.Mode != job.ModeOnDemand || j.RecordCount != 30 ||
		j.Pipeline == nil || j.Pipeline.Skipped != 1 || j.Pipeline.Date != date {
		t.Fatalf("job %+v pipeline %+v", j, j.Pipeline)
	}
	// Job Completed for a job this table does not hold, and junk: acknowledged.
	acknowledged(t, fn.invoke(t, readFile(t, "../events/project/job-completed.json")))
	acknowledged(t, fn.invoke(t, []byte(`{"pipeline":"no-such-pipeline"}`)))
	acknowledged(t, fn.invoke(t, readFile(t, "../events/project/pipeline-run-requested.json"))) // no documents that day
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestOnDemandUnknownJob: a run request for a job the table does not hold is acknowledged.
func TestOnDemandUnknownJob(t *testing.T) {
	st := newStack(t)
	fn := startLambda(t, "ondemand", st)
	acknowledged(t, fn.invoke(t, readFile(t, "../events/project/on-demand-run-requested.json")))
	acknowledged(t, fn.invoke(t, []byte(`{"source":"mcpbatch","detail-type":"On-Demand Run Requested","detail":{}}`)))
}
