package local_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

const corpusPipeline = `{"pipelines":[{"name":"kb","kind":"corpus","schedule":"cron(0 2 * * ? *)",
 "source":{"s3_prefix":"s3://{bucket}/sources/kb/"},"model":"amazon.titan-embed-text-v2:0",
 "corpus":{"index":"kb","dimensions":256,"chunk_chars":400,"overlap_chars":50}}]}`

func writeDoc(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCorpusPipelineIncremental: the first run embeds every document in
// chunks; a rerun with nothing changed embeds nothing; changing one document
// re-embeds only it; deleting one removes its vectors.
func TestCorpusPipelineIncremental(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "kb")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Alpine glaciers retreat as summers warm and meltwater feeds the rivers below. ", 20) // ~1,580 chars: 5 chunks
	writeDoc(t, src, "glaciers.txt", long)
	writeDoc(t, src, "harbours.md", "# Harbours\nContainer cranes unload freighters at the harbour quay every night.")
	writeDoc(t, src, "orchards.txt", "Apple orchards bloom in spring; bees pollinate the blossoms.")
	cfg, err := pipeline.Parse(strings.NewReader(corpusPipeline))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pipelines[0].Source.LocalDir = src
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	l, err := local.New(context.Background(), local.Options{Dir: filepath.Join(dir, "state"), Log: log,
		Reports: local.ReportsOptions{Pipelines: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ctx := context.Background()
	ref := index.Ref{Owner: pipeline.Owner("kb"), Name: "kb"}
	run := func(date string) pipeline.RunInfo {
		t.Helper()
		ri, err := l.Reports.Runner.Tick(ctx, pipeline.TickRequest{Pipeline: "kb", Date: date})
		if err != nil {
			t.Fatalf("tick %s: %v", date, err)
		}
		if err := l.Sim.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		l.Bus.Wait()
		return ri
	}
	records := func(ri pipeline.RunInfo) map[string]bool {
		t.Helper()
		j, err := l.Service.Core.Store.GetJob(ctx, ri.JobID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != "completed" {
			t.Fatalf("job %s is %s", j.ID, j.Status)
		}
		recs, _, err := l.Service.Core.Store.ListRecords(ctx, j.RecordSet(), store.RecordQuery{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		docs := map[string]bool{}
		for _, r := range recs {
			docs[r.ID[:len(r.ID)-5]] = true // the document part of the chunk key
		}
		return docs
	}
	count := func() int64 {
		info, err := l.Vectors.Index.Describe(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		return info.Vectors
	}

	first := run("2026-11-01")
	if !first.Created || first.Records != 7 || len(records(first)) != 3 {
		t.Fatalf("first run = %+v, want 7 chunks of 3 documents", first)
	}
	if n := count(); n != 7 {
		t.Fatalf("index holds %d vectors, want 7", n)
	}

	if again := run("2026-11-02"); again.JobID != "" {
		t.Fatalf("nothing changed, but run = %+v", again)
	}

	writeDoc(t, src, "orchards.txt", "Pear orchards bloom later; frost can spoil the blossoms.")
	changed := run("2026-11-03")
	if got := records(changed); changed.Records != 1 || len(got) != 1 || !got[pipeline.RecordID("orchards.txt")] {
		t.Fatalf("after changing one document: run %+v embedded %v, want only orchards.txt", changed, got)
	}
	if n := count(); n != 7 {
		t.Fatalf("index holds %d vectors, want 7", n)
	}

	if err := os.Remove(filepath.Join(src, "glaciers.txt")); err != nil {
		t.Fatal(err)
	}
	if del := run("2026-11-04"); del.JobID != "" {
		t.Fatalf("a deletion needs no job: %+v", del)
	}
	if n := count(); n != 2 {
		t.Fatalf("after deleting the 5-chunk document the index holds %d vectors, want 2", n)
	}
	got, err := l.Vectors.Index.Get(ctx, ref, []string{pipeline.ChunkKey("glaciers.txt", 0), pipeline.ChunkKey("harbours.md", 0)})
	if err != nil || len(got) != 1 || got[0].Key != pipeline.ChunkKey("harbours.md", 0) {
		t.Fatalf("Get after delete = %v, %v", got, err)
	}
}
