package report

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/browsertest"
)

var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[^\]]*\].*$`)

// open loads a page in headless Chromium and returns its console lines and a screenshot.
func open(t *testing.T, bin, page string) ([]string, image.Image) {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	// A guard against a hung browser, not a speed check.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0", "--window-size=1200,1600", "--screenshot="+shot, "file://"+page)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	return consoleLine.FindAllString(string(out), -1), img
}

// inked is the share of pixels that are not (near) white.
func inked(img image.Image) float64 {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

func TestReportInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	m, recs := sample(KindJSON)
	_, files := render(t, m, recs)
	report := filepath.Join(dir, "report.html")
	write := func(path string, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(report, files["report.html"])
	// Controls prove the checks can fail: a page with console errors, and a blank page.
	bad := filepath.Join(dir, "bad.html")
	write(bad, []byte(`<!DOCTYPE html><html><body><p>x</p><script>console.error("control error"); missingFn();</script></body></html>`))
	blank := filepath.Join(dir, "blank.html")
	write(blank, []byte(`<!DOCTYPE html><html><body></body></html>`))

	t.Run("control: console errors are seen", func(t *testing.T) {
		if lines, _ := open(t, bin, bad); len(lines) < 2 {
			t.Fatalf("the console check saw %d lines on a page that logs two errors", len(lines))
		}
	})
	t.Run("control: a blank page is blank", func(t *testing.T) {
		if _, img := open(t, bin, blank); inked(img) > 0.001 {
			t.Fatalf("blank page has %.2f%% ink", 100*inked(img))
		}
	})
	t.Run("report renders cleanly", func(t *testing.T) {
		lines, img := open(t, bin, report)
		if len(lines) > 0 {
			t.Fatalf("console output while rendering the report:\n%v", lines)
		}
		if ink := inked(img); ink < 0.02 {
			t.Fatalf("screenshot is nearly blank: %.2f%% of pixels inked", 100*ink)
		}
	})
}
