package storetest

import (
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// testEveryJobField stores a job whose every exported field is set (by
// reflection, so a field added to job.Job is covered without a change here)
// through CreateJob and then UpdateJob, and reads each back whole.
func testEveryJobField(e *env) {
	now := e.clock.Now()
	var j job.Job
	Fill(&j, now)
	// What the store itself keys, indexes or checks must be valid.
	j.ID, j.Provider, j.Status = job.NewID(now), job.ProviderBedrock, job.StatusInProgress
	j.ExpiresAt = now.Add(7 * 24 * time.Hour).Truncate(time.Second)
	e.create(&j)
	e.expectJob("CreateJob then GetJob", &j)

	var next job.Job
	Fill(&next, now.Add(time.Minute))
	next.Provider, next.Status = job.ProviderAnthropic, job.StatusCompleted
	next.ExpiresAt = now.Add(9 * 24 * time.Hour).Truncate(time.Second)
	e.clock.Advance(time.Second)
	if _, err := e.s.UpdateJob(e.ctx, j.ID, func(c *job.Job) error { *c = next; return nil }); err != nil {
		e.t.Fatalf("UpdateJob: %v", err)
	}
	next.ID, next.Version, next.UpdatedAt = j.ID, 2, e.clock.Now()
	e.expectJob("UpdateJob then GetJob", &next)
}

func (e *env) expectJob(step string, want *job.Job) {
	e.t.Helper()
	got := mustGet(e, want.ID)
	if d := Diff(*want, *got); len(d) > 0 {
		e.t.Fatalf("%s lost or changed %d fields of job.Job:\n%s", step, len(d), joinLines(d))
	}
}

// testEveryRecordField does the same for job.Record, read back by
// ListRecords and by GetRecords.
func testEveryRecordField(e *env) {
	now := e.clock.Now()
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusIngesting, now))
	var r job.Record
	Fill(&r, now)
	r.Status = job.RecordSucceeded
	r.ExpiresAt = now.Add(24 * time.Hour).Truncate(time.Second)
	rs := ords(j.ID, 3)
	if err := e.s.PutRecords(e.ctx, rs, []job.Record{r}); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	r.JobID = j.ID // the store names the set's job
	listed := e.allRecords(e.t, rs, store.RecordQuery{})
	got, err := e.s.GetRecords(e.ctx, rs, []job.RecordKey{r.Key()})
	if err != nil {
		e.t.Fatalf("GetRecords: %v", err)
	}
	for _, c := range []struct {
		step string
		recs []job.Record
	}{{"ListRecords", listed}, {"GetRecords", got}} {
		if len(c.recs) != 1 {
			e.t.Fatalf("%s returned %d records, want 1", c.step, len(c.recs))
		}
		if d := Diff(r, c.recs[0]); len(d) > 0 {
			e.t.Fatalf("PutRecords then %s lost or changed %d fields of job.Record:\n%s", c.step, len(d), joinLines(d))
		}
	}
}

func joinLines(lines []string) string {
	out := ""
	for _, l := range lines {
		out += "  " + l + "\n"
	}
	return out
}
