package ondemand_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockbatch"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/ondemand"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

const model = "anthropic.claude-haiku-4-5-20251001-v1:0"

// recBus records what the service publishes.
type recBus struct {
	mu     sync.Mutex
	events []string
	ids    []string
}

func (b *recBus) Publish(_ context.Context, dt string, detail any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, dt)
	switch d := detail.(type) {
	case ondemand.OnDemandRun:
		b.ids = append(b.ids, d.JobID)
	case service.Completed:
		b.ids = append(b.ids, d.JobID)
	}
	return nil
}

func (b *recBus) count(dt string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.events {
		if e == dt {
			n++
		}
	}
	return n
}

// onDemandSuite is the service with the on-demand runner over the real
// bedrockruntime client talking to the runtime simulator.
func onDemandSuite(t *testing.T, rt *simbedrock.RuntimeSim, od *ondemand.Service) (*graph.Graph, *recBus) {
	return onDemandSuiteB(t, rt, od)
}

func onDemandSuiteB(t testing.TB, rt *simbedrock.RuntimeSim, od *ondemand.Service) (*graph.Graph, *recBus) {
	t.Helper()
	st, blobs := localdeps.New(t)
	url, err := rt.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	client := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(url); o.HTTPClient = sim.HTTPClient() }, bedrockrt.NoSDKRetries)
	if od.Model == nil {
		od.Model = &bedrockrt.Model{Client: client}
	}
	bus := &recBus{}
	svc := graph.New(graph.Deps{Store: st, Blobs: blobs, Bus: bus, Bucket: "s3://test", JobPrefix: "mcpbatch",
		Providers: []service.BatchProvider{&bedrockbatch.Provider{ModelIDs: []string{model}}}, Region: "us-east-1"})
	// od is the on-demand runner the test tunes (and may swap the model of):
	// the graph's runner with the test's settings.
	tuned := *od
	*od = *svc.OnDemandRuns
	od.Model, od.Vectors, od.Chunk, od.Concurrency = tuned.Model, tuned.Vectors, tuned.Chunk, tuned.Concurrency
	od.MaxAttempts, od.BaseBackoff, od.MaxBackoff = tuned.MaxAttempts, tuned.BaseBackoff, tuned.MaxBackoff
	svc.OnDemandRuns, svc.Batch.OnDemand = od, od
	return svc, bus
}

func prompts(n int, f func(i int) string) []job.Input {
	out := make([]job.Input, n)
	for i := range out {
		out[i] = job.Input{ID: fmt.Sprintf("d%03d", i), Prompt: f(i)}
	}
	return out
}

func allRecords(t *testing.T, svc *graph.Graph, j *job.Job) []job.Record {
	t.Helper()
	var all []job.Record
	cursor := ""
	for {
		recs, next, err := svc.Batch.Store.ListRecords(context.Background(), j.RecordSet(), store.RecordQuery{Cursor: cursor, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, recs...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

func TestOnDemandRuns(t *testing.T) {
	tests := []struct {
		name        string
		n           int
		mode        string
		throttle    float64
		concurrency int
		fail        string
		wantStatus  job.Status
		wantFailed  int
	}{
		{name: "30 records auto go on demand", n: 30, mode: "", concurrency: 4, wantStatus: job.StatusCompleted},
		{name: "20% throttled, every record completes", n: 200, mode: job.ModeOnDemand, throttle: 0.2, concurrency: 5, wantStatus: job.StatusCompleted},
		{name: "model error fails only its record", n: 12, mode: job.ModeOnDemand, concurrency: 3, fail: "BOOM", wantStatus: job.StatusPartiallyCompleted, wantFailed: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &simbedrock.RuntimeSim{ThrottleRate: tc.throttle, FailMarker: tc.fail}
			svc, bus := onDemandSuite(t, rt, &ondemand.Service{Concurrency: tc.concurrency, BaseBackoff: 1e6, MaxBackoff: 5e6, Chunk: 7})
			ctx := context.Background()
			recs := prompts(tc.n, func(i int) string {
				if i == 5 && tc.fail != "" {
					return "please BOOM"
				}
				return fmt.Sprintf("document %d about billing", i)
			})
			j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: model, Records: recs, Mode: tc.mode,
				Params: job.Params{System: "Answer in JSON.\ncategories: billing|other"}})
			if err != nil {
				t.Fatal(err)
			}
			if j.Mode != job.ModeOnDemand || j.Status != job.StatusQueued || bus.count(config.DetailOnDemandRun) != 1 {
				t.Fatalf("submit: mode %q status %q run requests %d", j.Mode, j.Status, bus.count(config.DetailOnDemandRun))
			}
			if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			j, _ = svc.Batch.Store.GetJob(ctx, j.ID)
			if j.Status != tc.wantStatus || j.Succeeded != tc.n-tc.wantFailed || j.Failed != tc.wantFailed {
				t.Fatalf("job %s: %d succeeded %d failed; want %s %d/%d (error %q)", j.Status, j.Succeeded, j.Failed, tc.wantStatus, tc.n-tc.wantFailed, tc.wantFailed, j.Error)
			}
			got := allRecords(t, svc, j)
			if len(got) != tc.n {
				t.Fatalf("%d records stored, want %d", len(got), tc.n)
			}
			for _, r := range got {
				if r.Status == job.RecordSucceeded && (r.Output == "" || r.InputTokens == 0) {
					t.Fatalf("record %s succeeded without output or tokens: %+v", r.ID, r)
				}
				if r.Status == job.RecordFailed && r.ErrorCode != "ValidationException" {
					t.Fatalf("record %s failed with %q %q", r.ID, r.ErrorCode, r.ErrorMessage)
				}
			}
			stats := rt.Stats()
			if stats.PeakInFlight > int64(tc.concurrency) {
				t.Fatalf("peak concurrency %d over the limit %d", stats.PeakInFlight, tc.concurrency)
			}
			if tc.throttle > 0 && (stats.Throttled == 0 || j.OnDemand.Throttles != stats.Throttled) {
				t.Fatalf("throttled %d calls, job counted %d retries", stats.Throttled, j.OnDemand.Throttles)
			}
			// The system prompt is cached once, then read by every later call.
			if j.CacheWriteTokens == 0 || j.CacheReadTokens == 0 {
				t.Fatalf("cache tokens not recorded: read %d write %d", j.CacheReadTokens, j.CacheWriteTokens)
			}
			if bus.count(config.DetailJobCompleted) != 1 {
				t.Fatalf("%d Job Completed events, want 1", bus.count(config.DetailJobCompleted))
			}
			// A duplicate run request after the end changes nothing.
			if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			again, _ := svc.Batch.Store.GetJob(ctx, j.ID)
			if again.Succeeded != j.Succeeded || bus.count(config.DetailJobCompleted) != 1 {
				t.Fatalf("duplicate run changed the job: %d succeeded, %d completions", again.Succeeded, bus.count(config.DetailJobCompleted))
			}
		})
	}
}

// cancelAfter cancels a run's context once it has made n calls: an invocation
// that runs out of time in the middle of a chunk.
type cancelAfter struct {
	inner  ondemand.OnDemandModel
	n      int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Invoke(ctx context.Context, m string, in job.Input, p job.Params) (ondemand.OnDemandResult, error) {
	if c.calls.Add(1) == c.n {
		c.cancel()
	}
	return c.inner.Invoke(ctx, m, in, p)
}

func TestOnDemandResumesFromCheckpoint(t *testing.T) {
	rt := &simbedrock.RuntimeSim{}
	od := &ondemand.Service{Concurrency: 2, Chunk: 10}
	svc, _ := onDemandSuite(t, rt, od)
	ctx := context.Background()
	j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: model, Records: prompts(35, func(i int) string { return fmt.Sprint("doc ", i) })})
	if err != nil {
		t.Fatal(err)
	}
	inner := od.Model
	runCtx, cancel := context.WithCancel(ctx)
	od.Model = &cancelAfter{inner: inner, n: 15, cancel: cancel}
	if err := svc.OnDemandRuns.RunOnDemand(runCtx, j.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled", err)
	}
	mid, _ := svc.Batch.Store.GetJob(ctx, j.ID)
	if mid.OnDemand.Line != 10 || mid.Status != job.StatusInProgress || mid.Succeeded != 10 {
		t.Fatalf("checkpoint after interruption: line %d status %s succeeded %d; want 10, in_progress, 10", mid.OnDemand.Line, mid.Status, mid.Succeeded)
	}
	od.Model = inner
	// Two deliveries of the continuation at once: no record is counted twice.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	end, _ := svc.Batch.Store.GetJob(ctx, j.ID)
	if end.Status != job.StatusCompleted || end.Succeeded != 35 || end.Failed != 0 || len(allRecords(t, svc, end)) != 35 {
		t.Fatalf("after resume: %s %d succeeded %d failed", end.Status, end.Succeeded, end.Failed)
	}
}

func TestOnDemandBadInput(t *testing.T) {
	svc, _ := onDemandSuite(t, &simbedrock.RuntimeSim{}, &ondemand.Service{})
	tests := []struct {
		name, mode string
		n          int
		field      string
	}{
		{"unknown mode", "fast", 10, "mode"},
		{"on demand over its maximum", job.ModeOnDemand, job.MaxOnDemandRecords + 1, "records"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Batch.Submit(context.Background(), batch.SubmitRequest{Owner: "o", Model: model, Mode: tc.mode,
				Records: prompts(tc.n, func(int) string { return "x" })})
			var fe *job.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("got %v, want a field error on %s", err, tc.field)
			}
		})
	}
	svc.Batch.OnDemand = nil
	_, err := svc.Batch.Submit(context.Background(), batch.SubmitRequest{Owner: "o", Model: model, Mode: job.ModeOnDemand, Records: prompts(3, func(int) string { return "x" })})
	var fe *job.FieldError
	if !errors.As(err, &fe) || fe.Field != "mode" {
		t.Fatalf("on_demand without a runner: %v", err)
	}
}

// cancelAt cancels the job through the service once the run has made n calls.
type cancelAt struct {
	inner ondemand.OnDemandModel
	svc   *graph.Graph
	id    *string
	n     int64
	calls atomic.Int64
}

func (c *cancelAt) Invoke(ctx context.Context, m string, in job.Input, p job.Params) (ondemand.OnDemandResult, error) {
	if c.calls.Add(1) == c.n {
		if _, err := c.svc.Batch.Cancel(ctx, "o", *c.id); err != nil {
			return ondemand.OnDemandResult{}, err
		}
	}
	return c.inner.Invoke(ctx, m, in, p)
}

// TestOnDemandCancel: cancel_job during a run stops it at the next checkpoint.
func TestOnDemandCancel(t *testing.T) {
	od := &ondemand.Service{Concurrency: 2, Chunk: 10}
	svc, bus := onDemandSuite(t, &simbedrock.RuntimeSim{}, od)
	ctx := context.Background()
	j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: model, Records: prompts(60, func(i int) string { return fmt.Sprint("doc ", i) })})
	if err != nil {
		t.Fatal(err)
	}
	ca := &cancelAt{inner: od.Model, svc: svc, id: &j.ID, n: 5}
	od.Model = ca
	if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	end, _ := svc.Batch.Store.GetJob(ctx, j.ID)
	if end.Status != job.StatusCancelled || ca.calls.Load() > 10 || bus.count(config.DetailJobCompleted) != 1 {
		t.Fatalf("after cancel: %s, %d calls made, %d completions", end.Status, ca.calls.Load(), bus.count(config.DetailJobCompleted))
	}
}

// Cancelling an on-demand job whose run is under way, or died after storing a
// chunk it never checkpointed, ends it cancelled with counts equal to the
// results it stored: none uncounted, none counted twice.
func TestOnDemandCancelCountsStoredResults(t *testing.T) {
	cases := []struct {
		name string
		// run cancels the job its own way and returns how many results it stored.
		run func(t *testing.T, svc *graph.Graph, od *ondemand.Service, j *job.Job) int
	}{
		{"during a run", func(t *testing.T, svc *graph.Graph, od *ondemand.Service, j *job.Job) int {
			od.Model = &cancelAt{inner: od.Model, svc: svc, id: &j.ID, n: 5}
			if err := svc.OnDemandRuns.RunOnDemand(context.Background(), j.ID); err != nil {
				t.Fatal(err)
			}
			return 10 // the chunk in flight at the cancel
		}},
		{"a second run during the cancelled run's chunk", func(t *testing.T, svc *graph.Graph, od *ondemand.Service, j *job.Job) int {
			// A redelivered run event arrives while the first run's chunk is in
			// flight and the job is cancelling: the second run must leave the
			// job to the first, which stores the chunk and then ends the job
			// (ended by the second, its end went out counting 0, and the
			// chunk's 10 results were counted after the announcement).
			od.Model = &secondRunAt{inner: od.Model, t: t, svc: svc, id: j.ID, n: 5}
			if err := svc.OnDemandRuns.RunOnDemand(context.Background(), j.ID); err != nil {
				t.Fatal(err)
			}
			return 10
		}},
		{"after a run died past its results", func(t *testing.T, svc *graph.Graph, od *ondemand.Service, j *job.Job) int {
			ctx := context.Background()
			// What a run killed between PutRecords and its checkpoint leaves.
			if _, err := svc.Batch.Store.UpdateJob(ctx, j.ID, func(x *job.Job) error {
				x.Parts[0].Status, x.Status = job.StatusInProgress, job.StatusInProgress
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			recs := []job.Record{
				{JobID: j.ID, ID: job.ProviderRecordID(0), Status: job.RecordSucceeded, Output: "a"},
				{JobID: j.ID, ID: job.ProviderRecordID(1), Status: job.RecordSucceeded, Output: "b"},
				{JobID: j.ID, ID: job.ProviderRecordID(2), Status: job.RecordFailed, ErrorCode: "X"},
			}
			if err := svc.Batch.Store.PutRecords(ctx, j.RecordSet(), recs); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Batch.Cancel(ctx, "o", j.ID); err != nil {
				t.Fatal(err)
			}
			// The reconciler resumes the dead run, which finds the job cancelling.
			if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			return len(recs)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			od := &ondemand.Service{Concurrency: 2, Chunk: 10}
			svc, bus := onDemandSuite(t, &simbedrock.RuntimeSim{}, od)
			j, err := svc.Batch.Submit(context.Background(), batch.SubmitRequest{Owner: "o", Model: model, Records: prompts(60, func(i int) string { return fmt.Sprint("doc ", i) })})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.run(t, svc, od, j)
			end, err := svc.Batch.Store.GetJob(context.Background(), j.ID)
			if err != nil {
				t.Fatal(err)
			}
			stored := allRecords(t, svc, end)
			var ok, failed int
			for _, r := range stored {
				if r.Status == job.RecordSucceeded {
					ok++
				} else {
					failed++
				}
			}
			if end.Status != job.StatusCancelled || len(stored) != want || end.Succeeded != ok || end.Failed != failed || bus.count(config.DetailJobCompleted) != 1 {
				t.Fatalf("after cancel: %s, counts %d+%d, stored %d+%d (want %d stored), %d completions",
					end.Status, end.Succeeded, end.Failed, ok, failed, want, bus.count(config.DetailJobCompleted))
			}
		})
	}
}

// secondRunAt, on the n-th call, cancels the job and runs the job a second
// time, then checks the second run left the job unended.
type secondRunAt struct {
	inner ondemand.OnDemandModel
	t     *testing.T
	svc   *graph.Graph
	id    string
	n     int64
	calls atomic.Int64
}

func (c *secondRunAt) Invoke(ctx context.Context, m string, in job.Input, p job.Params) (ondemand.OnDemandResult, error) {
	if c.calls.Add(1) == c.n {
		if _, err := c.svc.Batch.Cancel(ctx, "o", c.id); err != nil {
			return ondemand.OnDemandResult{}, err
		}
		if err := c.svc.OnDemandRuns.RunOnDemand(ctx, c.id); err != nil {
			c.t.Errorf("second run: %v", err)
		}
		if j, err := c.svc.Batch.Store.GetJob(ctx, c.id); err != nil || j.Status.Terminal() {
			c.t.Errorf("after a second run during the first one's chunk: %v, %v; want the job left to the first run", j.Status, err)
		}
	}
	return c.inner.Invoke(ctx, m, in, p)
}

// failAt fails the job the way the reconciler gives up on a run that made no
// progress, on the n-th call, while the run goes on.
type failAt struct {
	inner ondemand.OnDemandModel
	svc   *graph.Graph
	id    *string
	n     int64
	calls atomic.Int64
}

func (f *failAt) Invoke(ctx context.Context, m string, in job.Input, p job.Params) (ondemand.OnDemandResult, error) {
	if f.calls.Add(1) == f.n {
		if _, err := f.svc.Batch.Store.UpdateJob(ctx, *f.id, func(j *job.Job) error {
			j.Status, j.Error, j.Checkpoint = job.StatusFailed, "on-demand run made no progress after 5 retries", nil
			j.Parts[0].Status = job.StatusFailed
			return nil
		}); err != nil {
			return ondemand.OnDemandResult{}, err
		}
	}
	return f.inner.Invoke(ctx, m, in, p)
}

// TestOnDemandFailedWhileRunningCountsStoredResults: a job the reconciler
// failed while a slow run was still going keeps the results that run stored,
// and counts them (every stored result counted once).
func TestOnDemandFailedWhileRunningCountsStoredResults(t *testing.T) {
	od := &ondemand.Service{Concurrency: 2, Chunk: 10}
	svc, _ := onDemandSuite(t, &simbedrock.RuntimeSim{}, od)
	ctx := context.Background()
	j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: model, Records: prompts(60, func(i int) string { return fmt.Sprint("doc ", i) })})
	if err != nil {
		t.Fatal(err)
	}
	od.Model = &failAt{inner: od.Model, svc: svc, id: &j.ID, n: 15}
	if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	end, err := svc.Batch.Store.GetJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored := allRecords(t, svc, end)
	ok := 0
	for _, r := range stored {
		if r.Status == job.RecordSucceeded {
			ok++
		}
	}
	if end.Status != job.StatusFailed || len(stored) == 0 || end.Succeeded != ok || end.Succeeded+end.Failed != len(stored) {
		t.Fatalf("job %s with counts %d+%d; %d results stored (%d succeeded)", end.Status, end.Succeeded, end.Failed, len(stored), ok)
	}
}

// heavy reports far more input tokens than the submit estimated (as a record
// with big images can), so spend can reach a budget the estimate was under.
type heavy struct{ inner ondemand.OnDemandModel }

func (h heavy) Invoke(ctx context.Context, m string, in job.Input, p job.Params) (ondemand.OnDemandResult, error) {
	r, err := h.inner.Invoke(ctx, m, in, p)
	r.InputTokens += 100_000
	return r, err
}

// Spend reaching budget_usd mid-run stops the run after the chunk that reached
// it: nothing past it runs, what ran is stored and counted, the job ends
// partially completed and says why.
func TestOnDemandStopsAtBudget(t *testing.T) {
	rt := &simbedrock.RuntimeSim{}
	od := &ondemand.Service{Concurrency: 2, Chunk: 10}
	svc, _ := onDemandSuite(t, rt, od)
	ctx := context.Background()
	// Estimate: 35 short prompts and max_tokens 10 cost well under a cent; each
	// heavy record costs 100,000 input tokens ≈ $0.08 at on-demand Haiku prices.
	j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: model, Params: job.Params{MaxTokens: 10}, BudgetUSD: 0.5,
		Records: prompts(35, func(i int) string { return fmt.Sprint("doc ", i) })})
	if err != nil {
		t.Fatal(err)
	}
	od.Model = heavy{od.Model}
	if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	end, _ := svc.Batch.Store.GetJob(ctx, j.ID)
	if end.Status != job.StatusPartiallyCompleted || end.Succeeded != 10 || len(allRecords(t, svc, end)) != 10 {
		t.Fatalf("after the budget: %s, %d succeeded, %d stored; want partially_completed after the first chunk of 10",
			end.Status, end.Succeeded, len(allRecords(t, svc, end)))
	}
	if end.Cost == nil || end.Cost.TotalUSD < 0.5 || len(end.Warnings) != 1 || !strings.Contains(end.Warnings[0], "budget_usd $0.5000 reached after 10 of 35 records") {
		t.Errorf("cost %+v, warnings %q", end.Cost, end.Warnings)
	}
}

// Once a record's cost is known, each chunk is sized to what the budget has
// left: the run stops within one record of budget_usd, not a whole chunk
// (here 10 records, about $1) past it.
func TestOnDemandChunksSizedToTheBudgetLeft(t *testing.T) {
	rt := &simbedrock.RuntimeSim{}
	od := &ondemand.Service{Concurrency: 2, Chunk: 10}
	svc, _ := onDemandSuite(t, rt, od)
	ctx := context.Background()
	j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: model, Params: job.Params{MaxTokens: 10}, BudgetUSD: 1.5,
		Records: prompts(35, func(i int) string { return fmt.Sprint("doc ", i) })})
	if err != nil {
		t.Fatal(err)
	}
	od.Model = heavy{od.Model}
	if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	end, _ := svc.Batch.Store.GetJob(ctx, j.ID)
	if end.Status != job.StatusPartiallyCompleted || end.Cost == nil || end.Succeeded == 0 {
		t.Fatalf("after the budget: %s, cost %+v; want partially_completed with a cost", end.Status, end.Cost)
	}
	per := end.Cost.TotalUSD / float64(end.Succeeded)
	if over := end.Cost.TotalUSD - end.BudgetUSD; over < 0 || over >= per {
		t.Errorf("spent $%.4f on %d records ($%.4f each) for a budget of $%.2f: want it reached and passed by less than one record",
			end.Cost.TotalUSD, end.Succeeded, per, end.BudgetUSD)
	}
	if n := len(allRecords(t, svc, end)); n != end.Succeeded {
		t.Errorf("%d stored, %d counted", n, end.Succeeded)
	}
}

// failEnd is a store whose first write ending a job fails, as a transient
// store error or a timeout between the last checkpoint and the end would.
type failEnd struct {
	store.Store
	failed bool
}

func (f *failEnd) UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error) {
	return f.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		if err := fn(j); err != nil || f.failed || !j.Status.Terminal() {
			return err
		}
		f.failed = true
		return errors.New("injected: store unavailable")
	})
}

// A run that reached the budget and stopped before writing the job's end is
// resumed to write that end only: no record runs past the budget.
func TestOnDemandResumedAtBudgetRunsNoMore(t *testing.T) {
	rt := &simbedrock.RuntimeSim{}
	od := &ondemand.Service{Concurrency: 2, Chunk: 10}
	svc, _ := onDemandSuite(t, rt, od)
	od.Jobs = &failEnd{Store: svc.Core.Store}
	ctx := context.Background()
	j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: model, Params: job.Params{MaxTokens: 10}, BudgetUSD: 0.5,
		Records: prompts(35, func(i int) string { return fmt.Sprint("doc ", i) })})
	if err != nil {
		t.Fatal(err)
	}
	od.Model = heavy{od.Model}
	if err := od.RunOnDemand(ctx, j.ID); err == nil {
		t.Fatal("first run: want the injected failure ending the job")
	}
	if err := od.RunOnDemand(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	end, _ := svc.Batch.Store.GetJob(ctx, j.ID)
	if n := len(allRecords(t, svc, end)); end.Status != job.StatusPartiallyCompleted || end.Succeeded != 10 || n != 10 {
		t.Fatalf("after the resumed run: %s, %d succeeded, %d stored; want partially_completed with the first chunk of 10 only", end.Status, end.Succeeded, n)
	}
}
