// Command memprobe ingests a generated output of a given size through the real
// pipeline (parser, batches, workers, checkpoints) and prints the process's
// peak RSS, to show that memory stays flat as outputs grow:
//
//	go run ./shared/ingest/internal/memprobe -mb 100
//	go run ./shared/ingest/internal/memprobe -mb 400
//
// With -moto it ingests the 50,000-record 106 MB file into moto_server's
// DynamoDB through the real store, next to moto's own BatchWriteItem ceiling
// measured in the same run (package ceiling), and prints both with the peak RSS:
//
//	go run ./shared/ingest/internal/memprobe -moto -writers 16
//
// The output is generated lazily while it is read, so nothing but the pipeline
// itself occupies memory.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/procstat"

	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/ingest/internal/ceiling"
	"github.com/mcpbatch/mcpbatch/shared/ingest/internal/ingesttest"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
)

func main() {
	mb := flag.Int("mb", 100, "size of the generated output in MB")
	lineBytes := flag.Int("line", 2048, "bytes per output line")
	latency := flag.Duration("latency", 0, "time each 25-record write takes")
	moto := flag.Bool("moto", false, "ingest into moto_server's DynamoDB and measure its BatchWriteItem ceiling in the same run")
	writers := flag.Int("writers", 16, "with -moto: ceiling writers and ingest workers")
	flag.Parse()
	if *moto {
		if err := runMoto(*writers, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "memprobe:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*mb, *lineBytes, *latency, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "memprobe:", err)
		os.Exit(1)
	}
}

func run(mb, lineBytes int, latency time.Duration, out io.Writer) error {
	spec := ingesttest.Spec{Records: mb << 20 / lineBytes, LineBytes: lineBytes, ErrorEvery: 50}
	in := &ingest.Ingester{
		Records:       writer{latency},
		Blobs:         ingesttest.Blobs{Spec: spec},
		Checkpoints:   ingest.SaveFunc(func(context.Context, string, job.Checkpoint) error { return nil }),
		ResultsPrefix: "s3://results/out",
		Log:           slog.New(slog.DiscardHandler),
	}
	j := &job.Job{ID: job.NewID(time.Now()), Shards: 20, InputOrder: true, ExpiresAt: time.Now().Add(24 * time.Hour)}
	t0 := time.Now()
	res, err := in.Ingest(context.Background(), j, []ingest.File{{Part: 0, URI: "s3://out/probe/records.jsonl.out"}}, ingesttest.Parse, ingesttest.Resolve)
	if err != nil {
		return err
	}
	if res.Succeeded+res.Failed != spec.Records {
		return fmt.Errorf("ingested %d records, want %d", res.Succeeded+res.Failed, spec.Records)
	}
	hwm, err := procstat.PeakRSS()
	if err != nil {
		return err
	}
	took := time.Since(t0)
	fmt.Fprintf(out, "output_mb=%d records=%d line_bytes=%d took=%s mb_per_s=%.0f peak_rss_mb=%.1f\n",
		spec.Size()>>20, spec.Records, lineBytes, took.Round(time.Millisecond),
		float64(spec.Size())/(1<<20)/took.Seconds(), float64(hwm)/(1<<20))
	return nil
}

type writer struct{ latency time.Duration }

func (w writer) PutRecords(ctx context.Context, _ job.RecordSet, _ []job.Record) error {
	if w.latency > 0 {
		time.Sleep(w.latency)
	}
	return ctx.Err()
}

func runMoto(writers int, out io.Writer) error {
	srv, err := motoserver.Start()
	if err != nil {
		return err
	}
	defer srv.Stop()
	ctx := context.Background()
	res, err := ceiling.Run(ctx, ceiling.Options{
		Client: ceiling.NewClient(srv.Config(), srv.Endpoint, writers), Table: "memprobe",
		Spec: ceiling.Spec, Writers: writers,
	})
	if err != nil {
		return err
	}
	hwm, err := procstat.PeakRSS()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s peak_rss_mb=%.1f\n", res, float64(hwm)/(1<<20))
	return nil
}
