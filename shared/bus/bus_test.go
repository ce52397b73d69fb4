package bus

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// shutdownBound is how long make dev gives in-flight handlers after Ctrl-C.
const shutdownBound = 5 * time.Second

// A handler blocked on its context (an on-demand run backing off) must return
// once the bus shuts down, and a delivery cut short is not retried.
func TestLocalShutdownCancelsInFlightHandlers(t *testing.T) {
	started := make(chan struct{}, 4)
	var calls, cancelled atomic.Int32
	b := &Local{Source: "test", Deliver: func(ctx context.Context, ev []byte) error {
		calls.Add(1)
		started <- struct{}{}
		<-ctx.Done()
		cancelled.Add(1)
		return ctx.Err()
	}}
	for range 2 {
		if err := b.Publish(context.Background(), "Test", map[string]string{"k": "v"}); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), shutdownBound)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v: handlers still running after %s", err, shutdownBound)
	}
	if got := cancelled.Load(); got != 2 {
		t.Fatalf("%d handlers saw their context cancelled, want 2", got)
	}
	b.Wait() // returns at once: nothing is left
	if got := calls.Load(); got != 2 {
		t.Errorf("%d deliveries, want 2 (no retry of a delivery cut short by shutdown)", got)
	}
}

// After shutdown nothing new is delivered: the event is dropped (logged), and
// the work it asked for resumes from its checkpoint at the next start.
func TestLocalSendAfterShutdownIsDropped(t *testing.T) {
	var calls atomic.Int32
	b := &Local{Source: "test", Deliver: func(ctx context.Context, ev []byte) error { calls.Add(1); return nil }}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(context.Background(), "Test", struct{}{}); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	if got := calls.Load(); got != 0 {
		t.Errorf("%d deliveries after shutdown, want 0", got)
	}
}

// A handler that ignores its context cannot hold shutdown past the caller's
// deadline, and Wait (called by Close) does not wait for it either.
func TestLocalShutdownGivesUpOnStuckHandler(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	b := &Local{Source: "test", Deliver: func(ctx context.Context, ev []byte) error {
		close(started)
		<-release
		return nil
	}}
	defer close(release)
	if err := b.Publish(context.Background(), "Test", struct{}{}); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
	}
	done := make(chan struct{})
	go func() { b.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(shutdownBound):
		t.Fatal("Wait blocked on a handler Shutdown gave up on")
	}
}

// Before shutdown a failing delivery is retried, as EventBridge's Lambda target would.
func TestLocalRetriesFailedDelivery(t *testing.T) {
	var calls atomic.Int32
	b := &Local{Source: "test", Deliver: func(ctx context.Context, ev []byte) error {
		if calls.Add(1) < 2 {
			return errors.New("boom")
		}
		return nil
	}}
	if err := b.Publish(context.Background(), "Test", struct{}{}); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	if got := calls.Load(); got != 2 {
		t.Errorf("%d deliveries, want 2", got)
	}
}
