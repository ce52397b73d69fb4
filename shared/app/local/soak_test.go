package local_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	"image/png"
	"io"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/retry"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simsagemaker "github.com/mcpbatch/mcpbatch/shared/sim/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// The chaos soak runs 200 jobs across Bedrock batch, Anthropic Message Batches,
// on-demand and SageMaker async through the whole local suite while a fault
// layer duplicates, delays (reorders) and drops bus events, throttles the
// providers, kills processes mid-submit and mid-ingest and runs reconcilers
// that overlap. Jobs submitted from input files meet S3 faults in their
// validation (throttling, reads cut mid-stream, the file replaced or deleted
// between passes); jobs with a webhook meet receivers that fail, throttle,
// time out or never recover, a notifier killed mid-delivery and late
// duplicate "Job Completed" events. Then every job must be terminal, every
// record stored exactly once and counted once, no simulator may hold a
// provider job nobody tracks or that a cancel left running, no file job may
// run part of a file or a mix of two, and every job end must be sent once
// to its webhook (one delivery id) and delivered when the receiver
// recovers, or recorded on the job as failed after the documented attempts.
//
// Every fault decision is a hash of the seed and what it is about (an event's
// job and status and how often it was seen, a part's name, a job id), so a
// seed replays the same faults on the same jobs whatever the goroutines'
// order: MCPBATCH_SOAK_SEED=<seed> go test ./shared/app/local -run TestEndToEnd/ChaosSoak -v
const (
	soakSeedEnv     = "MCPBATCH_SOAK_SEED"
	soakDefaultSeed = 20261130
	soakOwner       = "soak"
	// soakBound bounds the wait for every job to end; a job still running
	// then is a failure, not a longer wait.
	soakBound = 120 * time.Second
	// soakStall: no job written for this long while some are not terminal
	// means they are stuck (the reconciler polls every few hundred ms).
	soakStall = 5 * time.Second
	// soakJump is how far the clocks jump when no job moves (at most
	// soakJumps times): the time a lease or a backoff waits for in production
	// (a submitting lease, a stale-job threshold of 15 minutes) passes at once.
	soakJump = 20 * time.Minute
	// Enough jumps for the longest wait the product states: a file job's
	// validation requested again until transfer.ValidationBound.
	soakJumps = int(transfer.ValidationBound / soakJump)
)

// soakRates are the fault rates (per decision); MCPBATCH_SOAK_FAULTS
// overrides them ("drop_internal=0,kill_submit=0.2") to look at one fault at a time.
var soakRates = map[string]float64{
	"dup": 0.10, "delay": 0.15, "drop_provider": 0.10, "drop_internal": 0.03,
	"kill_submit": 0.08, "kill_ingest": 0.15, "kill_ondemand": 0.15,
	"cancel_during_submit": 0.03, "cancel_after": 0.05,
	"throttle_bedrock": 0.10, "busy_anthropic": 0.10, "throttle_runtime": 0.10, "fail_sagemaker": 0.10,
	"delete_index": 0.30, "swap_media": 0.30, "retry": 0.60,
	"webhook": 0.50, "kill_announce": 0.10, "redeliver": 0.30,
	"throttle_s3": 0.15, "s3_read_error": 0.15, "swap_input": 0.30,
	"kill_unit": 0.15,
}

const soakFaultsEnv = "MCPBATCH_SOAK_FAULTS"

// soakFaultRates reads the overrides of soakRates.
func soakFaultRates(spec string) (map[string]float64, error) {
	rates := maps.Clone(soakRates)
	for _, kv := range strings.Split(spec, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		name, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if _, known := rates[name]; !known || !ok {
			keys := slices.Sorted(maps.Keys(rates))
			return nil, fmt.Errorf("%s: %q: want name=rate with a name among %s", soakFaultsEnv, kv, strings.Join(keys, ", "))
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 || x > 1 {
			return nil, fmt.Errorf("%s: %s=%q: want a rate from 0 to 1", soakFaultsEnv, name, v)
		}
		rates[name] = x
	}
	return rates, nil
}

// Fault names, as printed.
const (
	fDup           = "bus events duplicated"
	fDelay         = "bus events delayed (reordered)"
	fDropProvider  = "provider events dropped (Bedrock, SageMaker)"
	fDropInternal  = "internal events dropped (output ready, on-demand run)"
	fThrottle      = "Bedrock API throttled"
	fBusy          = "Anthropic create answered 429"
	fRuntimeThrot  = "Bedrock runtime throttled (on-demand)"
	fSageFail      = "SageMaker async inferences failed"
	fKillSubmit    = "process killed mid-submit (after the provider accepted)"
	fKillIngest    = "process killed mid-ingest (records written, no checkpoint)"
	fKillOnDemand  = "on-demand run killed mid-run"
	fCancelInFlite = "cancel_job while the provider create was in flight"
	fCancelAfter   = "cancel_job after submit"
	fRecon         = "reconciler runs"
	fReconOverlap  = "reconciler runs overlapping another"
	fReconErr      = "reconciler runs that returned an error"
	fClockJump     = "clock jumps of 20 min while no job moved"
	fDeleteIndex   = "vector index deleted while its embedding job ran"
	fSwapMedia     = "image upload replaced after its check (media job)"
	fRetry         = "retry_failed of a finished job (merged view checked)"
)

// chaos makes the fault decisions and counts the faults.
type chaos struct {
	seed uint64
	mu   sync.Mutex
	seen map[string]int
	n    map[string]int
	// hit lists the faults that touched each job, for the problem report.
	hit map[string][]string
	// created says which job and part each provider job was created for (by ref).
	created sync.Map
	// stopped holds the refs the service asked its provider to stop.
	stopped sync.Map
	// killedNotifier holds the jobs whose "Job Completed" handling was killed.
	killedNotifier sync.Map
	rates          map[string]float64
}

// rate is the rate of a fault (a name of soakRates).
func (c *chaos) rate(name string) float64 {
	r, ok := c.rates[name]
	if !ok {
		panic("soak: unknown fault " + name)
	}
	return r
}

func newChaos(seed uint64, rates map[string]float64) *chaos {
	return &chaos{seed: seed, rates: rates, seen: map[string]int{}, n: map[string]int{}, hit: map[string][]string{}}
}

// note records that a fault touched a job.
func (c *chaos) note(jobID, what string) {
	if jobID == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hit[jobID] = append(c.hit[jobID], what)
}

// merge adds the faults noted under from (a file, before its job existed) to jobID's.
func (c *chaos) merge(from, jobID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hit[jobID] = append(c.hit[from], c.hit[jobID]...)
}

// history is what happened to a job, in order.
func (c *chaos) history(jobID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.hit[jobID]) == 0 {
		return "no fault touched it"
	}
	return strings.Join(c.hit[jobID], "; ")
}

// roll is a number in [0,1) fixed by the seed, the kind of decision and its key.
func (c *chaos) roll(kind, key string) float64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], c.seed)
	h.Write(b[:])
	io.WriteString(h, kind+"\x00"+key)
	x := h.Sum64()
	// fnv's low bits mix poorly for short keys: finish with splitmix64.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// nth counts how often key was seen, so a repeat gets its own decision.
func (c *chaos) nth(kind, key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[kind+"\x00"+key]++
	return c.seen[kind+"\x00"+key]
}

func (c *chaos) count(fault string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[fault]++
}

func (c *chaos) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// A killable context carries its own cancel, so a fault deep in a call (after
// the provider accepted a job) can end the "process" that made the call.
type killKey struct{}

func killable(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	return context.WithValue(ctx, killKey{}, cancel), cancel
}

func kill(ctx context.Context) bool {
	cancel, ok := ctx.Value(killKey{}).(context.CancelFunc)
	if ok {
		cancel()
	}
	return ok
}

// eventFields are the fields that say what an event is about, in the plain
// EventBridge envelope and in an SNS message (escaped JSON).
var eventFields = regexp.MustCompile(`\\?"(detail-type|batchJobName|status|jobId|inferenceId|invocationStatus|eventName)\\?"\s*:\s*\\?"([^"\\]*)\\?"`)

// eventKey names an event by its content (ids and times left out), and says
// whether it is one of the project's own events.
func eventKey(ev []byte) (key string, internal bool) {
	var b strings.Builder
	for _, m := range eventFields.FindAllSubmatch(ev, -1) {
		b.Write(m[1])
		b.WriteByte('=')
		b.Write(m[2])
		b.WriteByte(' ')
	}
	var env struct {
		Source string `json:"source"`
	}
	_ = json.Unmarshal(ev, &env)
	return b.String(), env.Source == config.EventSource
}

var eventJob = regexp.MustCompile(`\\?"(?:jobId|inferenceId)\\?"\s*:\s*\\?"([0-9a-z]+)|\\?"batchJobName\\?"\s*:\s*\\?"[a-z]+-([0-9a-z]+)`)

// eventJobID is the job an event is about ("" when it names none).
func eventJobID(ev []byte) string {
	m := eventJob.FindSubmatch(ev)
	if m == nil {
		return ""
	}
	return string(m[1]) + string(m[2])
}

// wrapBus delivers events duplicated, late (so later ones overtake them) or not at all.
func (c *chaos) wrapBus(l *local.Suite) {
	deliver := l.Bus.Deliver
	l.Bus.Deliver = func(ctx context.Context, ev []byte) error {
		key, internal := eventKey(ev)
		key = fmt.Sprintf("%s#%d", key, c.nth("bus", key))
		x := c.roll("bus", key)
		drop, fault := c.rate("drop_provider"), fDropProvider
		dup, delay := c.rate("dup"), c.rate("delay")
		if internal {
			drop, fault = c.rate("drop_internal"), fDropInternal
			if strings.Contains(key, config.DetailJobCompleted) {
				// Not dropped: nothing publishes a job's end again, so a lost
				// one would lose the job's webhook and SNS message (its
				// duplicates and delays still apply).
				drop = 0
			}
		}
		what := strings.TrimSpace(key)
		switch {
		case x < drop:
			c.count(fault)
			c.note(eventJobID(ev), "dropped "+what)
			return nil
		case x < drop+dup:
			c.count(fDup)
			c.note(eventJobID(ev), "duplicated "+what)
			l.Bus.Send(ev) // the copy goes through the faults too
		case x < drop+dup+delay:
			c.count(fDelay)
			c.note(eventJobID(ev), "delayed "+what)
			sleep(ctx, time.Duration(20+c.roll("delay", key)*280)*time.Millisecond)
		}
		return deliver(ctx, ev)
	}
}

// chaosProvider is a batch provider whose create takes a while (so a
// reconciler can overlap it), which a cancel_job may overtake, and after which
// the process may die before it records the provider's answer.
type chaosProvider struct {
	service.BatchProvider
	c      *chaos
	cancel func(jobID string)
}

func (p *chaosProvider) Submit(ctx context.Context, in service.BatchSubmit) (string, error) {
	n := p.c.nth("submit", in.Name)
	key := fmt.Sprintf("%s#%d", in.Name, n)
	jobID := in.Tags["mcpbatch:job"]
	sleep(ctx, time.Duration(5+p.c.roll("create-latency", key)*60)*time.Millisecond)
	if n == 1 && p.c.roll("cancel-during-submit", jobID) < p.c.rate("cancel_during_submit") {
		p.c.count(fCancelInFlite)
		p.c.note(jobID, "cancel_job during the create of "+in.Name)
		p.cancel(jobID)
	}
	ref, err := p.BatchProvider.Submit(ctx, in)
	if err == nil {
		p.c.created.Store(ref, fmt.Sprintf("created for job %s part %s (create #%d)", jobID, in.Name, n))
	} else {
		p.c.note(jobID, fmt.Sprintf("create #%d of %s answered: %.120s", n, in.Name, err))
	}
	if err == nil && p.c.roll("kill-submit", key) < p.c.rate("kill_submit") && kill(ctx) {
		p.c.count(fKillSubmit)
		p.c.note(jobID, "killed after the create of "+in.Name+" returned "+ref)
	}
	return ref, err
}

// Stop records that the service asked for the stop: a provider job that ended
// before its stop arrived (the simulators end a batch within milliseconds, a
// real one takes minutes or hours) was not left running by the service.
func (p *chaosProvider) Stop(ctx context.Context, ref string) error {
	p.c.stopped.Store(ref, true)
	return p.BatchProvider.Stop(ctx, ref)
}

// wrapProviders puts the fault layer over every provider. The wrap embeds
// the provider, so it keeps every ability the provider declares
// (service.Abilities) without naming one; keptAbilities holds it to that.
// (A wrap that forwarded abilities by hand once hid FindNamed: a cancel then
// ended a part whose create was lost as never sent, and its job ran unseen;
// seed 99 raised.)
func (c *chaos) wrapProviders(t *testing.T, l *local.Suite) {
	reg := l.Service.Core.Providers
	before := *reg
	var wrapped []service.BatchProvider
	for _, p := range before.All() {
		wrapped = append(wrapped, &chaosProvider{BatchProvider: p, c: c, cancel: func(id string) {
			if _, err := l.Service.Batch.Cancel(context.Background(), soakOwner, id); err != nil {
				service.Logger(l.Service.Core.Log).Info("soak: cancel during submit refused", "job_id", id, "error", err)
			}
		}})
	}
	// In place: every flow holds the one registry.
	*reg = *service.NewRegistry(wrapped...)
	keptAbilities(t, &before, reg)
}

// keptAbilities fails t unless every provider of before declares, in after,
// the same abilities (every field of service.Abilities, by reflection).
func keptAbilities(t *testing.T, before, after *service.Registry) {
	t.Helper()
	for _, p := range before.All() {
		want, got := before.Abilities(p.Name()).Has(), after.Abilities(p.Name()).Has()
		if !slices.Equal(got, want) {
			t.Fatalf("soak: the fault wrap of provider %s declares abilities %v, the provider %v", p.Name(), got, want)
		}
	}
}

// chaosRuntime kills the process after SageMaker accepted an async inference.
type chaosRuntime struct {
	smsvc.SageMakerRuntime
	c *chaos
}

func (r chaosRuntime) InvokeAsync(ctx context.Context, in smsvc.AsyncInvocation) (smsvc.AsyncAccepted, error) {
	acc, err := r.SageMakerRuntime.InvokeAsync(ctx, in)
	if err == nil && r.c.roll("kill-submit", in.InferenceID) < r.c.rate("kill_submit") && kill(ctx) {
		r.c.count(fKillSubmit)
		r.c.note(in.InferenceID, "killed after InvokeEndpointAsync returned")
	}
	return acc, err
}

// killWriter ends an ingest run right after a chunk of records was written and
// before its checkpoint (at most once per job, so the bus's retry finishes).
type killWriter struct {
	next   ingest.RecordWriter
	c      *chaos
	mu     sync.Mutex
	killed map[string]bool
}

var errKilled = errors.New("soak: process killed")

func (w *killWriter) PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	if err := w.next.PutRecords(ctx, rs, recs); err != nil {
		return err
	}
	jobID := rs.JobID
	n := w.c.nth("ingest-write", jobID)
	if w.c.roll("kill-ingest", fmt.Sprintf("%s#%d", jobID, n)) >= w.c.rate("kill_ingest") {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.killed[jobID] {
		return nil
	}
	w.killed[jobID] = true
	w.c.count(fKillIngest)
	w.c.note(jobID, fmt.Sprintf("ingest killed after write %d", n))
	return errKilled
}

// wrapOnDemand kills the first run of some on-demand jobs after a few
// milliseconds; the bus redelivers the event, as Lambda retries an async invoke.
func (c *chaos) wrapOnDemand(l *local.Suite) {
	key := config.EventSource + "|" + config.DetailOnDemandRun
	h := l.Router.Events[key]
	l.Router.Events[key] = func(ctx context.Context, ev events.CloudWatchEvent) error {
		var d struct {
			JobID string `json:"jobId"`
		}
		_ = json.Unmarshal(ev.Detail, &d)
		if c.nth("ondemand-run", d.JobID) > 1 || c.roll("kill-ondemand", d.JobID) >= c.rate("kill_ondemand") {
			return h(ctx, ev)
		}
		c.count(fKillOnDemand)
		c.note(d.JobID, "on-demand run killed")
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(time.Duration(2+c.roll("kill-ondemand-at", d.JobID)*30)*time.Millisecond, cancel)
		return h(ctx, ev)
	}
}

// soakItem is one planned job.
type soakItem struct {
	k        int
	kind     string // bedrock, anthropic, on_demand, sagemaker
	model    string
	hook     string // the webhook receiver's behaviour ("" : no webhook)
	records  int
	cancelAt time.Duration // > 0: cancel_job that long after submit returned
}

const (
	kBedrock   = "bedrock batch"
	kAnthropic = "anthropic"
	kOnDemand  = "bedrock on-demand"
	kSageMaker = "sagemaker async"
	kEmbed     = "embedding to index"
	kMedia     = "media on-demand"
	kRetry     = "retry_failed"
	kFile      = "bedrock from a file"
	kUploads   = "bedrock from uploads"
	kFolder    = "bedrock from a folder"
	// soakEmbedModel and soakVisionModel run on demand; the second reads images.
	soakEmbedModel  = "cohere.embed-english-v3"
	soakVisionModel = "anthropic.claude-sonnet-4-5-20250929-v1:0"
)

// soakMix is how many jobs of each kind the soak plans, with their record counts.
var soakMix = []struct {
	kind     string
	n        int
	min, max int
}{
	{kBedrock, 50, job.BedrockMinRecords, job.BedrockMinRecords + 30},
	{kAnthropic, 60, 2, 30},
	{kOnDemand, 50, 2, 20},
	{kSageMaker, 40, 1, 1},
	{kEmbed, 12, 2, 12},
	{kMedia, 12, 2, 5},
	{kFile, 4, job.BedrockMinRecords, job.BedrockMinRecords + 20},
	{kUploads, 4, job.BedrockMinRecords, job.BedrockMinRecords + 20},
	{kFolder, 4, job.BedrockMinRecords, job.BedrockMinRecords + 20},
}

// soakJobs is the number of jobs the soak plans (retries come on top).
func soakJobs() int {
	n := 0
	for _, m := range soakMix {
		n += m.n
	}
	return n
}

// soakPlan plans the mix's jobs, each kind's count divided by div (at least one).
func soakPlan(c *chaos, div int) []soakItem {
	mix := soakMix
	var plan []soakItem
	for _, m := range mix {
		for range max(1, m.n/div) {
			plan = append(plan, soakItem{kind: m.kind})
		}
	}
	// Shuffle by the seed so the kinds interleave differently per seed.
	for i := len(plan) - 1; i > 0; i-- {
		j := int(c.roll("shuffle", strconv.Itoa(i)) * float64(i+1))
		plan[i], plan[j] = plan[j], plan[i]
	}
	for k := range plan {
		it := &plan[k]
		it.k = k
		key := strconv.Itoa(k)
		for _, m := range mix {
			if m.kind == it.kind {
				it.records = m.min + int(c.roll("records", key)*float64(m.max-m.min+1))
			}
		}
		switch it.kind {
		case kAnthropic:
			it.model = config.DefaultAnthropicModels[0]
		case kBedrock, kOnDemand, kFile, kUploads, kFolder:
			it.model = haiku
		case kSageMaker:
			it.model = local.SimEndpoints[0]
		case kEmbed:
			it.model = soakEmbedModel
		case kMedia:
			it.model = soakVisionModel
		}
		it.hook = hookBehaviour(c, k)
		if it.kind != kSageMaker && c.roll("cancel-after", key) < c.rate("cancel_after") {
			it.cancelAt = time.Duration(1+c.roll("cancel-after-at", key)*300) * time.Millisecond
		}
	}
	return plan
}

func soakName(k int) string { return fmt.Sprintf("soak-%03d", k) }

func soakRecordID(k, i int) string { return fmt.Sprintf("j%03d-rec-%03d", k, i) }

func soakSeed(t *testing.T) uint64 {
	v := os.Getenv(soakSeedEnv)
	if v == "" {
		return soakDefaultSeed
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want an unsigned integer", soakSeedEnv, v)
	}
	return seed
}

var _ = flow("ChaosSoak", func(t *testing.T, w wiring) {
	if os.Getenv("MCPBATCH_E2E") != "1" || testing.Short() {
		t.Skip("chaos soak: set MCPBATCH_E2E=1 (make test does)")
	}
	seed := soakSeed(t)
	t.Logf("chaos soak seed %d (replay: %s=%d go test ./shared/app/local -run TestEndToEnd/ChaosSoak -v)", seed, soakSeedEnv, seed)
	rates, err := soakFaultRates(os.Getenv(soakFaultsEnv))
	if err != nil {
		t.Fatal(err)
	}
	if spec := os.Getenv(soakFaultsEnv); spec != "" {
		t.Logf("fault rates overridden by %s=%s", soakFaultsEnv, spec)
	}
	runSoak(t, w, seed, rates)
})

// soakRaised are the rates at which the soak broke before (three to four
// times its own), and soakRaisedSeeds the seeds it must hold them on.
const soakRaised = "dup=0.4,delay=0.4,drop_provider=0.3,drop_internal=0.1,kill_submit=0.25,kill_ingest=0.4,kill_ondemand=0.4," +
	"cancel_during_submit=0.1,throttle_bedrock=0.3,busy_anthropic=0.3,kill_announce=0.3,redeliver=0.6,s3_read_error=0.3"

var soakRaisedSeeds = []uint64{4242, 777001, 31337, 20261130, 99}

// TestChaosSoakRaised runs the soak at the raised rates on the fixed
// seeds (on make dev's wiring, the seeds side by side: the soak mostly
// waits on its simulators' steps). Replay one with
// MCPBATCH_SOAK_SEED=<seed> MCPBATCH_SOAK_FAULTS=<soakRaised> and
// -run TestEndToEnd/ChaosSoak/sqlite.
func TestChaosSoakRaised(t *testing.T) {
	if os.Getenv("MCPBATCH_E2E") != "1" || testing.Short() {
		t.Skip("chaos soak: set MCPBATCH_E2E=1 (make test does)")
	}
	rates, err := soakFaultRates(soakRaised)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range soakRaisedSeeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			runSoak(t, sqliteWiring, seed, rates)
		})
	}
}

// runSoak is one soak: the plan of the seed, its faults at rates, on w.
func runSoak(t *testing.T, w wiring, seed uint64, rates map[string]float64) {
	start := time.Now()
	c := newChaos(seed, rates)

	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if os.Getenv("MCPBATCH_SOAK_LOG") != "" {
		log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	// The service's clock can jump so time passes at once for its timers
	// (leases, stale thresholds, backoffs; see soakJump), and the store's
	// with it (it stamps the UpdatedAt those timers count from), and the
	// Anthropic simulator's: the batch a lost create made is looked for among
	// those created since its first try less a clock skew of hours, and
	// jumps of up to 8 h on our side only would put it out of reach (seed
	// 31337 at the raised rates), where real clocks differ by seconds. The
	// other simulators keep real time: nothing of theirs is read by a window.
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	l, err := local.New(context.Background(), w.options(t, local.Options{
		Dir: t.TempDir(), StepDelay: 25 * time.Millisecond, FailEvery: 13, Log: log, StoreNow: clock, Now: clock, AnthropicNow: clock,
		Reports: local.ReportsOptions{ThrottleRate: c.rate("throttle_runtime"), Concurrency: 4},
		Fanout:  local.FanoutOptions{UnitBytes: soakUnitBytes},
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	// Simulator knobs, decided by the seed.
	var throttleN atomic.Int64
	l.Sim.ThrottleAPI = func(op string) bool {
		if c.roll("throttle", fmt.Sprintf("%s#%d", op, throttleN.Add(1))) < c.rate("throttle_bedrock") {
			c.count(fThrottle)
			return true
		}
		return false
	}
	var busyN atomic.Int64
	l.Anthropic.Busy = func() bool {
		if c.roll("busy", strconv.FormatInt(busyN.Add(1), 10)) < c.rate("busy_anthropic") {
			c.count(fBusy)
			return true
		}
		return false
	}
	l.Anthropic.SlowRequest = func(id string) bool { return c.roll("slow", id) < 0.1 }
	l.Anthropic.SlowSteps = 3
	l.SageMaker.Sim.FailAsync = func(_ string, body []byte) string {
		if c.roll("sagemaker-fail", string(body)) < c.rate("fail_sagemaker") {
			c.count(fSageFail)
			return "ModelError: simulated failure chosen by the soak"
		}
		return ""
	}

	// The fault layer over the suite's adapters, before any traffic.
	c.wrapBus(l)
	c.wrapProviders(t, l)
	c.wrapOnDemand(l)
	l.Service.SageMaker.Runtime = chaosRuntime{SageMakerRuntime: l.Service.SageMaker.Runtime, c: c}
	ing := l.Service.Batch.Ingester.(*ingest.Ingester)
	ing.ChunkLines = 16 // several checkpoints per file, so kills land between them
	ing.Records = &killWriter{next: ing.Records, c: c, killed: map[string]bool{}}
	l.Service.Reconciler.StaleAfter = 300 * time.Millisecond
	// The same mix and fault rates on both wirings; a quarter of the jobs on
	// the AWS one, as moto_server's DynamoDB answers a Query in about a
	// second under this load (the whole plan did not end in soakBound).
	div := 1
	if w.name == awsWiring.name {
		div = 4
	}
	plan := soakPlan(c, div)
	c.wrapFileBlobs(l, plan)
	c.wrapUnits(l)
	c.wrapAnnounce(l)

	ctx, stop := context.WithTimeout(context.Background(), soakBound+30*time.Second)
	defer stop()
	hooks, err := newSoakReceivers(ctx, l, c, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer hooks.srv.Close()

	// Reconcilers: two loops whose runs overlap, each run killable mid-submit.
	reconCtx, stopRecon := context.WithCancel(ctx)
	var running atomic.Int32
	var reconWG sync.WaitGroup
	for w := range 2 {
		reconWG.Add(1)
		go func() {
			defer reconWG.Done()
			for i := 0; reconCtx.Err() == nil; i++ {
				if running.Add(1) > 1 {
					c.count(fReconOverlap)
				}
				rctx, cancel := killable(reconCtx)
				_, err := l.Service.Reconciler.Reconcile(rctx)
				if _, serr := l.Service.SageMaker.ReconcileSageMaker(rctx, time.Now().Add(-300*time.Millisecond), 500); serr != nil {
					err = errors.Join(err, serr)
				}
				cancel()
				running.Add(-1)
				c.count(fRecon)
				if err != nil && reconCtx.Err() == nil {
					c.count(fReconErr)
				}
				sleep(reconCtx, time.Duration(30+c.roll("recon-pause", fmt.Sprintf("%d#%d", w, i))*120)*time.Millisecond)
			}
		}()
	}

	// Submitters: four callers share the plan.
	var (
		next     atomic.Int32
		subWG    sync.WaitGroup
		cancelWG sync.WaitGroup
		errMu    sync.Mutex
		subErrs  []string
	)
	for range 4 {
		subWG.Add(1)
		go func() {
			defer subWG.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(plan) {
					return
				}
				it := plan[k]
				sctx, cancel := killable(ctx)
				hook := ""
				if it.hook != "" {
					hook = hooks.url(it.k)
				}
				id, err := submitSoak(sctx, l, c, it, hook)
				killed := sctx.Err() != nil && ctx.Err() == nil
				cancel()
				if err != nil && !killed {
					errMu.Lock()
					subErrs = append(subErrs, fmt.Sprintf("%s (%s): %v", soakName(k), it.kind, err))
					errMu.Unlock()
				}
				if id != "" {
					mediaFaults(ctx, l, c, it, &cancelWG)
				}
				if id != "" && it.cancelAt > 0 {
					cancelWG.Add(1)
					time.AfterFunc(it.cancelAt, func() {
						defer cancelWG.Done()
						c.count(fCancelAfter)
						c.note(id, "cancel_job after submit")
						if _, err := l.Service.Batch.Cancel(ctx, soakOwner, id); err != nil {
							log.Info("soak: cancel refused", "job_id", id, "error", err)
						}
					})
				}
			}
		}()
	}
	subWG.Wait()
	cancelWG.Wait()
	submitted := time.Since(start)

	// Wait for every job to end, the reconcilers still running as the backstop.
	// A job that has not moved for soakStall is stuck: waiting longer only
	// makes a failing soak slower.
	var jobs []*job.Job
	waitEnd := func(want int) { // each wait may jump the clocks soakJumps times
		deadline := time.Now().Add(soakBound)
		lastMove, last, jumps := time.Now(), "", 0
		for {
			jobs = listSoakJobs(t, ctx, l)
			if len(jobs) >= want && allTerminal(jobs) || time.Now().After(deadline) {
				return
			}
			if fp := fingerprint(jobs); fp != last {
				last, lastMove = fp, time.Now()
			} else if time.Since(lastMove) > soakStall {
				if jumps == soakJumps {
					t.Logf("no job moved for %s after %d clock jumps: the jobs still running are stuck", soakStall, jumps)
					return
				}
				jumps++
				offset.Add(int64(soakJump))
				c.count(fClockJump)
				lastMove = time.Now()
			}
			sleep(ctx, 200*time.Millisecond)
		}
	}
	waitEnd(len(plan))
	// Then retry_failed some finished jobs with failed records (the same
	// faults apply to the retries), and wait for those too.
	retries := 0
	for _, j := range jobs {
		if j.Provider == job.ProviderSageMaker || j.Failed == 0 || j.Status == job.StatusCancelled || !j.Status.Terminal() ||
			c.roll("retry", j.ID) >= c.rate("retry") {
			continue
		}
		c.count(fRetry)
		c.note(j.ID, "retry_failed")
		if _, _, err := l.Service.Retry.Retry(ctx, retry.Request{Owner: soakOwner, JobID: j.ID}); err != nil {
			errMu.Lock()
			subErrs = append(subErrs, fmt.Sprintf("retry_failed of %s (%s): %v", j.ID, j.Name, err))
			errMu.Unlock()
			continue
		}
		retries++
	}
	waitEnd(len(plan) + retries)
	stopRecon()
	reconWG.Wait()
	l.Bus.Wait()
	// The simulators finish what they still run (a job nobody stopped runs to its end).
	drain := time.Now().Add(10 * time.Second)
	for time.Now().Before(drain) && !allEnded(l) {
		time.Sleep(50 * time.Millisecond)
	}
	l.Bus.Wait()
	// Late duplicates of handled "Job Completed" events deliver nothing again.
	c.redeliver(ctx, l, listSoakJobs(t, ctx, l))
	l.Bus.Wait()
	jobs = listSoakJobs(t, ctx, l)

	rep := account(t, ctx, l, c, plan, jobs)
	checkWebhooks(rep, hooks, plan, jobs)
	for _, e := range subErrs {
		rep.problem("submit error", e)
	}
	rep.print(t, seed, len(jobs), c.counts(), l.Reports.Runtime.Stats().Throttled, time.Since(start), submitted)
	if rep.lost != 0 || rep.double != 0 || rep.orphaned != 0 || rep.notTerminal != 0 || rep.webhookDup != 0 || rep.webhookLost != 0 ||
		rep.webhookBad != 0 || len(rep.problems) != 0 {
		t.Errorf("chaos soak seed %d: %d lost, %d double-counted, %d orphaned, %d jobs not terminal, webhooks %d sent twice, %d not delivered as documented, %d wrong; %d problems (see the tables above; replay with %s=%d)",
			seed, rep.lost, rep.double, rep.orphaned, rep.notTerminal, rep.webhookDup, rep.webhookLost, rep.webhookBad, len(rep.problems), soakSeedEnv, seed)
	}
}

// submitSoak submits one planned job and returns its id ("" when the submit
// did not return one: killed, or refused).
func submitSoak(ctx context.Context, l *local.Suite, c *chaos, it soakItem, hook string) (string, error) {
	var n *job.Notify
	if hook != "" {
		n = &job.Notify{Webhook: hook}
	}
	if it.kind == kSageMaker {
		body := fmt.Sprintf(`{"soak":%d}`, it.k)
		j, err := l.Service.SageMaker.InvokeAsync(ctx, smsvc.AsyncRequest{
			Owner: soakOwner, Endpoint: it.model, Body: []byte(body), HasBody: true, ContentType: "application/json", Notify: n,
		})
		if j == nil {
			return "", err
		}
		return j.ID, err
	}
	recs := make([]job.Input, it.records)
	for i := range recs {
		recs[i] = job.Input{ID: soakRecordID(it.k, i), Prompt: fmt.Sprintf("Soak job %d, fact #%d", it.k, i)}
	}
	req := batch.SubmitRequest{Owner: soakOwner, Model: it.model, Name: soakName(it.k), Records: recs, Params: job.Params{MaxTokens: 256}, Notify: n}
	switch it.kind {
	case kFile:
		uri := soakInputURI(l, it.k)
		if _, err := l.Blobs.Put(ctx, uri, bytes.NewReader(soakFile(it.k, it.records, false)), "application/jsonl"); err != nil {
			return "", err
		}
		req.Records, req.Provider, req.Mode = nil, job.ProviderBedrock, job.ModeBatch
		j, err := l.Service.Transfer.SubmitFile(ctx, transfer.FileSubmitRequest{SubmitRequest: req, InputURI: uri})
		if j == nil {
			return "", err
		}
		return j.ID, err
	case kUploads, kFolder:
		req.Records, req.Provider, req.Mode = nil, job.ProviderBedrock, job.ModeBatch
		return submitSoakFiles(ctx, l, c, it, req)
	case kEmbed:
		for i := range recs {
			recs[i] = job.Input{ID: recs[i].ID, Text: recs[i].Prompt, Metadata: map[string]any{"job": float64(it.k)}}
		}
		req.Params = job.Params{}
		req.Provider, req.Mode, req.Index = job.ProviderBedrock, job.ModeOnDemand, &batch.IndexRequest{Name: soakIndex(it.k)}
	case kMedia:
		for i := range recs {
			uri := soakImage(l, it.k, i)
			if _, err := l.Blobs.Put(ctx, uri, bytes.NewReader(soakPNG(1+i%3)), "image/png"); err != nil {
				return "", err
			}
			recs[i].Prompt = ""
			recs[i].Messages = json.RawMessage(`[{"role":"user","content":[{"type":"image","source":{"type":"s3","uri":"` + uri + `"}},{"type":"text","text":"What colour?"}]}]`)
		}
		req.Provider, req.Mode = job.ProviderBedrock, job.ModeOnDemand
	case kBedrock:
		req.Provider, req.Mode = job.ProviderBedrock, job.ModeBatch
	case kOnDemand:
		req.Provider, req.Mode = job.ProviderBedrock, job.ModeOnDemand
	case kAnthropic:
		req.Provider, req.Mode = job.ProviderAnthropic, job.ModeBatch
	}
	j, err := l.Service.Batch.Submit(ctx, req)
	if j == nil {
		return "", err
	}
	return j.ID, err
}

func listSoakJobs(t *testing.T, ctx context.Context, l *local.Suite) []*job.Job {
	t.Helper()
	var all []*job.Job
	q := store.JobQuery{Limit: job.MaxPageSize}
	for {
		page, next, err := l.Service.Core.Store.ListJobs(ctx, soakOwner, q)
		if err != nil {
			t.Fatalf("list soak jobs: %v", err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		q.Cursor = next
	}
}

// fingerprint changes whenever a job is written.
func fingerprint(jobs []*job.Job) string {
	var b strings.Builder
	for _, j := range jobs {
		fmt.Fprintf(&b, "%s:%d ", j.ID, j.Version)
	}
	return b.String()
}

func allTerminal(jobs []*job.Job) bool {
	for _, j := range jobs {
		if !j.Status.Terminal() {
			return false
		}
	}
	return true
}

func allEnded(l *local.Suite) bool {
	for _, inv := range [][]sim.HeldJob{l.Sim.Inventory(), l.Anthropic.Inventory(), l.SageMaker.Sim.Inventory()} {
		for _, h := range inv {
			if !h.Ended {
				return false
			}
		}
	}
	return true
}

// soakReport is the outcome of a soak.
type soakReport struct {
	c *chaos
	// byKind[kind][status] counts jobs.
	byKind      map[string]map[job.Status]int
	submitted   int // records asked for
	stored      int // results stored
	lost        int
	double      int
	orphaned    int
	notTerminal int
	// Webhooks: jobs that asked for one, and those sent twice, not
	// delivered as documented, or wrong (unsigned, another body).
	webhookJobs, webhookDup, webhookLost, webhookBad int
	// File jobs that failed because their file changed, and that ran the replacement.
	fileRefused, fileSwapped int
	problems                 []string
}

func (r *soakReport) problem(what, detail string) {
	r.problems = append(r.problems, what+": "+detail)
}

// jobProblem adds what the faults did to the job.
func (r *soakReport) jobProblem(what, jobID, detail string) {
	r.problem(what, detail+"\n      faults on "+jobID+": "+r.c.history(jobID))
}

func kindOf(j *job.Job) string {
	switch {
	case j.RetryOf != "":
		return kRetry
	case j.Index != nil:
		return kEmbed
	case j.Model == soakVisionModel:
		return kMedia
	case j.Provider == job.ProviderSageMaker:
		return kSageMaker
	case j.Provider == job.ProviderAnthropic:
		return kAnthropic
	case j.Mode == job.ModeOnDemand:
		return kOnDemand
	}
	return kBedrock
}

// account checks every job against the plan and every simulator's inventory
// against the jobs' parts.
func account(t *testing.T, ctx context.Context, l *local.Suite, c *chaos, plan []soakItem, jobs []*job.Job) *soakReport {
	t.Helper()
	r := &soakReport{c: c, byKind: map[string]map[job.Status]int{}}
	planned := map[string]string{}
	for _, it := range plan {
		planned[soakName(it.k)] = it.kind
	}
	byName := map[string]*job.Job{}
	for _, j := range jobs {
		k := kindOf(j)
		if p := planned[j.Name]; (p == kFile || p == kUploads || p == kFolder) && k != kRetry {
			k = p
		}
		if r.byKind[k] == nil {
			r.byKind[k] = map[job.Status]int{}
		}
		r.byKind[k][j.Status]++
		if j.Name != "" {
			if prev, dup := byName[j.Name]; dup {
				r.problem("two jobs for one submit", fmt.Sprintf("%s is %s and %s", j.Name, prev.ID, j.ID))
			}
			byName[j.Name] = j
		}
	}
	// Batch and on-demand submits: each planned job exists (a killed submit
	// still stored it), with exactly its records.
	for _, it := range plan {
		if it.kind == kSageMaker {
			continue
		}
		j := byName[soakName(it.k)]
		if it.kind == kFile && j != nil {
			checkFileJob(t, ctx, l, r, j, it)
			continue
		}
		if (it.kind == kUploads || it.kind == kFolder) && j != nil {
			checkFilesJob(t, ctx, l, r, j, it)
			continue
		}
		r.submitted += it.records
		if j == nil {
			r.lost += it.records
			r.problem("job missing", fmt.Sprintf("%s (%s, %d records) was never stored", soakName(it.k), it.kind, it.records))
			continue
		}
		want := map[string]bool{}
		for i := range it.records {
			want[soakRecordID(it.k, i)] = true
		}
		checkJob(t, ctx, l, r, j, it.kind, want)
	}
	sage := 0
	for _, j := range jobs {
		if j.Provider == job.ProviderSageMaker {
			sage++
			r.submitted++
			checkJob(t, ctx, l, r, j, kSageMaker, map[string]bool{j.ID: true})
		}
	}
	if want := countKind(plan, kSageMaker); sage < want {
		// A SageMaker submit stores its job before it calls SageMaker, so every one is listed.
		r.lost += want - sage
		r.problem("SageMaker jobs missing", fmt.Sprintf("%d stored, %d submitted", sage, want))
	}
	checkRetries(t, ctx, l, r, jobs)
	checkInventories(l, r, jobs)
	checkDeadUnits(l, r)
	return r
}

// checkRetries: a retry holds exactly its parent's failed records; the merged
// view of the parent lists each of the parent's results once, the retried
// ones from the retry.
func checkRetries(t *testing.T, ctx context.Context, l *local.Suite, r *soakReport, jobs []*job.Job) {
	t.Helper()
	byID := map[string]*job.Job{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	for _, child := range jobs {
		parent := byID[child.RetryOf]
		if child.RetryOf == "" || parent == nil {
			continue
		}
		r.submitted += child.RecordCount
		want := map[string]bool{}
		recs := storedRecords(t, ctx, l, parent)
		stored := len(recs)
		for _, rec := range recs {
			if rec.Status == job.RecordFailed {
				want[rec.ID] = true
			}
		}
		checkJob(t, ctx, l, r, child, kRetry, want)
		seen := map[string]int{}
		fromChild := 0
		cursor := ""
		for {
			p, err := l.Service.Retry.LatestResults(ctx, soakOwner, service.ResultsQuery{JobID: parent.ID, Cursor: cursor, Limit: 97})
			if err != nil {
				t.Fatalf("merged results of %s: %v", parent.ID, err)
			}
			for _, rec := range p.Records {
				seen[rec.ID]++
				if rec.JobID == child.ID {
					fromChild++
				}
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		for id, n := range seen {
			if n > 1 {
				r.double += n - 1
				r.jobProblem("merged view lists a record twice", parent.ID, fmt.Sprintf("record %q ×%d", id, n))
			}
		}
		if len(seen) != stored || fromChild != child.Succeeded+child.Failed {
			r.jobProblem("merged view differs", parent.ID, fmt.Sprintf("%d records listed of %d stored; %d from retry %s, which stored %d",
				len(seen), stored, fromChild, child.ID, child.Succeeded+child.Failed))
		}
	}
}

// mediaFaults: an embedding job's index deleted while the job runs, and a
// media job's first image replaced after the submit checked it.
func mediaFaults(ctx context.Context, l *local.Suite, c *chaos, it soakItem, wg *sync.WaitGroup) {
	key := strconv.Itoa(it.k)
	after := time.Duration(1+c.roll("media-fault-at", key)*40) * time.Millisecond
	switch {
	case it.kind == kEmbed && c.roll("delete-index", key) < c.rate("delete_index"):
		wg.Add(1)
		time.AfterFunc(after, func() {
			defer wg.Done()
			c.count(fDeleteIndex)
			_ = l.Vectors.Index.DeleteIndex(ctx, index.Ref{Owner: soakOwner, Name: soakIndex(it.k)})
		})
	case it.kind == kMedia && c.roll("swap-media", key) < c.rate("swap_media"):
		// At once: the run has most likely not read it yet.
		c.count(fSwapMedia)
		_, _ = l.Blobs.Put(ctx, soakImage(l, it.k, 0), bytes.NewReader(soakPNG(9)), "image/png")
	}
}

func soakIndex(k int) string { return fmt.Sprintf("soak-%03d", k) }

func soakImage(l *local.Suite, k, i int) string {
	return batch.UploadArea(l.Service.Core.Bucket, soakOwner) + fmt.Sprintf("soak-%03d/img-%d.png", k, i)
}

// soakPNG is a w×w PNG of one colour.
func soakPNG(w int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, w))
	for i := range img.Pix {
		img.Pix[i] = byte(40 * w)
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func countKind(plan []soakItem, kind string) int {
	n := 0
	for _, it := range plan {
		if it.kind == kind {
			n++
		}
	}
	return n
}

// checkJob: the job is terminal; its stored results are exactly the records
// submitted (each once; a cancelled job may lack the ones that never ran);
// its counts equal its stored results.
func checkJob(t *testing.T, ctx context.Context, l *local.Suite, r *soakReport, j *job.Job, kind string, want map[string]bool) {
	t.Helper()
	tag := fmt.Sprintf("job %s %q (%s, %s)", j.ID, j.Name, kind, j.Status)
	if !j.Status.Terminal() {
		r.notTerminal++
		r.jobProblem("not terminal", j.ID, fmt.Sprintf("%s: part statuses %s", tag, partStatuses(j)))
	}
	seen := map[string]int{}
	succeeded, failed := 0, 0
	for _, rec := range storedRecords(t, ctx, l, j) {
		seen[rec.ID]++
		if rec.Status == job.RecordSucceeded {
			succeeded++
		} else {
			failed++
		}
	}
	r.stored += succeeded + failed
	for id, n := range seen {
		switch {
		case !want[id]:
			r.double++
			r.jobProblem("result for a record never submitted", j.ID, fmt.Sprintf("%s: record %q", tag, id))
		case n > 1:
			r.double += n - 1
			r.jobProblem("result stored twice", j.ID, fmt.Sprintf("%s: record %q ×%d", tag, id, n))
		}
	}
	missing := 0
	for id := range want {
		if seen[id] == 0 {
			missing++
		}
	}
	if missing > 0 && j.Status != job.StatusCancelled {
		r.lost += missing
		r.jobProblem("records without a result", j.ID, fmt.Sprintf("%s: %d of %d (error %q)", tag, missing, len(want), j.Error))
	}
	if !j.Status.Terminal() {
		return
	}
	// Counted once: the job's counts are its stored results.
	if j.Succeeded != succeeded || j.Failed != failed {
		over := (j.Succeeded + j.Failed) - (succeeded + failed)
		if over > 0 {
			r.double += over
		}
		r.jobProblem("counts differ from stored results", j.ID, fmt.Sprintf("%s: job says %d succeeded + %d failed, stored %d + %d", tag, j.Succeeded, j.Failed, succeeded, failed))
	}
}

// storedRecords are every result stored for j.
func storedRecords(t *testing.T, ctx context.Context, l *local.Suite, j *job.Job) []job.Record {
	t.Helper()
	var all []job.Record
	q := store.RecordQuery{Limit: job.MaxPageSize}
	for {
		recs, next, err := l.Service.Core.Store.ListRecords(ctx, j.RecordSet(), q)
		if err != nil {
			t.Fatalf("list results of %s: %v", j.ID, err)
		}
		all = append(all, recs...)
		if next == "" {
			return all
		}
		q.Cursor = next
	}
}

func partStatuses(j *job.Job) string {
	var s []string
	for _, p := range j.Parts {
		s = append(s, fmt.Sprintf("%d:%s/%s ref=%q", p.Index+1, p.Status, p.ProviderStatus, p.Ref))
	}
	return strings.Join(s, ", ")
}

// checkInventories: every provider job a simulator holds has ended, is the
// Ref of a part, and, when that part was cancelled before the provider
// ended its job, the service asked the provider to stop it.
func checkInventories(l *local.Suite, r *soakReport, jobs []*job.Job) {
	parts := map[string]job.Part{}
	owner := map[string]*job.Job{}
	for _, j := range jobs {
		for _, p := range j.Parts {
			if p.Ref != "" {
				parts[p.Ref] = p
				owner[p.Ref] = j
			}
		}
	}
	ids := map[string]*job.Job{}
	for _, j := range jobs {
		ids[j.ID] = j
	}
	orphan := func(sim string, h sim.HeldJob, why string) {
		r.orphaned++
		detail := fmt.Sprintf("%s %s %s (status %s): %s", sim, h.Ref, h.Name, h.Status, why)
		if how, ok := r.c.created.Load(h.Ref); ok {
			detail += "; " + how.(string)
		}
		jobID := h.Ref // SageMaker: the inference id is the job id
		if j := owner[h.Ref]; j != nil {
			jobID = j.ID
		} else if how, ok := r.c.created.Load(h.Ref); ok {
			jobID = strings.Fields(strings.TrimPrefix(how.(string), "created for job "))[0]
		}
		r.jobProblem("orphaned provider job", jobID, detail)
	}
	for _, inv := range []struct {
		name string
		held []sim.HeldJob
	}{{"Bedrock", l.Sim.Inventory()}, {"Anthropic", l.Anthropic.Inventory()}} {
		for _, h := range inv.held {
			p, ok := parts[h.Ref]
			switch {
			case !h.Ended:
				orphan(inv.name, h, "still running after every job ended")
			case !ok:
				orphan(inv.name, h, "no job part refers to it (created, never tracked: billed and never ingested)")
			case p.Status == job.StatusCancelled && !h.StopRequested && !stopAsked(r.c, h.Ref) && p.ProviderStatus != h.Status:
				orphan(inv.name, h, fmt.Sprintf("job %s part %d was cancelled (%s) but the service never asked the provider to stop its job, which ran to its end",
					owner[h.Ref].ID, p.Index+1, cmp.Or(p.ProviderStatus, "never reached the provider, by our record")))
			}
		}
	}
	for _, h := range l.SageMaker.Sim.Inventory() {
		j := ids[h.Ref]
		switch {
		case !h.Ended:
			orphan("SageMaker", h, "async inference still queued after every job ended")
		case j == nil:
			orphan("SageMaker", h, "no job for this inference id")
		}
	}
}

func stopAsked(c *chaos, ref string) bool {
	_, ok := c.stopped.Load(ref)
	return ok
}

func (r *soakReport) print(t *testing.T, seed uint64, jobs int, faults map[string]int, runtimeThrottles int64, took, submitting time.Duration) {
	faults[fRuntimeThrot] = int(runtimeThrottles)
	var b strings.Builder
	fmt.Fprintf(&b, "\nchaos soak, seed %d: %d jobs, %s (submits %s)\n\nFAULTS\n", seed, jobs, took.Round(100*time.Millisecond), submitting.Round(100*time.Millisecond))
	for _, f := range []string{fDup, fDelay, fDropProvider, fDropInternal, fThrottle, fBusy, fRuntimeThrot, fSageFail,
		fKillSubmit, fKillIngest, fKillOnDemand, fCancelInFlite, fCancelAfter, fRecon, fReconOverlap, fReconErr, fClockJump,
		fDeleteIndex, fSwapMedia, fRetry, fS3Throttle, fS3ReadErr, fSwapInput, fDeleteInput,
		fUnitDup, fUnitDelay, fUnitBefore, fUnitAfter, fUnitDead,
		fHook5xx, fHook429, fHookTimeout, fHookGone, fKillAnnounce, fRedeliver} {
		fmt.Fprintf(&b, "  %-62s %6d\n", f, faults[f])
	}
	statuses := []job.Status{job.StatusCompleted, job.StatusPartiallyCompleted, job.StatusFailed, job.StatusCancelled, job.StatusExpired}
	fmt.Fprintf(&b, "\nOUTCOMES (jobs by final status)\n  %-18s", "")
	for _, s := range statuses {
		fmt.Fprintf(&b, " %12s", s)
	}
	fmt.Fprintf(&b, " %12s %6s\n", "not terminal", "total")
	for _, k := range []string{kBedrock, kAnthropic, kOnDemand, kSageMaker, kEmbed, kMedia, kFile, kUploads, kFolder, kRetry} {
		fmt.Fprintf(&b, "  %-18s", k)
		total, term := 0, 0
		for _, s := range statuses {
			fmt.Fprintf(&b, " %12d", r.byKind[k][s])
			term += r.byKind[k][s]
		}
		for _, n := range r.byKind[k] {
			total += n
		}
		fmt.Fprintf(&b, " %12d %6d\n", total-term, total)
	}
	fmt.Fprintf(&b, "\nRECORDS\n  submitted %d, results stored %d\n  lost %d, double-counted %d, orphaned provider jobs %d, jobs not terminal %d\n",
		r.submitted, r.stored, r.lost, r.double, r.orphaned, r.notTerminal)
	fmt.Fprintf(&b, "\nFILES\n  %d failed as changed with nothing submitted, %d ran the replacement file\n", r.fileRefused, r.fileSwapped)
	fmt.Fprintf(&b, "\nWEBHOOKS\n  %d jobs with a webhook: %d sent twice, %d not delivered as documented, %d wrong\n",
		r.webhookJobs, r.webhookDup, r.webhookLost, r.webhookBad)
	if len(r.problems) > 0 {
		fmt.Fprintf(&b, "\nPROBLEMS (%d)\n", len(r.problems))
		for i, p := range r.problems {
			if i == 40 {
				fmt.Fprintf(&b, "  … %d more\n", len(r.problems)-i)
				break
			}
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	t.Log(b.String())
}

func TestSoakFaultRates(t *testing.T) {
	tests := []struct {
		spec, err string
		check     string
		want      float64
	}{
		{spec: "", check: "dup", want: soakRates["dup"]},
		{spec: "drop_internal=0, kill_submit=0.5", check: "kill_submit", want: 0.5},
		{spec: "drop_internal=0", check: "drop_internal", want: 0},
		{spec: "nope=0.1", err: `"nope=0.1": want name=rate with a name among`},
		{spec: "dup", err: `"dup": want name=rate`},
		{spec: "dup=2", err: `dup="2": want a rate from 0 to 1`},
		{spec: "dup=x", err: `dup="x": want a rate from 0 to 1`},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := soakFaultRates(tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), soakFaultsEnv) {
					t.Fatalf("error %v, want one with %q naming %s", err, tc.err, soakFaultsEnv)
				}
				return
			}
			if err != nil || got[tc.check] != tc.want {
				t.Fatalf("%s = %v (%v), want %v", tc.check, got[tc.check], err, tc.want)
			}
		})
	}
}

// The fault decisions depend on the seed and the key only, and the event
// key leaves out what differs between two deliveries of one event.
func TestSoakDecisionsAndEventKeys(t *testing.T) {
	a, b := newChaos(1, soakRates), newChaos(1, soakRates)
	if a.roll("bus", "k#1") != b.roll("bus", "k#1") {
		t.Error("one seed and key gave two decisions")
	}
	if a.roll("bus", "k#1") == newChaos(2, soakRates).roll("bus", "k#1") {
		t.Error("two seeds gave one decision")
	}
	bedrock := []byte(`{"version":"0","id":"x1","detail-type":"Batch Inference Job State Change","source":"aws.bedrock","time":"2026-01-01T00:00:00Z","detail":{"batchJobName":"mcpbatch-01jobid","batchJobArn":"arn:x","status":"InProgress"}}`)
	again := []byte(`{"version":"0","id":"x2","detail-type":"Batch Inference Job State Change","source":"aws.bedrock","time":"2026-01-01T00:00:09Z","detail":{"batchJobName":"mcpbatch-01jobid","batchJobArn":"arn:x","status":"InProgress"}}`)
	k1, internal := eventKey(bedrock)
	k2, _ := eventKey(again)
	if k1 != k2 || internal || !strings.Contains(k1, "status=InProgress") || eventJobID(bedrock) != "01jobid" {
		t.Errorf("Bedrock event: keys %q / %q, internal %v, job %q", k1, k2, internal, eventJobID(bedrock))
	}
	sns, err := simsagemaker.SNSEvent("arn:aws:sns:us-east-1:1:t", map[string]any{"eventName": "InferenceResult", "inferenceId": "01inf", "invocationStatus": "Completed"})
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := eventKey(sns); !strings.Contains(k, "inferenceId=01inf") || !strings.Contains(k, "invocationStatus=Completed") || eventJobID(sns) != "01inf" {
		t.Errorf("SageMaker notification: key %q, job %q", k, eventJobID(sns))
	}
	ready := []byte(`{"source":"mcpbatch","detail-type":"Job Output Ready","detail":{"jobId":"01ready","provider":"anthropic"}}`)
	if k, internal := eventKey(ready); !internal || !strings.Contains(k, "Job Output Ready") || eventJobID(ready) != "01ready" {
		t.Errorf("internal event: key %q internal %v job %q", k, internal, eventJobID(ready))
	}
}
