// Package local wires the whole suite into one process for make dev and for
// tests: SQLite, a folder for objects, an in-process bus and the Bedrock
// simulator reached over HTTP by the real SDK client. It lives apart from
// package app so none of it is linked into the Lambda binaries.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkbedrock "github.com/aws/aws-sdk-go-v2/service/bedrock"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/mcpapp"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/bus"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/cost"
	"github.com/mcpbatch/mcpbatch/shared/handler"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/metrics"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockbatch"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/refresh"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// Objects is the object store the suite runs on: fsblob in make dev, s3blob
// in the AWS wiring; both can pin a version (validate reads an upload twice).
type Objects interface {
	blob.Store
	blob.Versioned
}

// Topic receives the notifications SNS would carry: the notifications file in
// make dev, SNS itself in the AWS wiring.
type Topic interface {
	Notify(ctx context.Context, topic, subject, message string) error
	NotifyOwner(ctx context.Context, topic, owner, subject, message string) error
}

// Adapters are the suite's storage and notification adapters. A nil field is
// make dev's: SQLite and a folder under Dir, the S3 Vectors simulator, the
// notifications file. Tests pass the AWS adapters (dynamostore, s3blob, S3
// Vectors, SNS on moto_server) so the same flows run on the deployed wiring;
// the providers' simulators are the same on both.
type Adapters struct {
	// Store is closed by Suite.Close when it is an io.Closer. A caller's store
	// keeps its own clock (Options.StoreNow applies only to SQLite).
	Store store.Store
	// Blobs must hold Bucket (the AWS wiring creates it).
	Blobs Objects
	// Vectors is the S3 Vectors API under the index adapter, and
	// VectorBucket its vector bucket (default VectorBucket), created on first use.
	Vectors      index.S3VectorsAPI
	VectorBucket string
	// Topic and TopicARN, the topic that job notifications and pipeline
	// reports go to (one topic, as config.EnvReportTopic is in AWS).
	Topic    Topic
	TopicARN string
	// Links signs create_upload and download links (nil: the suite's own
	// /local/uploads and /local/objects links); s3blob's are S3's own.
	Links Links
}

// Links signs upload and download links, as S3 presigned URLs do in AWS.
type Links = mcpapp.Links

// Options configure make dev.
type Options struct {
	// Dir holds the SQLite store and the object folder (default .mcpbatch).
	Dir string
	// StoreNow is the store's clock, which stamps UpdatedAt (nil: time.Now).
	// A test that moves the service's clock moves this one too, as in AWS
	// both read one time.
	StoreNow func() time.Time
	// StepDelay is the simulator's time between two job statuses.
	StepDelay time.Duration
	// FailEvery makes every Nth record fail in the simulator (0: none).
	FailEvery int
	// SchemaViolations is the share (0..1) of the simulators' structured
	// answers that break their schema, the first time a text is asked
	// (sim.Violations); one share for the Bedrock, runtime and Anthropic simulators.
	SchemaViolations float64
	// SlowRecords > 0 makes every simulated Bedrock job process that many
	// records per step while InProgress (a deadline's stop lands part way).
	SlowRecords int
	// Owner names the caller of a request (default: everyone is "local-dev").
	Owner mcpserver.OwnerFunc
	Log   *slog.Logger
	// Reports configures on-demand runs and report pipelines (reports.go).
	Reports ReportsOptions
	// Meter, when set, counts what AWS would bill the suite itself (make cost):
	// store, bucket and bus calls and the Lambda invocations events cause.
	Meter *cost.Meter
	// RecordsToday, with Meter, also counts the record writes and reads as
	// the per-record layout would bill them (cost.Store.Today).
	RecordsToday *cost.Meter
	// Models are Bedrock model ids allowed besides the local suite's own
	// (make cost prices Nova Micro).
	Models []string
	// ReplyTokens makes the Bedrock simulator's batch answers about this
	// many tokens long (simbedrock.BedrockSim.ReplyTokens; make cost).
	ReplyTokens int
	// WebhookBackoff overrides the wait between webhook attempts (tests; nil: notify's default).
	WebhookBackoff func(n int) time.Duration
	// AnthropicCountBusy makes the Anthropic simulator answer count_tokens
	// with 429 while it returns true (tests of the dry run's fallback).
	AnthropicCountBusy func() bool
	// Account is the simulated account's model table behind the control-plane
	// and Service Quotas simulators (nil: simbedrock.NewAccount()).
	Account *simbedrock.Account
	// PriceList are the Price List simulator's products (nil: simbedrock.DefaultPriceList()).
	PriceList []simbedrock.PriceProduct
	// Now is the services' clock (nil: time.Now); tests move it to reach a deadline.
	Now func() time.Time
	// AnthropicNow is the Anthropic simulator's clock (nil: time.Now). A test
	// that jumps the services' clock by hours (the soak) jumps it too, as real
	// time passes for both: left behind, the two would differ by more than the
	// skew the product allows for when it looks for a lost create's batch.
	AnthropicNow func() time.Time
	// Adapters replace make dev's store, objects, vectors and topic (zero: make dev's).
	Adapters Adapters
	// Fanout configures the validation queue of jobs over many files (fanout.go).
	Fanout FanoutOptions
}

// Suite is the whole suite in one process: the MCP handler, the event router,
// the stores and the Bedrock simulator reached over HTTP by the real SDK client.
type Suite struct {
	// Service is the service graph, as the Lambdas build it.
	Service *graph.Graph
	Router  *handler.Router
	Bus     *bus.Local
	Sim     *simbedrock.BedrockSim
	SimURL  string
	MCP     *mcpserver.Server
	// Uploads serves create_upload links; call SetBaseURL once listening.
	Uploads *Uploads
	Reports *Reports
	Blobs   Objects
	store   store.Store
	owner   mcpserver.OwnerFunc
	log     *slog.Logger

	// SageMaker is the SageMaker runtime simulator behind the SageMaker tools.
	SageMaker *SageMakerLocal
	// Vectors is the S3 Vectors simulator and the index behind it (vectors.go).
	Vectors *Vectors
	// Anthropic is the Message Batches simulator (see anthropic.go).
	Anthropic    *simanthropic.AnthropicSim
	AnthropicURL string
	// Announce delivers completion webhooks and notifications (announce.go).
	Announce *announce.Service
	// MetricsFile receives the EMF metric lines the Lambdas would print.
	MetricsFile *os.File
	// Account, Quotas and Models: the simulated account's model facts, the
	// Service Quotas simulator, and the refresh that reads them (account.go).
	Account   *simbedrock.Account
	Quotas    *simbedrock.QuotasSim
	QuotasURL string
	Models    *refresh.Service
	// PriceList is the Price List simulator the refresh reads prices from.
	PriceList    *simbedrock.PriceListSim
	PriceListURL string
	// Units is the validation queue of jobs over many files (fanout.go).
	Units *UnitQueue
	// sims are the simulators started, in order (closed in reverse).
	sims []sim.Simulator
}

// started records a listening simulator for Close.
func (l *Suite) started(s sim.Simulator) { l.sims = append(l.sims, s) }

// Bucket is the bucket URI local jobs live under (a folder of Dir).
const Bucket = "s3://mcpbatch-local"

// New builds the local suite and starts the simulators on loopback ports.
// Its steps run in this order because each takes what the one before made:
//
//  1. the bus, then the Bedrock simulator over the simulated account
//     (account), which the Service Quotas simulator reads too (startQuotas);
//  2. the providers' and models' simulators (startAnthropic, startSageMaker,
//     startRuntime, startVectors), each adding its clients to the graph's
//     deps, any order among them; then app.Catalog, which lists the models of
//     the providers added, and graph.New over the deps;
//  3. addReports (the runner submits through the graph, reads sources from
//     the objects, and keeps the runtime simulator startRuntime made), then
//     addAnnounce (it notifies through addReports' notifier);
//  4. the MCP server (mcpapp.New, the mcp Lambda's constructor) over the
//     graph and those parts, the validation queue (addFanout, before any
//     validation can run), and the event routes (routeEvents, the route
//     table) to the handlers over them;
//  5. wireCorpus (corpus pipelines delete from startVectors' index) and
//     startModels last: its cold-start refresh writes into the graph's catalog.
func New(ctx context.Context, o Options) (*Suite, error) {
	if o.Dir == "" {
		o.Dir = ".mcpbatch"
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Owner == nil {
		o.Owner = func(*http.Request) (string, error) { return "local-dev", nil }
	}
	// The folder holds the metrics file and secrets whatever the adapters.
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("state folder: %w", err)
	}
	st, blobs, err := openAdapters(o)
	if err != nil {
		return nil, err
	}
	l := &Suite{store: st, owner: o.Owner, log: o.Log}
	l.Bus = &bus.Local{Source: config.EventSource, Account: sim.DefaultAccount, Region: sim.DefaultRegion, Log: o.Log,
		Deliver: func(ctx context.Context, ev []byte) error {
			if o.Meter != nil {
				return l.route(ctx, ev, o.Meter)
			}
			return l.Router.Route(ctx, ev)
		}}

	l.Sim = simbedrock.NewBedrockSim(blobs, func(ctx context.Context, ev []byte) { l.Bus.Send(ev) })
	violations := &sim.Violations{Rate: o.SchemaViolations}
	l.Sim.Violations = violations
	l.Sim.StepDelay = o.StepDelay
	l.Sim.FailEvery = o.FailEvery
	l.Sim.ReplyTokens = o.ReplyTokens
	if o.SlowRecords > 0 {
		l.Sim.SlowJob = func(string) int { return o.SlowRecords }
	}
	l.Sim.Log = o.Log
	l.Sim.Models = l.account(o)
	if l.SimURL, err = l.Sim.Listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	l.started(l.Sim)
	client := sdkbedrock.NewFromConfig(aws.Config{
		Region:      sim.DefaultRegion,
		Credentials: credentials.NewStaticCredentialsProvider("simulated", "simulated", ""),
		HTTPClient:  sim.HTTPClient(),
	}, func(opts *sdkbedrock.Options) { opts.BaseEndpoint = aws.String(l.SimURL) })
	d := graph.Deps{
		Store: st, Blobs: blobs, Bus: l.Bus, Log: o.Log, Bucket: Bucket, JobPrefix: config.DefaultJobPrefix, Now: o.Now,
		Providers: []service.BatchProvider{&bedrockbatch.Provider{Client: bedrock.New(client, o.Log),
			RoleARN: fmt.Sprintf("arn:aws:iam::%s:role/mcpbatch-local-bedrock", sim.DefaultAccount), ModelIDs: append(localModels(l.Account), o.Models...)}},
	}
	if o.Meter != nil {
		d.Store = &cost.Store{Store: st, M: o.Meter, Today: o.RecordsToday}
		d.Blobs = meteredBlobs{Objects: blobs, m: o.Meter}
	}
	// The same settings the Lambdas read; the simulators stand in for the clients.
	if err := app.Settings(&d); err != nil {
		return nil, err
	}
	if err := l.startQuotas(o); err != nil {
		return nil, err
	}
	if err := l.startAnthropic(o, blobs, &d); err != nil {
		return nil, err
	}
	if err := l.startSageMaker(o, blobs, &d); err != nil {
		return nil, err
	}
	if err := l.startRuntime(o, &d); err != nil {
		return nil, err
	}
	if err := l.startVectors(ctx, o, st, blobs, &d); err != nil {
		return nil, err
	}
	if err := app.Catalog(&d, sim.DefaultRegion); err != nil {
		return nil, err
	}
	// The EMF lines the Lambdas print go to a file here (metrics.emf.jsonl).
	if l.MetricsFile, err = os.OpenFile(filepath.Join(o.Dir, "metrics.emf.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return nil, fmt.Errorf("open metrics file: %w", err)
	}
	d.Metrics = &metrics.Emitter{W: l.MetricsFile}
	l.Service = graph.New(d)
	g := l.Service
	l.Router = &handler.Router{SageMaker: &handler.SageMakerEvents{Svc: g.SageMaker, Log: o.Log}}
	l.Uploads = newUploads(blobs)
	l.Blobs = blobs
	if err := l.addReports(o); err != nil {
		l.Sim.Close()
		return nil, err
	}
	if err := l.addAnnounce(o); err != nil {
		l.Sim.Close()
		return nil, err
	}
	var links Links = l.Uploads
	if o.Adapters.Links != nil {
		links = o.Adapters.Links
	}
	l.MCP = mcpapp.New(g, mcpapp.Parts{Links: links, Reports: l.Reports.Runner, Notify: l.Announce, Indexes: l.vectorTools(d), Log: o.Log})
	l.addFanout(o)
	if err := l.routeEvents(o); err != nil {
		l.Sim.Close()
		return nil, err
	}
	l.wireCorpus()
	l.startModels(ctx)
	return l, nil
}

// Handler serves /mcp, /console and /local/events.
func (l *Suite) Handler() http.Handler {
	mux := http.NewServeMux()
	h := l.MCP.Handler(l.owner)
	mux.Handle("/mcp", h)
	// The web console's static files; the page calls /mcp with the key it asks for.
	mux.Handle("/console", h)
	mux.Handle("/console/", h)
	mux.Handle("POST /local/events", guardLocalEvents(l.owner, http.HandlerFunc(l.postEvent)))
	mux.Handle("PUT /local/uploads", l.Uploads)
	mux.HandleFunc("GET /local/objects", l.Uploads.ServeGet)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

// postEvent replays an event body exactly as AWS delivers it through the handler
// a Lambda would run. It answers once the handler has finished.
func (l *Suite) postEvent(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	err = l.Router.Route(r.Context(), body)
	switch {
	case errors.Is(err, handler.ErrUnroutable):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case err != nil:
		l.log.Error("replayed event failed", "error", err)
		http.Error(w, "handler failed: "+err.Error(), http.StatusInternalServerError)
	default:
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "handled\n")
	}
}

// Close stops the simulators, drains the bus and closes the store.
func (l *Suite) Close() error {
	if l.Units != nil {
		l.Units.close()
	}
	var err error
	for i := len(l.sims) - 1; i >= 0; i-- { // the last started first
		err = errors.Join(err, l.sims[i].Close())
	}
	l.Bus.Wait()
	if l.MetricsFile != nil {
		err = errors.Join(err, l.MetricsFile.Close())
	}
	if c, ok := l.store.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}

// openAdapters opens make dev's store and object folder under o.Dir, unless
// o.Adapters gives them.
func openAdapters(o Options) (store.Store, Objects, error) {
	st, blobs := o.Adapters.Store, o.Adapters.Blobs
	if st == nil {
		var storeOpts []localstore.Option
		if o.StoreNow != nil {
			storeOpts = append(storeOpts, localstore.WithNow(o.StoreNow))
		}
		ls, err := localstore.Open(filepath.Join(o.Dir, "mcpbatch.db"), storeOpts...)
		if err != nil {
			return nil, nil, fmt.Errorf("open local store: %w", err)
		}
		st = ls
	}
	if blobs == nil {
		fs, err := fsblob.New(filepath.Join(o.Dir, "objects"))
		if err != nil {
			return nil, nil, fmt.Errorf("open local objects: %w", err)
		}
		blobs = fs
	}
	return st, blobs, nil
}
