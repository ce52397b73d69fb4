package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockbatch"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

const (
	claude       = "claude-haiku-4-5"
	bedrockModel = "anthropic.claude-haiku-4-5-20251001-v1:0"
)

// refusingBedrock is Bedrock without a client: these tests never start a
// Bedrock batch job, and one started by mistake is refused as Bedrock refuses
// a job without an output location.
type refusingBedrock struct{ *bedrockbatch.Provider }

func (refusingBedrock) Submit(context.Context, service.BatchSubmit) (string, error) {
	return "", errors.New("ValidationException: outputDataConfig.s3OutputDataConfig.s3Uri: must not be empty (test double)")
}

// clock is the simulated time every part of a harness reads.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// recBus records what the service publishes.
type recBus struct {
	mu     sync.Mutex
	events []published
}

type published struct {
	detailType string
	detail     any
}

func (b *recBus) Publish(_ context.Context, dt string, detail any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, published{dt, detail})
	return nil
}

func (b *recBus) count(dt string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.events {
		if e.detailType == dt {
			n++
		}
	}
	return n
}

// harness is the service graph over a local store, a folder blob store and
// the Anthropic simulator through the real adapter, all on one simulated clock.
type harness struct {
	t     *testing.T
	clock *clock
	svc   *graph.Graph
	st    *localstore.Store
	blobs *fsblob.Store
	sim   *simanthropic.AnthropicSim
	bus   *recBus
}

// faults wrap the harness's adapters (nil: as they are).
type faults struct {
	blobs    func(service.Blobs) service.Blobs
	store    func(store.Store) store.Store
	provider func(service.BatchProvider) service.BatchProvider
	// bedrock wraps the Bedrock provider (whose submits the harness refuses).
	bedrock func(service.BatchProvider) service.BatchProvider
}

func newHarness(t *testing.T, wrap func(service.Blobs) service.Blobs) *harness {
	return newFaultyHarness(t, faults{blobs: wrap})
}

func newFaultyHarness(t *testing.T, f faults) *harness {
	t.Helper()
	wrap := f.blobs
	clk := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	st, blobs := localdeps.New(t, localstore.WithNow(clk.Now))
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	an := &simanthropic.AnthropicSim{APIKey: "sk-ant-test", Now: clk.Now, Log: log}
	url, err := an.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { an.Close() })
	p := anthropicsdk.NewProvider("sk-ant-test", url, blobs)
	var b service.Blobs = blobs
	if wrap != nil {
		b = wrap(blobs)
	}
	var sst store.Store = st
	if f.store != nil {
		sst = f.store(st)
	}
	var ap service.BatchProvider = p
	if f.provider != nil {
		ap = f.provider(p)
	}
	var bp service.BatchProvider = &refusingBedrock{&bedrockbatch.Provider{ModelIDs: []string{bedrockModel}}}
	if f.bedrock != nil {
		bp = f.bedrock(bp)
	}
	bus := &recBus{}
	svc := graph.New(graph.Deps{Store: sst, Blobs: b, Bus: bus, Log: log, Now: clk.Now, Bucket: "s3://test", JobPrefix: "mcpbatch",
		Providers: []service.BatchProvider{ap, bp}, Region: "us-east-1"})
	return &harness{t: t, clock: clk, svc: svc, st: st, blobs: blobs, sim: an, bus: bus}
}

func inputs(n int) []job.Input {
	out := make([]job.Input, n)
	for i := range out {
		out[i] = job.Input{ID: fmt.Sprintf("q%03d", i), Prompt: fmt.Sprintf("fact %d", i)}
	}
	return out
}

func (h *harness) submit(n, ttlDays int) *job.Job {
	h.t.Helper()
	j, err := h.svc.Batch.Submit(context.Background(), batchReq(n, ttlDays))
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

// reconcile runs the reconciler and ingests what it announced, as the
// ingest function would on "Job Output Ready".
func (h *harness) reconcile() error {
	h.t.Helper()
	before := h.bus.count(config.DetailJobOutputReady)
	_, err := h.svc.Reconciler.Reconcile(context.Background())
	h.bus.mu.Lock()
	ready := h.bus.events
	h.bus.mu.Unlock()
	n := 0
	for _, e := range ready {
		if e.detailType != config.DetailJobOutputReady {
			continue
		}
		if n++; n <= before {
			continue
		}
		if ierr := h.svc.Batch.Ingest(context.Background(), e.detail.(service.OutputReady).JobID); ierr != nil {
			h.t.Logf("ingest: %v", ierr)
		}
	}
	return err
}

func (h *harness) job(id string) (*job.Job, error) {
	return h.st.GetJob(context.Background(), id)
}

func (h *harness) records(j *job.Job) []job.Record {
	h.t.Helper()
	recs, _, err := h.st.ListRecords(context.Background(), j.RecordSet(), store.RecordQuery{Limit: 500})
	if err != nil {
		h.t.Fatal(err)
	}
	return recs
}
