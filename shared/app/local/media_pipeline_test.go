package local_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// TestPipelineOverImagesAndPDFs: a documents folder with images, a PDF, a
// text file and a broken PNG: each usable file becomes a record (the images
// and the PDF as content blocks the model is shown), the broken one is
// skipped with the checker's reason, and the report lists them all.
func TestPipelineOverImagesAndPDFs(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "docs")
	os.MkdirAll(src, 0o755)
	img := image.NewNRGBA(image.Rect(0, 0, 24, 18))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	img.SetNRGBA(0, 0, color.NRGBA{1, 2, 3, 255})
	var jb bytes.Buffer
	jpeg.Encode(&jb, img, nil)
	png := pngOf(t, 40, 30, false)
	files := map[string][]byte{
		"receipt-01.png": png,
		"receipt-02.jpg": jb.Bytes(),
		"invoice.pdf":    []byte(onePagePDF),
		"note.txt":       []byte("Paid in cash, no receipt."),
		"broken.png":     png[:len(png)-30],
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf := `{"pipelines":[{"name":"receipts","schedule":"cron(0 2 * * ? *)","time_zone":"UTC",
		"source":{"s3_prefix":"s3://{bucket}/sources/receipts/","local_dir":"` + src + `"},
		"model":"anthropic.claude-sonnet-4-5-20250929-v1:0","mode":"on_demand",
		"prompt":"Read {{.Name}} ({{.Kind}}) and give its total. {{.Text}}","output":{"kind":"text"},"max_tokens":300,"ttl_days":7,"title":"Receipts"}]}`
	cfg, err := pipeline.Parse(strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	l, err := local.New(context.Background(), local.Options{Dir: filepath.Join(dir, "state"), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Reports: local.ReportsOptions{Pipelines: cfg, Concurrency: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ctx := context.Background()
	ri, err := l.Reports.Runner.Tick(ctx, pipeline.TickRequest{Pipeline: "receipts", Date: runDate})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l.Bus.Wait()
	}
	j, err := l.Service.Batch.Store.GetJob(ctx, ri.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != "completed" || j.RecordCount != 4 || j.Pipeline == nil || j.Pipeline.Skipped != 1 || j.Pipeline.Documents != 5 {
		t.Fatalf("run job = %+v / %+v", j, j.Pipeline)
	}
	recs, _, err := l.Service.Batch.Store.ListRecords(ctx, j.RecordSet(), store.RecordQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		for _, w := range []string{"image/png 40x30", "image/jpeg 24x18", "application/pdf 1 pages", "Paid in cash"} {
			if strings.Contains(r.Output, w) {
				seen[w] = true
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("answers show %v of the four documents: %+v", seen, recs)
	}
	if j.Pipeline.ReportURI == "" {
		t.Fatalf("no report: %+v", j.Pipeline)
	}
	rc, err := l.Blobs.Open(ctx, j.Pipeline.ReportURI+"/report.md", 0)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(rc)
	rc.Close()
	for _, w := range []string{"receipt-01.png", "receipt-02.jpg", "invoice.pdf", "note.txt", "broken.png", "truncated"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report lacks %q:\n%s", w, md)
		}
	}
}
