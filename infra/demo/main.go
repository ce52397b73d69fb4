// Command demo runs one report pipeline end to end, offline, for `make demo`: it
// generates the deterministic sample corpus, ticks the support-triage pipeline as
// its schedule would, lets the Bedrock simulators run the job, and prints where
// the report was written.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/pipeline/corpus"
)

func main() {
	dir := flag.String("dir", ".mcpbatch/demo", "demo folder (recreated on every run)")
	name := flag.String("pipeline", "support-triage", "pipeline to run")
	date := flag.String("date", "2026-11-27", "run date")
	file := flag.String("pipelines", config.DefaultPipelinesFile, "pipelines file")
	flag.Parse()
	if err := run(*dir, *name, *date, *file, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(dir, name, date, file string, out io.Writer) error {
	ctx := context.Background()
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	cfg, err := pipeline.Load(file)
	if err != nil {
		return err
	}
	p, err := cfg.Find(name)
	if err != nil {
		return err
	}
	src := filepath.Join(dir, "sources", name)
	if _, err := corpus.Generate(src, corpus.Demo); err != nil {
		return fmt.Errorf("generate corpus: %w", err)
	}
	p.Source.LocalDir = src
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	// StepDelay 0: the simulator moves only when told, so the demo is deterministic.
	l, err := local.New(ctx, local.Options{Dir: filepath.Join(dir, "state"), FailEvery: 10, Log: log,
		Reports: local.ReportsOptions{Pipelines: cfg}})
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Fprintf(out, "demo: %s over %s (generated sample corpus)\n", name, src)
	fmt.Fprintf(out, "demo: Bedrock batch and runtime are SIMULATED (test doubles; answers are marked [simulated])\n")
	ri, err := l.Reports.Runner.Tick(ctx, pipeline.TickRequest{Pipeline: name, Date: date})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "demo: job %s submitted (%s, %d records, %d documents skipped)\n", ri.JobID, ri.Mode, ri.Records, ri.Skipped)
	for range 3 {
		if err := l.Sim.Settle(ctx); err != nil {
			return err
		}
		l.Bus.Wait()
	}
	v, err := l.Reports.Runner.GetReport(ctx, name, date, 0)
	if err != nil {
		return err
	}
	if v.Summary == nil {
		return fmt.Errorf("job %s ended %s without a report", ri.JobID, v.Run.JobStatus)
	}
	s := v.Summary
	fmt.Fprintf(out, "demo: %s: %d records, %d succeeded, %d failed; cost estimate $%.4f\n", s.Status, s.Records, s.Succeeded, s.Failed, s.CostUSD)
	for _, c := range s.Categories {
		fmt.Fprintf(out, "  %-10s %d\n", c.Name, c.Count)
	}
	for _, n := range []string{"report.html", "report.md", "report.json"} {
		fmt.Fprintf(out, "report: %s\n", strings.TrimPrefix(v.Links[n], "file://"))
	}
	fmt.Fprintf(out, "notification: %s\n", filepath.Join(dir, "state", "notifications.jsonl"))
	return nil
}
