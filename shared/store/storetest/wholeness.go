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
	rs := e.ords(j.ID, 3)
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

// testLargeJob: a job far over DynamoDB's 400 KB item limit even compressed
// (a 1.5 MB system prompt that does not compress) is stored, updated,
// listed and read back whole: no job is refused for its size.
func testLargeJob(e *env) {
	now := e.clock.Now()
	j := e.newJob("alice", job.ProviderBedrock, job.StatusQueued, now)
	j.Params = &job.Params{System: incompressible(1_500_000), MaxTokens: 512}
	e.create(j)
	e.expectJob("CreateJob then GetJob", j)
	for i := range 2 {
		e.clock.Advance(time.Second)
		got, err := e.s.UpdateJob(e.ctx, j.ID, func(x *job.Job) error { x.Succeeded++; x.Status = job.StatusInProgress; return nil })
		if err != nil {
			e.t.Fatalf("UpdateJob %d: %v", i+1, err)
		}
		j.Succeeded, j.Status, j.Version, j.UpdatedAt = i+1, job.StatusInProgress, int64(i+2), e.clock.Now()
		if d := Diff(*j, *got); len(d) > 0 {
			e.t.Fatalf("UpdateJob %d returned a job that differs: %v", i+1, d)
		}
		e.expectJob("UpdateJob then GetJob", j)
	}
	listed, _, err := e.s.ListJobs(e.ctx, "alice", store.JobQuery{})
	if err != nil || len(listed) != 1 {
		e.t.Fatalf("ListJobs: %d jobs, %v; want the large job", len(listed), err)
	}
	if d := Diff(*j, *listed[0]); len(d) > 0 {
		e.t.Fatalf("ListJobs returned a job that differs: %v", d)
	}
}

// incompressible is n bytes of text that gzip cannot shrink much (a
// xorshift stream in 64 letters).
func incompressible(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	b := make([]byte, n)
	x := uint64(88172645463325252)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = letters[x%64]
	}
	return string(b)
}
