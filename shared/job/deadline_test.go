package job

import (
	"testing"
	"time"
)

// The timing decision: how long the unfinished records take on demand at the
// account's rate, and when the batch parts must be stopped for them.
func TestDeadlineTiming(t *testing.T) {
	deadline := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		records   int
		tokens    int64 // per record: input + max_tokens
		rate      Rate
		wantNeed  time.Duration
		wantStop  time.Time
		stopNowAt time.Time // a time at which the parts must be stopped (not before stop)
	}{
		{"requests decide", 600, 100, Rate{RequestsPerMinute: 200, TokensPerMinute: 1_000_000}, 3 * time.Minute,
			deadline.Add(-3*time.Minute - 5*time.Minute - 45*time.Second), deadline.Add(-8 * time.Minute)},
		{"tokens decide", 600, 2000, Rate{RequestsPerMinute: 200, TokensPerMinute: 400_000}, 3 * time.Minute,
			deadline.Add(-3*time.Minute - 5*time.Minute - 45*time.Second), deadline.Add(-8 * time.Minute)},
		{"max_tokens weighs (tokens 4x)", 600, 8000, Rate{RequestsPerMinute: 200, TokensPerMinute: 400_000}, 12 * time.Minute,
			deadline.Add(-12*time.Minute - 5*time.Minute - 3*time.Minute), deadline.Add(-20 * time.Minute)},
		{"only a request quota known", 100, 5000, Rate{RequestsPerMinute: 50}, 2 * time.Minute,
			deadline.Add(-2*time.Minute - 5*time.Minute - 30*time.Second), deadline.Add(-7 * time.Minute)},
		{"no records left", 0, 1000, Rate{RequestsPerMinute: 50, TokensPerMinute: 1000}, 0,
			deadline.Add(-5 * time.Minute), deadline.Add(-5 * time.Minute)},
		{"a day of records, requests decide", 50_000, 1500, Rate{RequestsPerMinute: 50, TokensPerMinute: 100_000}, 1000 * time.Minute,
			deadline.Add(-1000*time.Minute - 5*time.Minute - 250*time.Minute), deadline.Add(-20 * time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			need := OnDemandTime(c.records, c.tokens, c.rate)
			if need != c.wantNeed {
				t.Fatalf("OnDemandTime(%d, %d, %+v) = %v, want %v", c.records, c.tokens, c.rate, need, c.wantNeed)
			}
			stop := StopBatchBy(deadline, need)
			if !stop.Equal(c.wantStop) {
				t.Fatalf("StopBatchBy = %v, want %v (margin %v)", stop, c.wantStop, DeadlineMargin(need))
			}
			if c.stopNowAt.Before(stop) {
				t.Fatalf("at %v the parts are not due to stop yet (stop by %v)", c.stopNowAt, stop)
			}
			if !stop.Add(-time.Second).Before(stop) || !stop.Before(deadline) {
				t.Fatalf("stop %v not before the deadline %v", stop, deadline)
			}
		})
	}
}

// More records or a slower rate never stop the parts later.
func TestStopBatchByMonotonic(t *testing.T) {
	deadline := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	rate := Rate{RequestsPerMinute: 100, TokensPerMinute: 200_000}
	prev := deadline
	for n := 0; n <= 20_000; n += 1000 {
		stop := StopBatchBy(deadline, OnDemandTime(n, 1500, rate))
		if stop.After(prev) {
			t.Fatalf("%d records stop at %v, later than fewer records (%v)", n, stop, prev)
		}
		prev = stop
	}
	slow := StopBatchBy(deadline, OnDemandTime(5000, 1500, Rate{RequestsPerMinute: 50, TokensPerMinute: 100_000}))
	if fast := StopBatchBy(deadline, OnDemandTime(5000, 1500, rate)); slow.After(fast) {
		t.Fatalf("a slower rate stops later (%v) than a faster one (%v)", slow, fast)
	}
}

// The counts of a re-driven job add the run's to what the batch parts produced.
func TestSyncOnDemandCounts(t *testing.T) {
	j := &Job{OnDemand: &OnDemand{Succeeded: 60, Failed: 10, InputTokens: 700, OutputTokens: 900}}
	j.SyncOnDemandCounts()
	if j.Succeeded != 60 || j.Failed != 10 || j.InputTokens != 700 {
		t.Fatalf("on-demand job counts %+v", j)
	}
	j.Redrive = &Redrive{Started: true, BatchSucceeded: 75, BatchFailed: 5, BatchInputTokens: 800, BatchOutputTokens: 1000}
	j.SyncOnDemandCounts()
	if j.Succeeded != 135 || j.Failed != 15 || j.InputTokens != 1500 || j.OutputTokens != 1900 {
		t.Fatalf("re-drive counts %+v, want batch + run", j)
	}
}
