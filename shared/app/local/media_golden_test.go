package local_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

var update = flag.Bool("update", false, "rewrite golden files")

// firstInputLine is the first line of a job's first provider input file, as
// the product wrote it.
func (s *suite) firstInputLine(jobID string) string {
	s.t.Helper()
	rc, err := s.l.Blobs.Open(context.Background(), blob.Join(local.Bucket, "input", jobID, "part-1", "records.jsonl"), 0)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 64<<20)
	if !sc.Scan() {
		s.t.Fatalf("job %s: empty input", jobID)
	}
	return sc.Text() + "\n"
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the product's body (run with -update to accept):\ngot  %.600s\nwant %.600s", name, got, want)
	}
}

// TestMediaBodiesGolden: the Bedrock batch input line and the Anthropic batch
// request the product writes for a record with an inline image, an uploaded
// one (rendered inline from s3://) and, for Anthropic, a PDF.
func TestMediaBodiesGolden(t *testing.T) {
	s := newCleanSuite(t)
	s.l.Anthropic.ErrorEvery = 0
	cs := s.client("alice")
	inline := pngOf(t, 4, 3, false)
	uri := upload(t, cs, "image/png", pngOf(t, 5, 2, false))
	pdf := upload(t, cs, "application/pdf", []byte(onePagePDF))

	recs := make([]map[string]any, 100)
	for i := range recs {
		recs[i] = imageRecord(fmt.Sprintf("g-%03d", i), b64Image("image/png", inline), s3Image(uri))
	}
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": sonnet45, "records": recs, "mode": "batch", "max_tokens": 200})
	golden(t, "bedrock-batch-line.golden.jsonl", s.firstInputLine(h.JobID))

	doc := map[string]any{"type": "document", "title": "Invoice", "source": map[string]any{"type": "s3", "uri": pdf}}
	arecs := []map[string]any{imageRecord("a-0", b64Image("image/png", inline), s3Image(uri), doc)}
	h = call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": "claude-sonnet-4-6", "provider": "anthropic", "records": arecs, "max_tokens": 200})
	golden(t, "anthropic-request.golden.jsonl", s.firstInputLine(h.JobID))
	s.l.Anthropic.Step()
	s.reconcile()
	j := s.finish(cs, h.JobID)
	res := allResults(t, cs, h.JobID, "", 10)
	if j.Status != "completed" || len(res) != 1 || !strings.Contains(res[0].Output, "image/png 4x3") || !strings.Contains(res[0].Output, "image/png 5x2") || !strings.Contains(res[0].Output, "application/pdf 1 pages") {
		t.Fatalf("anthropic job %+v: %+v", j, res)
	}
}

// onePagePDF is a minimal valid one-page PDF.
const onePagePDF = "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
	"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
