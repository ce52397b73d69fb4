package reconcile_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

func batchReq(n, ttlDays int) batch.SubmitRequest {
	return batch.SubmitRequest{Owner: "alice", Model: claude, Records: inputs(n), TTLDays: ttlDays}
}

// Retention counts from the end: a ttl_days=1 job that runs 30 hours is still
// there while it runs, its results are kept a day after it ends, and both go
// then.
func TestRetentionCountsFromTheEnd(t *testing.T) {
	h := newHarness(t, nil)
	h.sim.ErrorEvery = 0
	j := h.submit(5, 1)
	for range 6 {
		h.clock.Add(5 * time.Hour)
		if err := h.reconcile(); err != nil {
			t.Fatalf("reconcile at %s: %v", h.clock.Now(), err)
		}
	}
	if _, err := h.job(j.ID); err != nil {
		t.Fatalf("30 h into a ttl_days=1 job still running: %v, want it readable", err)
	}
	h.sim.Step() // the batch ends 30 h in
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	done, err := h.job(j.ID)
	if err != nil || !done.Status.Terminal() {
		t.Fatalf("job after the batch ended = %+v, %v", done, err)
	}
	ended := done.CompletedAt
	if want := job.ExpiresAt(ended, 1); !done.ExpiresAt.Equal(want) {
		t.Errorf("finished job expires %s, want its end + 1 day = %s", done.ExpiresAt, want)
	}
	h.clock.Add(23 * time.Hour)
	if _, err := h.job(j.ID); err != nil {
		t.Fatalf("23 h after the end: %v", err)
	}
	if n := len(h.records(done)); n != 5 {
		t.Fatalf("23 h after the end: %d records, want 5", n)
	}
	h.clock.Add(2 * time.Hour)
	if _, err := h.job(j.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("25 h after the end: job read %v, want expired", err)
	}
	if n := len(h.records(done)); n != 0 {
		t.Errorf("25 h after the end: %d records still readable, want none", n)
	}
}

// An in-flight job never expires before the longest its provider may run
// plus queueing, however it was submitted.
func TestInFlightHold(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		j    job.Job
		want time.Duration
	}{
		{job.Job{Provider: job.ProviderBedrock, Mode: job.ModeBatch}, time.Duration(job.BedrockMaxTimeoutHrs)*time.Hour + job.HoldMargin},
		{job.Job{Provider: job.ProviderAnthropic, Mode: job.ModeBatch}, 24*time.Hour + job.HoldMargin},
		{job.Job{Provider: job.ProviderBedrock, Mode: job.ModeOnDemand}, job.OnDemandMaxRun + job.HoldMargin},
	} {
		tc.j.TTLDays = 1
		tc.j.ExpiresAt = job.ExpiresAt(now, 1)
		if got := job.InFlightHold(&tc.j); got != tc.want {
			t.Errorf("hold of %s %s = %s, want %s", tc.j.Provider, tc.j.Mode, got, tc.want)
		}
		tc.j.Hold(now)
		if min := now.Add(tc.want); tc.j.ExpiresAt.Before(min) {
			t.Errorf("%s %s expires %s, before now + hold %s", tc.j.Provider, tc.j.Mode, tc.j.ExpiresAt, min)
		}
	}
}

func batchReqMode(model string, n int, mode string) batch.SubmitRequest {
	return batch.SubmitRequest{Owner: "alice", Model: model, Records: inputs(n), Mode: mode}
}
