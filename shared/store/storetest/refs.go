package storetest

import (
	"errors"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// testRefOwner: every part Ref a job stores names its job and part, the first
// holder keeps it, and the entry outlives the job's own expiry until RefTTL.
func testRefOwner(e *env) {
	if _, _, err := e.s.RefOwner(e.ctx, job.ProviderAnthropic, "msgbatch_none"); !errors.Is(err, store.ErrNotFound) {
		e.t.Fatalf("RefOwner of an unknown ref: %v, want ErrNotFound", err)
	}
	a := e.newJob("alice", job.ProviderAnthropic, job.StatusSubmitted, e.clock.Now())
	a.Parts = []job.Part{{Index: 0, Name: "a0", Status: job.StatusSubmitted, Ref: "msgbatch_a0"}, {Index: 1, Name: "a1", Status: job.StatusQueued}}
	e.create(a)
	b := e.create(e.newJob("bob", job.ProviderAnthropic, job.StatusQueued, e.clock.Now()))
	if _, err := e.s.UpdateJob(e.ctx, a.ID, func(x *job.Job) error { x.Parts[1].Ref = "msgbatch_a1"; return nil }); err != nil {
		e.t.Fatalf("UpdateJob: %v", err)
	}
	// b claims a's Ref by mistake: the first holder stays the owner.
	if _, err := e.s.UpdateJob(e.ctx, b.ID, func(x *job.Job) error {
		x.Parts = []job.Part{{Index: 0, Name: "b0", Status: job.StatusSubmitted, Ref: "msgbatch_a1"}}
		return nil
	}); err != nil {
		e.t.Fatalf("UpdateJob: %v", err)
	}
	for _, tc := range []struct {
		provider, ref, job string
		part               int
	}{
		{job.ProviderAnthropic, "msgbatch_a0", a.ID, 0},
		{job.ProviderAnthropic, "msgbatch_a1", a.ID, 1},
	} {
		id, part, err := e.s.RefOwner(e.ctx, tc.provider, tc.ref)
		if err != nil || id != tc.job || part != tc.part {
			e.t.Errorf("RefOwner(%s) = %s, %d, %v; want %s, %d", tc.ref, id, part, err, tc.job, tc.part)
		}
	}
	if _, _, err := e.s.RefOwner(e.ctx, job.ProviderBedrock, "msgbatch_a0"); !errors.Is(err, store.ErrNotFound) {
		e.t.Errorf("RefOwner under another provider: %v, want ErrNotFound", err)
	}
	e.clock.Advance(store.RefTTL + time.Hour)
	if _, _, err := e.s.RefOwner(e.ctx, job.ProviderAnthropic, "msgbatch_a0"); !errors.Is(err, store.ErrNotFound) {
		e.t.Errorf("RefOwner after RefTTL: %v, want ErrNotFound", err)
	}
}

// testSlots: a slot has one holder; only a swap from the holder seen moves it.
func testSlots(e *env) {
	const key = "create#anthropic#19"
	steps := []struct {
		old, next string
		ok        bool
		holder    string
	}{
		{"", "a", true, "a"},
		{"", "b", false, "a"},
		{"x", "b", false, "a"},
		{"a", "b", true, "b"},
		{"b", "", true, ""},
		{"", "c", true, "c"},
	}
	for i, st := range steps {
		ok, err := e.s.SwapSlot(e.ctx, key, st.old, st.next)
		if err != nil || ok != st.ok {
			e.t.Fatalf("step %d: SwapSlot(%q -> %q) = %v, %v; want %v", i, st.old, st.next, ok, err, st.ok)
		}
		if h, err := e.s.Slot(e.ctx, key); err != nil || h != st.holder {
			e.t.Fatalf("step %d: Slot = %q, %v; want %q", i, h, err, st.holder)
		}
	}
	if h, err := e.s.Slot(e.ctx, "other"); err != nil || h != "" {
		e.t.Fatalf("Slot of an unknown key = %q, %v; want free", h, err)
	}
}
