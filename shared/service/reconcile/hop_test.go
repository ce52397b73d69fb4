package reconcile_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/remote"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// brokenHop carries calls into the providers function (remote.Server) in
// process, except the first create: that one goes on in the background,
// once released, while its caller is told the connection broke, as when
// mcp's invoke is cut and Lambda runs the function on.
type brokenHop struct {
	srv     *remote.Server
	once    sync.Once
	release chan struct{}
	done    chan struct{}
}

func (b *brokenHop) Call(ctx context.Context, req remote.Request, resp *remote.Response) error {
	broken := false
	if req.Op == remote.OpSubmit {
		b.once.Do(func() { broken = true })
	}
	if !broken {
		return b.srv.Call(ctx, req, resp)
	}
	go func() {
		defer close(b.done)
		<-b.release
		var r remote.Response
		_ = b.srv.Call(context.Background(), req, &r)
	}()
	return &remote.InvokeError{Function: "mcpbatch-providers", Ran: true, Message: "read tcp: connection reset by peer"}
}

// A create whose hop broke while the providers function went on making the
// batch: the part keeps its lease (not failed, not queued for another
// create), and once the lease runs out the reconciler finds the batch made
// late; one batch, and the job completes.
func TestCreateAcrossABrokenHopMakesOneBatch(t *testing.T) {
	hop := &brokenHop{release: make(chan struct{}), done: make(chan struct{})}
	h := newFaultyHarness(t, faults{provider: func(p service.BatchProvider) service.BatchProvider {
		// The calls go through the hop, as mcp makes them; results are
		// fetched in process, as ingest does (the hop does not carry fetches).
		ap := p.(*anthropicbatch.Fetching)
		hop.srv = &remote.Server{Anthropic: ap.Calls}
		return &anthropicbatch.Fetching{Provider: &anthropicbatch.Provider{Calls: remote.AnthropicCalls{Caller: hop}, ModelIDs: ap.ModelIDs}, Fetch: ap.Fetch}
	}})
	j := h.submit(5, 1)
	got, err := h.job(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Parts[0]; p.Status != job.StatusQueued || p.Ref != "" || p.SubmitLease == "" {
		t.Fatalf("after the broken create: part %s ref %q lease %q (%s), want queued and leased", p.Status, p.Ref, p.SubmitLease, p.Message)
	}
	close(hop.release)
	<-hop.done
	if n := len(h.sim.Statuses()); n != 1 {
		t.Fatalf("%d batches after the late create, want 1", n)
	}
	if err := h.reconcile(); err != nil {
		t.Logf("reconcile within the lease: %v", err)
	}
	h.clock.Add(batch.SubmitLease + 1)
	if err := h.reconcile(); err != nil {
		t.Fatalf("reconcile after the lease: %v", err)
	}
	h.sim.Step()
	h.clock.Add(batch.SubmitLease)
	if err := h.reconcile(); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	got, err = h.job(j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.sim.Statuses()); n != 1 || got.Status != job.StatusCompleted || got.Succeeded != 5 {
		t.Fatalf("%d batches, job %s with %d succeeded; want 1 batch and completed with 5", n, got.Status, got.Succeeded)
	}
}
