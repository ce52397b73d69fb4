package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// aliceJobs is a Service holding alice's one job.
type aliceJobs struct{ j *job.Job }

func (a aliceJobs) Submit(context.Context, batch.SubmitRequest) (*job.Job, error) {
	return nil, errors.New("unused")
}
func (a aliceJobs) Get(_ context.Context, owner, id string) (*job.Job, error) {
	if owner != a.j.Owner || id != a.j.ID {
		return nil, service.ErrJobNotFound
	}
	return a.j, nil
}
func (a aliceJobs) ResultsPage(context.Context, string, service.ResultsQuery) (service.ResultsPage, error) {
	return service.ResultsPage{}, errors.New("unused")
}
func (a aliceJobs) Cancel(context.Context, string, string) (*job.Job, error) {
	return nil, errors.New("unused")
}
func (a aliceJobs) List(_ context.Context, owner string, _ service.ListQuery) ([]*job.Job, string, error) {
	if owner != a.j.Owner {
		return nil, "", nil
	}
	return []*job.Job{a.j}, "", nil
}

// TestCacheScopeAndCapabilities holds what the conformance suite's
// 2026-07-28 caching and server-stateless scenarios check: every cacheable
// result names a valid cacheScope, "private" where the answer is the
// caller's own jobs (before: resources/list sent cacheScope "", which the
// spec's schema refuses), and the prompts/list the SDK answers is declared
// in server/discover (before: answered but not declared).
func TestCacheScopeAndCapabilities(t *testing.T) {
	j := &job.Job{ID: "j1", Owner: "alice", Status: job.StatusInProgress, Model: "m", RecordCount: 3, CreatedAt: time.Now()}
	srv := &mcpserver.Server{Queries: aliceJobs{j}}
	hs := httptest.NewServer(srv.Handler(func(*http.Request) (string, error) { return "alice", nil }))
	defer hs.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q: these checks are of the 2026-07-28 wire", v)
	}

	for _, tc := range []struct {
		method string
		call   func() (mcp.Cacheable, error)
		want   string
	}{
		{"tools/list", func() (mcp.Cacheable, error) {
			r, err := cs.ListTools(ctx, nil)
			return cacheOf(r, err, func() mcp.Cacheable { return r.Cacheable })
		}, "public"},
		{"resources/templates/list", func() (mcp.Cacheable, error) {
			r, err := cs.ListResourceTemplates(ctx, nil)
			return cacheOf(r, err, func() mcp.Cacheable { return r.Cacheable })
		}, "public"},
		{"resources/list", func() (mcp.Cacheable, error) {
			r, err := cs.ListResources(ctx, nil)
			return cacheOf(r, err, func() mcp.Cacheable { return r.Cacheable })
		}, "private"},
		{"resources/read of a job", func() (mcp.Cacheable, error) {
			r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcpbatch://jobs/j1"})
			return cacheOf(r, err, func() mcp.Cacheable { return r.Cacheable })
		}, "private"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			c, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			if c.CacheScope != tc.want {
				t.Errorf("cacheScope %q, want %q", c.CacheScope, tc.want)
			}
		})
	}

	t.Run("prompts answered and declared", func(t *testing.T) {
		if _, err := cs.ListPrompts(ctx, nil); err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		if cs.InitializeResult().Capabilities.Prompts == nil {
			t.Error("prompts/list is answered but server/discover declares no prompts capability")
		}
	})
}

// cacheOf reads a result's cache fields once the call succeeded.
func cacheOf[R any](r *R, err error, get func() mcp.Cacheable) (mcp.Cacheable, error) {
	if err != nil || r == nil {
		return mcp.Cacheable{}, err
	}
	return get(), nil
}
