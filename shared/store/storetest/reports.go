package storetest

import (
	"reflect"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// testReportFieldsRoundTrip: the on-demand state, cache token counts and the
// pipeline tag survive create and update, and clearing the notification claim
// (a failed send) is stored too.
func testReportFieldsRoundTrip(e *env) {
	j := e.newJob("o", job.ProviderBedrock, job.StatusQueued, e.clock.Now())
	j.Mode = job.ModeOnDemand
	temp := 0.2
	j.OnDemand = &job.OnDemand{Params: job.Params{System: "sys", MaxTokens: 100, Temperature: &temp}, Concurrency: 4,
		Offset: 1234, Line: 10, Succeeded: 9, Failed: 1, InputTokens: 50, OutputTokens: 60, CacheReadTokens: 7, CacheWriteTokens: 3, Throttles: 2, RunRequested: true}
	j.CacheReadTokens, j.CacheWriteTokens = 7, 3
	j.Pipeline = &job.PipelineRun{Name: "support-triage", Date: "2026-11-27", SkippedURI: "s3://b/reports/x/skipped.json", Skipped: 2, Documents: 12}
	if err := e.s.CreateJob(e.ctx, j); err != nil {
		e.t.Fatal(err)
	}
	got, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	if got.Mode != j.Mode || got.CacheReadTokens != 7 || got.CacheWriteTokens != 3 ||
		!reflect.DeepEqual(got.OnDemand, j.OnDemand) || !reflect.DeepEqual(got.Pipeline, j.Pipeline) {
		e.t.Fatalf("round trip:\n got %+v %+v %+v\nwant %+v %+v %+v", got, got.OnDemand, got.Pipeline, j, j.OnDemand, j.Pipeline)
	}
	notified := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{notified, {}} {
		_, err := e.s.UpdateJob(e.ctx, j.ID, func(j *job.Job) error { j.Pipeline.Notified, j.Pipeline.ReportURI = at, "s3://b/reports/x"; return nil })
		if err != nil {
			e.t.Fatal(err)
		}
		got, err = e.s.GetJob(e.ctx, j.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		if !got.Pipeline.Notified.Equal(at) || got.Pipeline.ReportURI != "s3://b/reports/x" {
			e.t.Fatalf("notified %v report %q, want %v", got.Pipeline.Notified, got.Pipeline.ReportURI, at)
		}
	}
}
