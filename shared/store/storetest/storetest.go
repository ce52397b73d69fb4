// Package storetest is the contract suite every store.Store adapter passes:
// localstore and dynamostore run the same cases, so they behave alike.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Factory returns a fresh, empty store whose clock is now: the suite moves
// time forward to expire items, so adapters take the clock as an option
// (WithNow in both).
type Factory func(t *testing.T, now func() time.Time) store.Store

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// epoch is in the future, so a real TTL sweeper (where the backend has one)
// never deletes test items: expiry is the store's own read-side filter.
var epoch = time.Date(2031, 3, 4, 5, 6, 7, 123456789, time.UTC)

// env is what one case gets: a fresh store and its clock.
type env struct {
	t     *testing.T
	ctx   context.Context
	s     store.Store
	clock *Clock
	// packed: the case's jobs keep their records packed (job.RecordSet.Packed).
	packed bool
}

// suiteCase is one case of the suite.
type suiteCase struct {
	name string
	run  func(e *env)
}

// Run runs the contract suite; newStore is called once per case.
func Run(t *testing.T, newStore Factory) {
	cases := []suiteCase{
		{"CreateAndGet", testCreateAndGet},
		{"CreateFillsDefaults", testCreateFillsDefaults},
		{"CreateExisting", testCreateExisting},
		{"NotFound", testNotFound},
		{"ExpiredJobHidden", testExpiredJobHidden},
		{"ExpiredRecordsHidden", testExpiredRecordsHidden},
		{"UpdateJob", testUpdateJob},
		{"UpdateJobNoChange", testUpdateJobNoChange},
		{"UpdateJobMutatorError", testUpdateJobMutatorError},
		{"UpdateJobConcurrent", testUpdateJobConcurrent},
		{"ListJobsPaging", testListJobsPaging},
		{"ListJobsStatusFilter", testListJobsStatusFilter},
		{"ListJobsOwnerIsolation", testListJobsOwnerIsolation},
		{"ListInFlight", testListInFlight},
		{"PutRecordsIdempotent", testPutRecordsIdempotent},
		{"ListRecordsInInputOrderAcrossShards", testListRecordsPaging},
		{"ListRecordsSparseOverManyShards", testListRecordsSparse},
		{"RecordsByID", testRecordsByID},
		{"RecordCursorBounded", testRecordCursorBounded},
		{"ListRecordsDefaultLimit", testListRecordsDefaultLimit},
		{"ListRecordsStatusFilter", testListRecordsStatusFilter},
		{"RecordRoundTrip", testRecordRoundTrip},
		{"LargeOutput", testLargeOutput},
		{"OutputTooLarge", testOutputTooLarge},
		{"BadCursor", testBadCursor},
		{"ReportFieldsRoundTrip", testReportFieldsRoundTrip},
		{"RefOwner", testRefOwner},
		{"Slots", testSlots},
		{"OpsFieldsRoundTrip", testOpsFieldsRoundTrip},
		{"GetRecords", testGetRecords},
		{"EveryJobField", testEveryJobField},
		{"EveryRecordField", testEveryRecordField},
		{"LargeJob", testLargeJob},
		{"Outcomes", testOutcomes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewClock(epoch)
			tc.run(&env{t: t, ctx: t.Context(), s: newStore(t, clock.Now), clock: clock})
		})
	}
	// Every promise about records again, with the records packed many to an
	// item, plus the cases only that layout can break.
	t.Run("Packed", func(t *testing.T) {
		all := append(cases, packedCases...)
		for name := range recordCases {
			if !slices.ContainsFunc(all, func(c suiteCase) bool { return c.name == name }) {
				t.Fatalf("record case %s is not a case of the suite", name)
			}
		}
		for _, tc := range all {
			if !recordCases[tc.name] {
				continue
			}
			t.Run(tc.name, func(t *testing.T) {
				clock := NewClock(epoch)
				tc.run(&env{t: t, ctx: t.Context(), s: newStore(t, clock.Now), clock: clock, packed: true})
			})
		}
	})
}

// recordCases are the cases about records, run in both layouts.
var recordCases = map[string]bool{
	"ExpiredJobHidden": true, "ExpiredRecordsHidden": true, "PutRecordsIdempotent": true,
	"ListRecordsInInputOrderAcrossShards": true, "ListRecordsSparseOverManyShards": true, "RecordsByID": true,
	"RecordCursorBounded": true, "ListRecordsDefaultLimit": true, "ListRecordsStatusFilter": true,
	"RecordRoundTrip": true, "LargeOutput": true, "OutputTooLarge": true, "BadCursor": true, "GetRecords": true,
	"EveryRecordField": true, "Outcomes": true,
	"PackedRegrouped": true, "PackedManyPages": true, "PackedConcurrentWriters": true,
}

// newJob is a valid in-flight job created at created, expiring in 7 days.
func (e *env) newJob(owner, provider string, st job.Status, created time.Time) *job.Job {
	return &job.Job{
		ID:       job.NewID(created),
		Owner:    owner,
		Provider: provider,
		Model:    "anthropic.claude-haiku-4-5-20251001-v1:0",
		Status:   st,
		Shards:   1,
		// The layout the case runs under.
		PackedRecords: e.packed,
		// As every job is made now; the by-id keys of older jobs are
		// checked apart (see testRecordsByID).
		InputOrder: true,
		TTLDays:    7,
		CreatedAt:  created,
		UpdatedAt:  created,
		ExpiresAt:  job.ExpiresAt(created, 7),
	}
}

func (e *env) create(j *job.Job) *job.Job {
	e.t.Helper()
	if err := e.s.CreateJob(e.ctx, j); err != nil {
		e.t.Fatalf("CreateJob(%s): %v", j.ID, err)
	}
	return j
}

// norm makes jobs comparable across adapters: times in UTC without monotonic
// readings, ExpiresAt to the second, empty Parts as nil.
func norm(j *job.Job) job.Job {
	c := *j
	for _, p := range []*time.Time{&c.CreatedAt, &c.UpdatedAt, &c.SubmittedAt, &c.CompletedAt, &c.LastEventAt, &c.RecordsExpireAt} {
		*p = normTime(*p)
	}
	c.Parts = append([]job.Part(nil), c.Parts...)
	for i := range c.Parts {
		for _, p := range []*time.Time{&c.Parts[i].SubmitLeaseUntil, &c.Parts[i].SubmitTriedAt} {
			*p = normTime(*p)
		}
	}
	c.ExpiresAt = normTime(c.ExpiresAt.Truncate(time.Second))
	if len(c.Parts) == 0 {
		c.Parts = nil
	}
	if c.Checkpoint != nil {
		cp := *c.Checkpoint
		c.Checkpoint = &cp
	}
	return c
}

func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC()
}

func normRecord(r job.Record) job.Record {
	r.ExpiresAt = normTime(r.ExpiresAt.Truncate(time.Second))
	return r
}

func assertJob(t *testing.T, want, got *job.Job) {
	t.Helper()
	w, g := norm(want), norm(got)
	if !reflect.DeepEqual(w, g) {
		t.Fatalf("job mismatch\nwant %+v\n got %+v", w, g)
	}
}

func ids(jobs []*job.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func recordIDs(recs []job.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func testCreateAndGet(e *env) {
	now := e.clock.Now()
	j := e.newJob("arn:aws:iam::123456789012:role/alice", job.ProviderBedrock, job.StatusInProgress, now)
	j.Name = "nightly eval"
	j.ProviderStatus = "InProgress"
	j.FinalStatus = job.StatusCompleted
	j.InputURI = "s3://bucket/input/" + j.ID + "/records.jsonl"
	j.OutputURI = "s3://bucket/output/" + j.ID + "/"
	j.FailureURI = "s3://bucket/sagemaker/failure/" + j.ID + "-error.out"
	j.RecordCount, j.Succeeded, j.Failed, j.BadLines = 5000, 12, 3, 1
	j.InputTokens, j.OutputTokens = 1<<40, 987654321
	j.Shards = 2
	j.Error = "partial: throttled"
	j.OutputReadyPublished = true
	j.SubmittedAt = now.Add(time.Second)
	j.LastEventAt = now.Add(2 * time.Second)
	j.RecordsExpireAt = now.Add(7 * 24 * time.Hour)
	j.Retries, j.LastError, j.MaxInputLineBytes = 2, "ingest: AccessDenied", 5<<20
	j.Parts = []job.Part{
		{Index: 0, Name: "mcpbatch-" + j.ID + "-p1", Ref: "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abc", ProviderStatus: "InProgress", Status: job.StatusInProgress, RecordCount: 2500, InputURI: "s3://b/in/p1", OutputURI: "s3://b/out/p1", Message: "ok"},
		{Index: 1, Name: "mcpbatch-" + j.ID + "-p2", Status: job.StatusSubmitted, RecordCount: 2500, InputURI: "s3://b/in/p2", OutputURI: "s3://b/out/p2",
			SubmitLease: "run1", SubmitLeaseUntil: now.Add(time.Minute), SubmitTriedAt: now},
	}
	j.Checkpoint = &job.Checkpoint{Part: 1, Offset: 123456, Line: 42, Succeeded: 40, Failed: 2, BadLines: 1, InputTokens: 999, OutputTokens: 888}
	e.create(j)
	if j.Version != 1 {
		e.t.Fatalf("CreateJob set Version %d, want 1", j.Version)
	}
	got, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatalf("GetJob: %v", err)
	}
	assertJob(e.t, j, got)
}

func testCreateFillsDefaults(e *env) {
	j := e.newJob("alice", job.ProviderBedrock, job.StatusQueued, time.Time{})
	j.ID = job.NewID(e.clock.Now())
	j.CreatedAt, j.UpdatedAt = time.Time{}, time.Time{}
	j.ExpiresAt = job.ExpiresAt(e.clock.Now(), 7)
	e.create(j)
	got, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatalf("GetJob: %v", err)
	}
	if !got.CreatedAt.Equal(e.clock.Now()) || !got.UpdatedAt.Equal(e.clock.Now()) {
		e.t.Fatalf("CreatedAt %v UpdatedAt %v, want both %v", got.CreatedAt, got.UpdatedAt, e.clock.Now())
	}
	if got.Version != 1 {
		e.t.Fatalf("Version %d, want 1", got.Version)
	}
}

func testCreateExisting(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusSubmitted, e.clock.Now()))
	dup := e.newJob("mallory", job.ProviderBedrock, job.StatusQueued, e.clock.Now())
	dup.ID = j.ID
	if err := e.s.CreateJob(e.ctx, dup); !errors.Is(err, store.ErrExists) {
		e.t.Fatalf("CreateJob with a taken id: %v, want ErrExists", err)
	}
	got, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatalf("GetJob: %v", err)
	}
	if got.Owner != "alice" {
		e.t.Fatalf("the failed create overwrote the job: owner %q", got.Owner)
	}
}

func testNotFound(e *env) {
	missing := job.NewID(e.clock.Now())
	if _, err := e.s.GetJob(e.ctx, missing); !errors.Is(err, store.ErrNotFound) {
		e.t.Fatalf("GetJob(missing): %v, want ErrNotFound", err)
	}
	called := false
	_, err := e.s.UpdateJob(e.ctx, missing, func(*job.Job) error { called = true; return nil })
	if !errors.Is(err, store.ErrNotFound) {
		e.t.Fatalf("UpdateJob(missing): %v, want ErrNotFound", err)
	}
	if called {
		e.t.Fatal("UpdateJob called the mutator for a missing job")
	}
}

func testExpiredJobHidden(e *env) {
	now := e.clock.Now()
	j := e.newJob("alice", job.ProviderBedrock, job.StatusInProgress, now)
	j.ExpiresAt = now.Add(time.Hour).Truncate(time.Second)
	j.Shards = 2
	e.create(j)
	keep := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusInProgress, now.Add(-time.Minute)))
	recs := []job.Record{
		{ID: "a", Status: job.RecordSucceeded, Output: "x", ExpiresAt: j.ExpiresAt},
		{ID: "b", Status: job.RecordFailed, ErrorCode: "400", ExpiresAt: j.ExpiresAt},
	}
	if err := e.s.PutRecords(e.ctx, j.RecordSet(), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	// Live until the very end, expired from the instant ExpiresAt is reached.
	e.clock.Set(j.ExpiresAt.Add(-time.Millisecond))
	if _, err := e.s.GetJob(e.ctx, j.ID); err != nil {
		e.t.Fatalf("GetJob just before expiry: %v", err)
	}
	if got, _, err := e.s.ListRecords(e.ctx, j.RecordSet(), store.RecordQuery{}); err != nil || len(got) != 2 {
		e.t.Fatalf("ListRecords just before expiry: %v, %d records, want 2", err, len(got))
	}
	e.clock.Set(j.ExpiresAt)
	reads := []struct {
		name string
		read func() error
	}{
		{"GetJob", func() error {
			_, err := e.s.GetJob(e.ctx, j.ID)
			if !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("got %v, want ErrNotFound", err)
			}
			return nil
		}},
		{"UpdateJob", func() error {
			_, err := e.s.UpdateJob(e.ctx, j.ID, func(j *job.Job) error { j.Failed++; return nil })
			if !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("got %v, want ErrNotFound", err)
			}
			return nil
		}},
		{"ListJobs", func() error {
			jobs, _, err := e.s.ListJobs(e.ctx, "alice", store.JobQuery{})
			if err != nil {
				return err
			}
			if got := ids(jobs); !slices.Equal(got, []string{keep.ID}) {
				return fmt.Errorf("got %v, want only %s", got, keep.ID)
			}
			return nil
		}},
		{"ListJobsByStatus", func() error {
			jobs, _, err := e.s.ListJobs(e.ctx, "alice", store.JobQuery{Status: job.StatusInProgress, Limit: 1})
			if err != nil {
				return err
			}
			if got := ids(jobs); !slices.Equal(got, []string{keep.ID}) {
				return fmt.Errorf("got %v, want only %s", got, keep.ID)
			}
			return nil
		}},
		{"ListInFlight", func() error {
			jobs, err := e.s.ListInFlight(e.ctx, job.ProviderBedrock, e.clock.Now().Add(time.Hour), 10)
			if err != nil {
				return err
			}
			if got := ids(jobs); !slices.Equal(got, []string{keep.ID}) {
				return fmt.Errorf("got %v, want only %s", got, keep.ID)
			}
			return nil
		}},
		{"ListRecords", func() error {
			got, next, err := e.s.ListRecords(e.ctx, j.RecordSet(), store.RecordQuery{})
			if err != nil {
				return err
			}
			if len(got) != 0 || next != "" {
				return fmt.Errorf("got %v (next %q), want none", recordIDs(got), next)
			}
			return nil
		}},
	}
	for _, r := range reads {
		e.t.Run(r.name, func(t *testing.T) {
			if err := r.read(); err != nil {
				t.Fatal(err)
			}
		})
	}
	// An expired job does not hold its id: TTL would have deleted it.
	again := e.newJob("bob", job.ProviderBedrock, job.StatusQueued, e.clock.Now())
	again.ID = j.ID
	if err := e.s.CreateJob(e.ctx, again); err != nil {
		e.t.Fatalf("CreateJob over an expired job: %v", err)
	}
	got, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil || got.Owner != "bob" {
		e.t.Fatalf("GetJob after re-create: %v, %+v", err, got)
	}
}

func testExpiredRecordsHidden(e *env) {
	j := e.newJob("alice", job.ProviderBedrock, job.StatusIngesting, e.clock.Now())
	j.Shards = 3
	e.create(j)
	soon := e.clock.Now().Add(time.Hour)
	later := e.clock.Now().Add(48 * time.Hour)
	var recs []job.Record
	var want []string
	for i := range 40 {
		r := job.Record{ID: fmt.Sprintf("r%03d", i), Status: job.RecordSucceeded, Output: "ok", ExpiresAt: soon}
		if i%4 == 0 {
			r.ExpiresAt = later
			want = append(want, r.ID)
		}
		if i%8 == 0 {
			r.Status = job.RecordFailed
		}
		recs = append(recs, r)
	}
	if err := e.s.PutRecords(e.ctx, j.RecordSet(), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	e.clock.Advance(2 * time.Hour)
	cases := []struct {
		name   string
		status job.RecordStatus
		want   []string
	}{
		{"all", "", want},
		{"failed", job.RecordFailed, []string{"r000", "r008", "r016", "r024", "r032"}},
	}
	for _, tc := range cases {
		e.t.Run(tc.name, func(t *testing.T) {
			got := e.allRecords(t, j.RecordSet(), store.RecordQuery{Status: tc.status, Limit: 3})
			g := recordIDs(got)
			slices.Sort(g)
			if !slices.Equal(g, tc.want) {
				t.Fatalf("live records %v, want %v", g, tc.want)
			}
		})
	}
}

func testUpdateJob(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusSubmitted, e.clock.Now()))
	e.clock.Advance(90 * time.Second)
	got, err := e.s.UpdateJob(e.ctx, j.ID, func(x *job.Job) error {
		x.Status = job.StatusInProgress
		x.ProviderStatus = "InProgress"
		x.Parts = append(x.Parts, job.Part{Name: "p", Status: job.StatusInProgress})
		x.ID = "someone-else" // ignored: a mutator cannot move a job
		x.UpdatedAt = time.Time{}
		return nil
	})
	if err != nil {
		e.t.Fatalf("UpdateJob: %v", err)
	}
	want := *j
	want.Status = job.StatusInProgress
	want.ProviderStatus = "InProgress"
	want.Parts = []job.Part{{Name: "p", Status: job.StatusInProgress}}
	want.Version = 2
	want.UpdatedAt = e.clock.Now()
	assertJob(e.t, &want, got)
	stored, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatalf("GetJob: %v", err)
	}
	assertJob(e.t, &want, stored)

	got, err = e.s.UpdateJob(e.ctx, j.ID, func(x *job.Job) error { x.Succeeded = 7; return nil })
	if err != nil || got.Version != 3 || got.Succeeded != 7 {
		e.t.Fatalf("second UpdateJob: %v, version %d succeeded %d; want 3, 7", err, got.Version, got.Succeeded)
	}
}

func testUpdateJobNoChange(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusInProgress, e.clock.Now()))
	e.clock.Advance(time.Minute)
	got, err := e.s.UpdateJob(e.ctx, j.ID, func(x *job.Job) error {
		x.Status = job.StatusFailed // half-made edit, then give up
		return fmt.Errorf("nothing to do: %w", store.ErrNoChange)
	})
	if !errors.Is(err, store.ErrNoChange) {
		e.t.Fatalf("UpdateJob: %v, want ErrNoChange", err)
	}
	if got == nil {
		e.t.Fatal("UpdateJob with ErrNoChange returned no job")
	}
	assertJob(e.t, j, got)
	stored, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatalf("GetJob: %v", err)
	}
	assertJob(e.t, j, stored)
}

func testUpdateJobMutatorError(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusInProgress, e.clock.Now()))
	boom := errors.New("boom")
	if _, err := e.s.UpdateJob(e.ctx, j.ID, func(x *job.Job) error { x.Failed = 99; return boom }); !errors.Is(err, boom) {
		e.t.Fatalf("UpdateJob: %v, want the mutator's error", err)
	}
	stored, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatalf("GetJob: %v", err)
	}
	assertJob(e.t, j, stored)
}

func testUpdateJobConcurrent(e *env) {
	const n = 20
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusInProgress, e.clock.Now()))
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := e.s.UpdateJob(e.ctx, j.ID, func(x *job.Job) error { x.Succeeded++; return nil })
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			e.t.Fatalf("concurrent UpdateJob: %v", err)
		}
	}
	got, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatalf("GetJob: %v", err)
	}
	if got.Succeeded != n || got.Version != n+1 {
		e.t.Fatalf("after %d increments: succeeded %d version %d, want %d and %d", n, got.Succeeded, got.Version, n, n+1)
	}
}

// seedJobs creates jobs for owners alice and bob, interleaved in time, with
// two alice jobs sharing a CreatedAt (order then falls to the id). It returns
// alice's jobs newest first.
func (e *env) seedJobs() []*job.Job {
	base := e.clock.Now().Add(-time.Hour)
	statuses := []job.Status{job.StatusCompleted, job.StatusInProgress, job.StatusCompleted, job.StatusFailed}
	var alice []*job.Job
	for i := range 9 {
		created := base.Add(time.Duration(i) * time.Minute)
		if i == 5 {
			created = alice[len(alice)-1].CreatedAt
		}
		j := e.create(e.newJob("alice", job.ProviderBedrock, statuses[i%len(statuses)], created))
		alice = append(alice, j)
		if i%3 == 0 {
			e.create(e.newJob("bob", job.ProviderBedrock, job.StatusCompleted, created.Add(time.Second)))
		}
	}
	slices.SortFunc(alice, func(a, b *job.Job) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return alice
}

// allJobs pages through ListJobs, checking every page is within the limit.
func (e *env) allJobs(t *testing.T, owner string, q store.JobQuery) (out []*job.Job, pages int) {
	t.Helper()
	for {
		jobs, next, err := e.s.ListJobs(e.ctx, owner, q)
		if err != nil {
			t.Fatalf("ListJobs page %d: %v", pages+1, err)
		}
		pages++
		if len(jobs) > q.Limit {
			t.Fatalf("page of %d jobs, limit %d", len(jobs), q.Limit)
		}
		if next != "" && len(jobs) == 0 {
			t.Fatalf("empty page %d with a next cursor", pages)
		}
		out = append(out, jobs...)
		if next == "" {
			return out, pages
		}
		if pages > 100 {
			t.Fatal("ListJobs does not end")
		}
		q.Cursor = next
	}
}

func testListJobsPaging(e *env) {
	alice := e.seedJobs()
	cases := []struct {
		limit, pages int
	}{{1, 9}, {3, 3}, {4, 3}, {9, 1}, {100, 1}}
	for _, tc := range cases {
		e.t.Run(fmt.Sprintf("limit%d", tc.limit), func(t *testing.T) {
			got, pages := e.allJobs(t, "alice", store.JobQuery{Limit: tc.limit})
			if !slices.Equal(ids(got), ids(alice)) {
				t.Fatalf("jobs newest first:\n got %v\nwant %v", ids(got), ids(alice))
			}
			if pages != tc.pages {
				t.Fatalf("%d pages, want %d", pages, tc.pages)
			}
		})
	}
	got, next, err := e.s.ListJobs(e.ctx, "alice", store.JobQuery{Limit: 2})
	if err != nil {
		e.t.Fatalf("ListJobs: %v", err)
	}
	assertJob(e.t, alice[0], got[0])
	if next == "" {
		e.t.Fatal("no cursor after a full first page")
	}
}

func testListJobsStatusFilter(e *env) {
	alice := e.seedJobs()
	for _, st := range []job.Status{job.StatusCompleted, job.StatusInProgress, job.StatusFailed, job.StatusQueued} {
		e.t.Run(string(st), func(t *testing.T) {
			var want []string
			for _, j := range alice {
				if j.Status == st {
					want = append(want, j.ID)
				}
			}
			got, _ := e.allJobs(t, "alice", store.JobQuery{Status: st, Limit: 2})
			if !slices.Equal(ids(got), want) {
				t.Fatalf("%s jobs:\n got %v\nwant %v", st, ids(got), want)
			}
		})
	}
}

func testListJobsOwnerIsolation(e *env) {
	alice := e.seedJobs()
	aliceIDs := ids(alice)
	bob, _ := e.allJobs(e.t, "bob", store.JobQuery{Limit: 2})
	if len(bob) != 3 {
		e.t.Fatalf("bob has %d jobs, want 3", len(bob))
	}
	for _, j := range bob {
		if j.Owner != "bob" || slices.Contains(aliceIDs, j.ID) {
			e.t.Fatalf("bob's listing holds %s of %s", j.ID, j.Owner)
		}
	}
	for _, owner := range []string{"carol", "alic", "alice ", "ALICE"} {
		jobs, next, err := e.s.ListJobs(e.ctx, owner, store.JobQuery{Limit: 5})
		if err != nil || len(jobs) != 0 || next != "" {
			e.t.Fatalf("ListJobs(%q): %v, %d jobs, next %q; want none", owner, err, len(jobs), next)
		}
	}
	// alice's cursor does not open bob's listing.
	_, next, err := e.s.ListJobs(e.ctx, "alice", store.JobQuery{Limit: 1})
	if err != nil || next == "" {
		e.t.Fatalf("ListJobs: %v, next %q", err, next)
	}
	if _, _, err := e.s.ListJobs(e.ctx, "bob", store.JobQuery{Limit: 1, Cursor: next}); !errors.Is(err, store.ErrBadCursor) {
		e.t.Fatalf("bob with alice's cursor: %v, want ErrBadCursor", err)
	}
}

func testListInFlight(e *env) {
	now := e.clock.Now()
	at := func(minutes int) time.Time { return now.Add(time.Duration(minutes) * time.Minute) }
	mk := func(provider string, st job.Status, updated time.Time) *job.Job {
		j := e.newJob("alice", provider, st, at(-100))
		j.UpdatedAt = updated
		return e.create(j)
	}
	a := mk(job.ProviderBedrock, job.StatusSubmitted, at(-50))
	b := mk(job.ProviderBedrock, job.StatusInProgress, at(-40))
	c := mk(job.ProviderBedrock, job.StatusQueued, at(-30))
	d := mk(job.ProviderBedrock, job.StatusIngesting, at(-5))
	mk(job.ProviderBedrock, job.StatusCompleted, at(-60)) // terminal: never listed
	mk(job.ProviderBedrock, job.StatusFailed, at(-45))
	mk("anthropic", job.StatusInProgress, at(-55))                                   // other provider
	x := mk(job.ProviderBedrock, job.StatusCancelling, at(-30).Add(time.Nanosecond)) // exactly at the bound below: excluded

	check := func(name string, before time.Time, limit int, want ...*job.Job) {
		e.t.Run(name, func(t *testing.T) {
			got, err := e.s.ListInFlight(e.ctx, job.ProviderBedrock, before, limit)
			if err != nil {
				t.Fatalf("ListInFlight: %v", err)
			}
			if !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("in flight oldest first:\n got %v\nwant %v", ids(got), ids(want))
			}
		})
	}
	check("before-30m", at(-30).Add(time.Nanosecond), 10, a, b, c)
	check("limit", now, 2, a, b)
	check("strictly-before", at(-40), 10, a)
	check("none", at(-50), 10)

	// Becoming terminal removes a job (the sparse index loses it); an update
	// moves UpdatedAt to now, out of an older window.
	e.clock.Advance(time.Minute)
	if _, err := e.s.UpdateJob(e.ctx, a.ID, func(j *job.Job) error { j.Status = job.StatusCompleted; return nil }); err != nil {
		e.t.Fatalf("UpdateJob: %v", err)
	}
	if _, err := e.s.UpdateJob(e.ctx, b.ID, func(j *job.Job) error { j.Status = job.StatusIngesting; return nil }); err != nil {
		e.t.Fatalf("UpdateJob: %v", err)
	}
	check("after-updates", at(-30).Add(time.Nanosecond), 10, c)
	check("all", e.clock.Now().Add(time.Nanosecond), 0, c, x, d, mustGet(e, b.ID))
}

func mustGet(e *env, id string) *job.Job {
	e.t.Helper()
	j, err := e.s.GetJob(e.ctx, id)
	if err != nil {
		e.t.Fatalf("GetJob(%s): %v", id, err)
	}
	return j
}

// records makes n records r0000.. with every fifth one failed. Their
// ordinals are a permutation of 0..n-1 unlike their id order (the caller's
// input order need not be the ids').
func (e *env) records(n int) []job.Record {
	exp := e.clock.Now().Add(7 * 24 * time.Hour)
	recs := make([]job.Record, n)
	for i := range recs {
		recs[i] = job.Record{ID: fmt.Sprintf("r%04d", i), Status: job.RecordSucceeded, Output: fmt.Sprintf("answer %d", i),
			InputTokens: int64(10 + i), OutputTokens: int64(20 + i), StopReason: "end_turn", ExpiresAt: exp}
		if i%5 == 0 {
			recs[i] = job.Record{ID: recs[i].ID, Status: job.RecordFailed, ErrorCode: "429", ErrorMessage: "throttled", ExpiresAt: exp}
		}
	}
	// Ordinals by rank of a scrambling of the index (7919 is invertible
	// modulo the prime 10007, so no two indexes tie).
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(a, b int) int { return (a*7919+13)%10007 - (b*7919+13)%10007 })
	for rank, i := range perm {
		recs[i].Ordinal = rank
	}
	return recs
}

// inputOrder is the ids of recs by ordinal (then id): ByOrdinal listing order.
func inputOrder(recs []job.Record) []string {
	s := slices.Clone(recs)
	slices.SortStableFunc(s, func(a, b job.Record) int {
		if a.Ordinal != b.Ordinal {
			return a.Ordinal - b.Ordinal
		}
		return strings.Compare(a.ID, b.ID)
	})
	return recordIDs(s)
}

// ords is the record set of a job keyed by ordinal over shards, in the
// layout the case runs under.
func (e *env) ords(jobID string, shards int) job.RecordSet {
	return job.RecordSet{JobID: jobID, Shards: shards, ByOrdinal: true, Packed: e.packed}
}

// allRecords pages through ListRecords; it fails on a record seen twice.
func (e *env) allRecords(t *testing.T, rs job.RecordSet, q store.RecordQuery) []job.Record {
	t.Helper()
	var out []job.Record
	seen := map[string]bool{}
	for pages := 1; ; pages++ {
		recs, next, err := e.s.ListRecords(e.ctx, rs, q)
		if err != nil {
			t.Fatalf("ListRecords page %d: %v", pages, err)
		}
		if q.Limit > 0 && len(recs) > q.Limit {
			t.Fatalf("page of %d records, limit %d", len(recs), q.Limit)
		}
		for _, r := range recs {
			if seen[r.ID] {
				t.Fatalf("record %s listed twice", r.ID)
			}
			seen[r.ID] = true
		}
		out = append(out, recs...)
		if next == "" {
			return out
		}
		if pages > 1000 {
			t.Fatal("ListRecords does not end")
		}
		q.Cursor = next
	}
}

func testPutRecordsIdempotent(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusIngesting, e.clock.Now()))
	j.Shards = 4
	recs := e.records(60)
	for round := range 2 {
		if err := e.s.PutRecords(e.ctx, j.RecordSet(), recs); err != nil {
			e.t.Fatalf("PutRecords round %d: %v", round, err)
		}
	}
	// A replay in a different order, with an id twice in one call (last wins).
	replay := slices.Clone(recs[:30])
	slices.Reverse(replay)
	changed := recs[3]
	changed.Output = "rewritten"
	replay = append(replay, changed)
	if err := e.s.PutRecords(e.ctx, j.RecordSet(), replay); err != nil {
		e.t.Fatalf("PutRecords replay: %v", err)
	}
	if err := e.s.PutRecords(e.ctx, j.RecordSet(), nil); err != nil {
		e.t.Fatalf("PutRecords(nil): %v", err)
	}
	got := e.allRecords(e.t, j.RecordSet(), store.RecordQuery{Limit: 500})
	if len(got) != len(recs) {
		e.t.Fatalf("%d records after replays, want %d", len(got), len(recs))
	}
	for _, r := range got {
		if r.ID == changed.ID && r.Output != "rewritten" {
			e.t.Fatalf("record %s output %q, want the last write", r.ID, r.Output)
		}
	}
}

func testListRecordsPaging(e *env) {
	const n, shards = 53, 5
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now()))
	j.Shards = shards
	recs := e.records(n)
	if err := e.s.PutRecords(e.ctx, j.RecordSet(), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	want := inputOrder(recs)
	if slices.IsSorted(want) {
		e.t.Fatal("test data in id order: it cannot tell input order from id order")
	}
	for _, limit := range []int{1, 4, 5, 7, 10, 52, 53, 54, 500} {
		e.t.Run(fmt.Sprintf("limit%d", limit), func(t *testing.T) {
			got := e.allRecords(t, j.RecordSet(), store.RecordQuery{Limit: limit})
			if !slices.Equal(recordIDs(got), want) {
				t.Fatalf("records in input order:\n got %v\nwant %v", recordIDs(got), want)
			}
			for i, r := range got {
				if r.Ordinal != i {
					t.Fatalf("record %s carries ordinal %d, want %d", r.ID, r.Ordinal, i)
				}
			}
		})
	}
	// Another job's records never mix in.
	other := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now()))
	other.Shards = shards
	if got := e.allRecords(e.t, other.RecordSet(), store.RecordQuery{Limit: 10}); len(got) != 0 {
		e.t.Fatalf("job without records lists %d", len(got))
	}
}

// testListRecordsSparse: the most shards a job has, with a status filter that
// leaves most shards empty and the others holding one match far apart: the
// matches still come in input order, one small page after another.
func testListRecordsSparse(e *env) {
	const n = 120
	j := e.newJob("alice", job.ProviderBedrock, job.StatusPartiallyCompleted, e.clock.Now())
	j.Shards = job.ShardsFor(1 << 30) // the cap
	e.create(j)
	var recs []job.Record
	var all, failed []string
	for i := range n {
		r := job.Record{ID: fmt.Sprintf("%d", n-i), Ordinal: i, Status: job.RecordSucceeded, Output: "ok"}
		if i == 0 || i == 77 || i == n-1 {
			r.Status, r.Output, r.ErrorCode = job.RecordFailed, "", "429"
			failed = append(failed, r.ID)
		}
		all = append(all, r.ID)
		recs = append(recs, r)
	}
	if err := e.s.PutRecords(e.ctx, j.RecordSet(), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	for _, limit := range []int{1, 2} {
		if got := recordIDs(e.allRecords(e.t, j.RecordSet(), store.RecordQuery{Status: job.RecordFailed, Limit: limit})); !slices.Equal(got, failed) {
			e.t.Fatalf("failed records, limit %d: %v, want %v", limit, got, failed)
		}
	}
	if got := recordIDs(e.allRecords(e.t, j.RecordSet(), store.RecordQuery{Limit: 13})); !slices.Equal(got, all) {
		e.t.Fatalf("all records:\n got %v\nwant %v", got, all)
	}
}

// testRecordsByID: a job stored before ordinals (InputOrder false) keeps
// its records keyed by id: listed by id (byte order) across its shards and
// read back by id, whatever ordinal a record carries; a cursor of one
// keying is refused by the other.
func testRecordsByID(e *env) {
	const shards = 4
	old := e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now())
	old.Shards, old.InputOrder = shards, false
	e.create(old)
	got, err := e.s.GetJob(e.ctx, old.ID)
	if err != nil || got.InputOrder {
		e.t.Fatalf("GetJob of a job keyed by id: %v, InputOrder %v", err, got.InputOrder)
	}
	recs := e.records(37)
	recs = append(recs, job.Record{ID: "Zed", Status: job.RecordSucceeded, Ordinal: 3}, job.Record{ID: "\u00e9t\u00e9", Status: job.RecordFailed})
	if err := e.s.PutRecords(e.ctx, old.RecordSet(), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	want := recordIDs(recs)
	slices.Sort(want)
	for _, limit := range []int{1, 3, 38, 39, 100} {
		e.t.Run(fmt.Sprintf("limit%d", limit), func(t *testing.T) {
			if got := e.allRecords(t, old.RecordSet(), store.RecordQuery{Limit: limit}); !slices.Equal(recordIDs(got), want) {
				t.Fatalf("records by id:\n got %v\nwant %v", recordIDs(got), want)
			}
		})
	}
	byID, err := e.s.GetRecords(e.ctx, old.RecordSet(), []job.RecordKey{{ID: "r0003", Ordinal: 999}, {ID: "Zed"}})
	if g := recordIDs(byID); err != nil || len(g) != 2 {
		e.t.Fatalf("GetRecords by id: %v, %v", g, err)
	}
	_, oldCursor, err := e.s.ListRecords(e.ctx, old.RecordSet(), store.RecordQuery{Limit: 2})
	if err != nil || oldCursor == "" {
		e.t.Fatalf("ListRecords: %v, next %q", err, oldCursor)
	}
	// The same job id read as keyed by ordinal: a cursor of the other keying is refused.
	if _, _, err := e.s.ListRecords(e.ctx, e.ords(old.ID, shards), store.RecordQuery{Cursor: oldCursor}); !errors.Is(err, store.ErrBadCursor) {
		e.t.Fatalf("by-id cursor on an ordinal listing: %v, want ErrBadCursor", err)
	}
}

// testRecordCursorBounded: a cursor is one record's position, whatever the
// shard count, and no bigger than its key.
func testRecordCursorBounded(e *env) {
	long := strings.Repeat("x", job.MaxRecordIDLen)
	var size []int
	for _, shards := range []int{1, 32} {
		j := e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now())
		j.Shards = shards
		e.create(j)
		recs := []job.Record{{ID: long + "1", Ordinal: 0, Status: job.RecordSucceeded}, {ID: long + "2", Ordinal: 1, Status: job.RecordSucceeded}}
		if err := e.s.PutRecords(e.ctx, j.RecordSet(), recs); err != nil {
			e.t.Fatalf("PutRecords: %v", err)
		}
		_, next, err := e.s.ListRecords(e.ctx, j.RecordSet(), store.RecordQuery{Limit: 1})
		if err != nil || next == "" {
			e.t.Fatalf("ListRecords: %v, next %q", err, next)
		}
		size = append(size, len(next))
		e.clock.Advance(time.Second) // the next job id differs
	}
	if size[0] != size[1] || size[0] > 2*job.MaxRecordIDLen {
		e.t.Fatalf("cursor of %d bytes with 1 shard, %d with 32: want equal and under %d", size[0], size[1], 2*job.MaxRecordIDLen)
	}
}

func testListRecordsDefaultLimit(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now()))
	recs := e.records(job.DefaultPageSize + 20)
	if err := e.s.PutRecords(e.ctx, e.ords(j.ID, 2), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	got, next, err := e.s.ListRecords(e.ctx, e.ords(j.ID, 2), store.RecordQuery{})
	if err != nil {
		e.t.Fatalf("ListRecords: %v", err)
	}
	if len(got) != job.DefaultPageSize || next == "" {
		e.t.Fatalf("default page: %d records, next %q; want %d and a cursor", len(got), next, job.DefaultPageSize)
	}
	rest, next, err := e.s.ListRecords(e.ctx, e.ords(j.ID, 2), store.RecordQuery{Cursor: next, Limit: job.MaxPageSize + 1})
	if err != nil || len(rest) != 20 || next != "" {
		e.t.Fatalf("second page: %v, %d records, next %q; want 20 and no cursor", err, len(rest), next)
	}
}

func testListRecordsStatusFilter(e *env) {
	const shards = 3
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusPartiallyCompleted, e.clock.Now()))
	recs := e.records(47)
	if err := e.s.PutRecords(e.ctx, e.ords(j.ID, shards), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	for _, st := range []job.RecordStatus{job.RecordFailed, job.RecordSucceeded} {
		e.t.Run(string(st), func(t *testing.T) {
			var want []string
			for _, id := range inputOrder(recs) {
				if i := slices.IndexFunc(recs, func(r job.Record) bool { return r.ID == id }); recs[i].Status == st {
					want = append(want, id)
				}
			}
			got := e.allRecords(t, e.ords(j.ID, shards), store.RecordQuery{Status: st, Limit: 4})
			if !slices.Equal(recordIDs(got), want) {
				t.Fatalf("%s records in input order:\n got %v\nwant %v", st, recordIDs(got), want)
			}
			for _, r := range got {
				if r.Status != st {
					t.Fatalf("record %s has status %s", r.ID, r.Status)
				}
			}
		})
	}
}

func testRecordRoundTrip(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now()))
	exp := e.clock.Now().Add(24 * time.Hour).Truncate(time.Second)
	recs := []job.Record{
		{JobID: "ignored", ID: "ok-1", Status: job.RecordSucceeded, Output: "héllo ✓", StopReason: "end_turn", InputTokens: 5, OutputTokens: 7, ExpiresAt: exp},
		{ID: "big_ref", Status: job.RecordSucceeded, OutputRef: "s3://bucket/out/big.json", ExpiresAt: exp},
		{ID: "err", Status: job.RecordFailed, ErrorCode: "ValidationException", ErrorMessage: "bad input", ExpiresAt: exp},
		{ID: "forever", Status: job.RecordSucceeded, Output: "{}"},
		{ID: "typed", Status: job.RecordSucceeded, Output: "oops {", ContentType: "application/json", Note: "not valid JSON", ExpiresAt: exp},
	}
	if err := e.s.PutRecords(e.ctx, e.ords(j.ID, 1), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	got := e.allRecords(e.t, e.ords(j.ID, 1), store.RecordQuery{Limit: 10})
	byID := map[string]job.Record{}
	for _, r := range got {
		byID[r.ID] = r
	}
	for _, w := range recs {
		w.JobID = j.ID
		g, ok := byID[w.ID]
		if !ok {
			e.t.Fatalf("record %s missing", w.ID)
		}
		if !reflect.DeepEqual(normRecord(w), normRecord(g)) {
			e.t.Fatalf("record mismatch\nwant %+v\n got %+v", normRecord(w), normRecord(g))
		}
	}
}

func testLargeOutput(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now()))
	random := make([]byte, 225*1024)
	_, _ = rand.Read(random)
	outputs := map[string]string{
		"compressible":   strings.Repeat("The quick brown fox jumps over the lazy dog. ", 300*1024/45),
		"incompressible": base64.StdEncoding.EncodeToString(random), // 300 KB
		"just-over-1kb":  strings.Repeat("ab", 513),
		"max":            strings.Repeat("z", job.MaxInlineOutputBytes),
	}
	var recs []job.Record
	for id, out := range outputs {
		recs = append(recs, job.Record{ID: id, Status: job.RecordSucceeded, Output: out, ExpiresAt: e.clock.Now().Add(time.Hour)})
	}
	if err := e.s.PutRecords(e.ctx, e.ords(j.ID, 2), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	got := e.allRecords(e.t, e.ords(j.ID, 2), store.RecordQuery{Limit: 1})
	if len(got) != len(outputs) {
		e.t.Fatalf("%d records, want %d", len(got), len(outputs))
	}
	for _, r := range got {
		if r.Output != outputs[r.ID] {
			e.t.Fatalf("record %s: output of %d bytes came back as %d bytes (or changed)", r.ID, len(outputs[r.ID]), len(r.Output))
		}
	}
}

func testOutputTooLarge(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now()))
	recs := []job.Record{
		{ID: "fine", Status: job.RecordSucceeded, Output: "ok"},
		{ID: "huge", Status: job.RecordSucceeded, Output: strings.Repeat("z", job.MaxInlineOutputBytes+1)},
	}
	if err := e.s.PutRecords(e.ctx, e.ords(j.ID, 1), recs); !errors.Is(err, store.ErrTooLarge) {
		e.t.Fatalf("PutRecords: %v, want ErrTooLarge", err)
	}
	// Rejected before writing anything.
	if got := e.allRecords(e.t, e.ords(j.ID, 1), store.RecordQuery{Limit: 10}); len(got) != 0 {
		e.t.Fatalf("%d records written by a rejected call", len(got))
	}
}

func testBadCursor(e *env) {
	j := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now()))
	other := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now().Add(time.Second)))
	e.create(e.newJob("alice", job.ProviderBedrock, job.StatusCompleted, e.clock.Now().Add(2*time.Second)))
	for _, id := range []string{j.ID, other.ID} {
		if err := e.s.PutRecords(e.ctx, e.ords(id, 3), e.records(10)); err != nil {
			e.t.Fatalf("PutRecords: %v", err)
		}
	}
	_, otherJobCursor, err := e.s.ListRecords(e.ctx, e.ords(other.ID, 3), store.RecordQuery{Limit: 2})
	if err != nil || otherJobCursor == "" {
		e.t.Fatalf("ListRecords: %v, next %q", err, otherJobCursor)
	}
	_, recCursor, err := e.s.ListRecords(e.ctx, e.ords(j.ID, 3), store.RecordQuery{Limit: 2})
	if err != nil || recCursor == "" {
		e.t.Fatalf("ListRecords: %v, next %q", err, recCursor)
	}
	_, jobCursor, err := e.s.ListJobs(e.ctx, "alice", store.JobQuery{Limit: 1})
	if err != nil || jobCursor == "" {
		e.t.Fatalf("ListJobs: %v, next %q", err, jobCursor)
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	junk := []struct{ name, cursor string }{
		{"not-base64", "!!!not a cursor!!!"},
		{"not-json", b64("hello")},
		{"json-array", b64("[1,2,3]")},
		{"wrong-fields", b64(`{"x":1}`)},
		{"empty-object", b64(`{}`)},
		{"truncated", recCursor[:len(recCursor)/2]},
	}
	for _, tc := range junk {
		e.t.Run("records/"+tc.name, func(t *testing.T) {
			if _, _, err := e.s.ListRecords(e.ctx, e.ords(j.ID, 3), store.RecordQuery{Cursor: tc.cursor}); !errors.Is(err, store.ErrBadCursor) {
				t.Fatalf("ListRecords: %v, want ErrBadCursor", err)
			}
		})
		e.t.Run("jobs/"+tc.name, func(t *testing.T) {
			if _, _, err := e.s.ListJobs(e.ctx, "alice", store.JobQuery{Cursor: tc.cursor}); !errors.Is(err, store.ErrBadCursor) {
				t.Fatalf("ListJobs: %v, want ErrBadCursor", err)
			}
		})
	}
	crossed := []struct {
		name string
		call func() error
	}{
		{"records/other-job", func() error {
			_, _, err := e.s.ListRecords(e.ctx, e.ords(j.ID, 3), store.RecordQuery{Cursor: otherJobCursor})
			return err
		}},
		{"records/job-cursor", func() error {
			_, _, err := e.s.ListRecords(e.ctx, e.ords(j.ID, 3), store.RecordQuery{Cursor: jobCursor})
			return err
		}},
		{"jobs/record-cursor", func() error {
			_, _, err := e.s.ListJobs(e.ctx, "alice", store.JobQuery{Cursor: recCursor})
			return err
		}},
	}
	for _, tc := range crossed {
		e.t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, store.ErrBadCursor) {
				t.Fatalf("got %v, want ErrBadCursor", err)
			}
		})
	}
	// The genuine cursors still work.
	if _, _, err := e.s.ListRecords(e.ctx, e.ords(j.ID, 3), store.RecordQuery{Cursor: recCursor, Limit: 2}); err != nil {
		e.t.Fatalf("ListRecords with its own cursor: %v", err)
	}
}

// testGetRecords: records by key across shards; absent, expired and another
// job's ids are left out, and so is an id asked at an ordinal it does not
// have (see testRecordsByID for sets keyed by id alone); a duplicate key is
// answered once.
func testGetRecords(e *env) {
	j := e.create(func() *job.Job {
		j := e.newJob("alice", job.ProviderBedrock, job.StatusIngesting, e.clock.Now())
		j.Shards = 4
		return j
	}())
	other := e.create(e.newJob("alice", job.ProviderBedrock, job.StatusIngesting, e.clock.Now().Add(time.Second)))
	var recs []job.Record
	for i := range 30 {
		r := job.Record{ID: fmt.Sprintf("r%03d", i), Ordinal: i, Status: job.RecordSucceeded, Output: fmt.Sprint("out ", i)}
		if i == 7 {
			r.ExpiresAt = e.clock.Now().Add(time.Hour)
		}
		recs = append(recs, r)
	}
	if err := e.s.PutRecords(e.ctx, j.RecordSet(), recs); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	if err := e.s.PutRecords(e.ctx, other.RecordSet(), []job.Record{{ID: "x1", Status: job.RecordFailed}}); err != nil {
		e.t.Fatalf("PutRecords: %v", err)
	}
	e.clock.Advance(2 * time.Hour)
	got, err := e.s.GetRecords(e.ctx, j.RecordSet(), []job.RecordKey{{ID: "r003", Ordinal: 3}, {ID: "r007", Ordinal: 7}, {ID: "r029", Ordinal: 29}, {ID: "nope", Ordinal: 5}, {ID: "x1", Ordinal: 0}, {ID: "r003", Ordinal: 3}, {ID: "r012", Ordinal: 12},
		// A ByOrdinal record is named by (ordinal, id): its id at another
		// ordinal, in its own shard (4 → 0) or another one, names nothing.
		{ID: "r004", Ordinal: 8}, {ID: "r005", Ordinal: 6}})
	if err != nil {
		e.t.Fatalf("GetRecords: %v", err)
	}
	g := recordIDs(got)
	slices.Sort(g)
	if !slices.Equal(g, []string{"r003", "r012", "r029"}) {
		e.t.Fatalf("GetRecords gave %v, want [r003 r012 r029]", g)
	}
	for _, r := range got {
		if r.Output != "out "+strings.TrimLeft(r.ID[1:], "0") {
			e.t.Fatalf("record %s carries %q", r.ID, r.Output)
		}
	}
	if got, err := e.s.GetRecords(e.ctx, j.RecordSet(), nil); err != nil || len(got) != 0 {
		e.t.Fatalf("GetRecords of no ids: %v, %v", got, err)
	}
}
