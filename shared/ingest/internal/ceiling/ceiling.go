// Package ceiling measures ingest against a DynamoDB emulator (moto_server)
// next to that emulator's own BatchWriteItem ceiling, in the same run: the
// ceiling is what W writers sending ready-made 25-item batches of the same
// items get through; ingest is the real pipeline (reading, parsing, encoding,
// dynamostore.PutRecords, checkpoints on the job item) over a generated file,
// once per record layout (an item per record, then packed pages).
// The ratio says how much of the emulator the pipeline uses; the emulator, not
// AWS, is the bottleneck here, so only the ratio carries over.
//
// The ceiling runs before and after the ingest and is their mean, so drift
// on a shared machine hits both sides.
package ceiling

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/cost"
	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/ingest/internal/ingesttest"
	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

// Spec is the file the issue measures on: 50,000 records, 106 MB.
var Spec = ingesttest.Spec{Records: 50_000, LineBytes: 2120, ErrorEvery: 50}

// Options of one measurement.
type Options struct {
	Client  *dynamodb.Client
	Table   string // created when absent
	Spec    ingesttest.Spec
	Writers int // writers of the ceiling and ingest workers alike
}

// Result is one measurement.
type Result struct {
	Records       int
	Bytes         int64
	CeilingBefore float64 // records/s
	CeilingAfter  float64
	Writers       int
	// Layouts are the ingests of the same file, one per record layout.
	Layouts []Layout
}

// Layout is one ingest of the file into a record layout.
type Layout struct {
	Name            string  // "per-record" or "packed"
	Ingest          float64 // records/s
	IngestTook      time.Duration
	BatchWriteCalls int64
	// WriteUnits are the DynamoDB write units the ingest's BatchWriteItem
	// calls bill (each item's size in 1 KB units, rounded up; a delete is one).
	WriteUnits float64
	// PeakRSS is the process's peak resident set during this ingest alone.
	PeakRSS int64
}

// Ceiling is the mean of the two ceiling runs.
func (r Result) Ceiling() float64 { return (r.CeilingBefore + r.CeilingAfter) / 2 }

// Ratio is an ingest's share of the ceiling.
func (r Result) Ratio(l Layout) float64 { return l.Ingest / r.Ceiling() }

func (r Result) String() string {
	s := fmt.Sprintf("records=%d file_mb=%.0f writers=%d ceiling_rps=%.0f (before %.0f, after %.0f)",
		r.Records, float64(r.Bytes)/1e6, r.Writers, r.Ceiling(), r.CeilingBefore, r.CeilingAfter)
	for _, l := range r.Layouts {
		s += fmt.Sprintf("\n  layout=%s ingest_rps=%.0f ingest_took=%s ratio=%.0f%% batch_write_calls=%d write_units_per_record=%.3f peak_rss_mb=%.1f",
			l.Name, l.Ingest, l.IngestTook.Round(time.Millisecond), 100*r.Ratio(l), l.BatchWriteCalls, l.WriteUnits/float64(r.Records), float64(l.PeakRSS)/(1<<20))
	}
	if len(r.Layouts) == 2 && r.Layouts[0].Ingest > 0 {
		s += fmt.Sprintf("\n  packed/per-record: %.2fx records/s, %.2fx write units", r.Layouts[1].Ingest/r.Layouts[0].Ingest, r.Layouts[1].WriteUnits/r.Layouts[0].WriteUnits)
	}
	return s
}

// Run measures the ceiling, the ingest of the file in each layout
// (per-record, then packed), and the ceiling again.
func Run(ctx context.Context, o Options) (Result, error) {
	if err := dynamostore.CreateTable(ctx, o.Client, o.Table); err != nil {
		return Result{}, fmt.Errorf("create table: %w", err)
	}
	ring, err := sampleBatches(ctx, o.Spec, o.Table)
	if err != nil {
		return Result{}, err
	}
	res := Result{Records: o.Spec.Records, Bytes: o.Spec.Size(), Writers: o.Writers}
	if res.CeilingBefore, err = ceiling(ctx, o, ring, "c1"); err != nil {
		return res, err
	}
	for _, packed := range []bool{false, true} {
		l, err := ingestFile(ctx, o, packed)
		if err != nil {
			return res, err
		}
		res.Layouts = append(res.Layouts, l)
	}
	if res.CeilingAfter, err = ceiling(ctx, o, ring, "c2"); err != nil {
		return res, err
	}
	return res, nil
}

// ingestFile ingests the file into a new job of the layout.
func ingestFile(ctx context.Context, o Options, packed bool) (Layout, error) {
	l := Layout{Name: "per-record"}
	if packed {
		l.Name = "packed"
	}
	calls := &counting{Client: o.Client}
	st := dynamostore.New(calls, o.Table)
	j := &job.Job{ID: job.NewID(time.Now()), Owner: "bench", Shards: 20, InputOrder: true, PackedRecords: packed, Status: job.StatusIngesting, ExpiresAt: time.Now().Add(24 * time.Hour)}
	if err := st.CreateJob(ctx, j); err != nil {
		return l, fmt.Errorf("create job: %w", err)
	}
	in := &ingest.Ingester{
		Records: st,
		Blobs:   ingesttest.Blobs{Spec: o.Spec},
		Checkpoints: ingest.SaveFunc(func(ctx context.Context, id string, cp job.Checkpoint) error {
			_, err := st.UpdateJob(ctx, id, func(j *job.Job) error { j.Checkpoint = &cp; return nil })
			return err
		}),
		ResultsPrefix: "s3://results/out",
		Workers:       o.Writers,
		Log:           slog.New(slog.DiscardHandler),
	}
	// What the ceiling and the other ingest left behind does not count.
	debug.FreeOSMemory()
	if err := procstat.ResetPeakRSS(); err != nil {
		return l, err
	}
	t0 := time.Now()
	r, err := in.Ingest(ctx, j, []ingest.File{{Part: 0, URI: "s3://out/ceiling/records.jsonl.out"}}, ingesttest.Parse, ingesttest.Resolve)
	if err != nil {
		return l, fmt.Errorf("%s: %w", l.Name, err)
	}
	l.IngestTook = time.Since(t0)
	if l.PeakRSS, err = procstat.PeakRSS(); err != nil {
		return l, err
	}
	if r.Succeeded+r.Failed != o.Spec.Records {
		return l, fmt.Errorf("%s: ingested %d records, want %d", l.Name, r.Succeeded+r.Failed, o.Spec.Records)
	}
	l.Ingest = float64(o.Spec.Records) / l.IngestTook.Seconds()
	l.BatchWriteCalls = calls.batches.Load()
	l.WriteUnits = float64(calls.units.Load())
	return l, nil
}

// sampleBatches encodes the first records of the file exactly as ingest
// would (dynamostore.PutRecords through a capturing client): the ceiling
// writes items of the same shape and size. A ring of them keeps memory small.
func sampleBatches(ctx context.Context, spec ingesttest.Spec, table string) ([][]types.WriteRequest, error) {
	const ringRecords = 2_000
	c := &capture{}
	st := dynamostore.New(c, table)
	gen := ingesttest.NewGenerator(ingesttest.Spec{Records: min(ringRecords, spec.Records), LineBytes: spec.LineBytes, ErrorEvery: spec.ErrorEvery})
	data, err := io.ReadAll(gen)
	if err != nil {
		return nil, err
	}
	var recs []job.Record
	for line := range strings.Lines(string(data)) {
		rec, err := ingesttest.Parse([]byte(line))
		if err != nil {
			return nil, err
		}
		rec.Ordinal = len(recs)
		recs = append(recs, rec)
	}
	if err := st.PutRecords(ctx, job.RecordSet{JobID: "sample", Shards: 20, ByOrdinal: true}, recs); err != nil {
		return nil, err
	}
	return c.batches, nil
}

// ceiling sends spec.Records items in 25-item BatchWriteItem calls from
// o.Writers goroutines, as fast as the emulator takes them; keys are fresh
// per run (prefix) so every write is an insert, as in ingest.
func ceiling(ctx context.Context, o Options, ring [][]types.WriteRequest, prefix string) (float64, error) {
	batches := (o.Spec.Records + 24) / 25
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.Writers)
	t0 := time.Now()
	for range o.Writers {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= batches {
					return
				}
				src := ring[n%len(ring)]
				reqs := make([]types.WriteRequest, len(src))
				for i, w := range src {
					item := make(map[string]types.AttributeValue, len(w.PutRequest.Item))
					for k, v := range w.PutRequest.Item {
						item[k] = v
					}
					pk := item["PK"].(*types.AttributeValueMemberS).Value
					item["PK"] = &types.AttributeValueMemberS{Value: prefix + pk}
					item["SK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("REC#%s-%d-%d", prefix, n, i)}
					reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
				}
				for len(reqs) > 0 {
					out, err := o.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{o.Table: reqs}})
					if err != nil {
						errs <- err
						return
					}
					reqs = out.UnprocessedItems[o.Table]
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	close(errs)
	if err := <-errs; err != nil {
		return 0, fmt.Errorf("ceiling: %w", err)
	}
	return float64(batches*25) / took.Seconds(), nil
}

// capture keeps the BatchWriteItem requests instead of sending them.
type capture struct {
	dynamostore.Client
	batches [][]types.WriteRequest
}

func (c *capture) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	for _, reqs := range in.RequestItems {
		c.batches = append(c.batches, reqs)
	}
	return &dynamodb.BatchWriteItemOutput{}, nil
}

// counting counts the ingest's BatchWriteItem calls and the write units
// of the items they write.
type counting struct {
	*dynamodb.Client
	batches atomic.Int64
	units   atomic.Int64
}

func (c *counting) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opt ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.batches.Add(1)
	out, err := c.Client.BatchWriteItem(ctx, in, opt...)
	if err != nil {
		return out, err
	}
	// Unprocessed items are counted when they are written.
	for _, reqs := range in.RequestItems {
		c.units.Add(units(reqs))
	}
	for _, reqs := range out.UnprocessedItems {
		c.units.Add(-units(reqs))
	}
	return out, nil
}

func units(reqs []types.WriteRequest) int64 {
	n := 0.0
	for _, w := range reqs {
		if w.PutRequest != nil {
			n += cost.WriteUnits(dynamostore.ItemSize(w.PutRequest.Item))
		} else {
			n += cost.WriteUnits(0) // a delete bills one unit
		}
	}
	return int64(n)
}

// NewClient is a DynamoDB client for endpoint with test credentials and
// enough idle connections for every writer.
func NewClient(cfg aws.Config, endpoint string, writers int) *dynamodb.Client {
	httpc := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.MaxIdleConnsPerHost = writers })
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.HTTPClient = httpc
		o.RetryMaxAttempts = 10
	})
}
