package content

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// size writes a byte count as README.md's table does: whole MiB as MiB,
// otherwise decimal MB (AWS's megabyte).
func size(n int64, base64 bool) string {
	s := strconv.FormatFloat(float64(n)/mb, 'f', -1, 64) + " MB"
	if n%mib == 0 {
		s = strconv.FormatInt(n/mib, 10) + " MiB"
	}
	if base64 {
		s += " as base64"
	}
	return s
}

// TestReadmeLimitsTable: README.md's table of limits per provider path is
// the table the checker applies (limits.go).
func TestReadmeLimitsTable(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	header := regexp.MustCompile("(?m)^\\| limit \\| (.*) \\|$").FindStringSubmatch(text)
	if header == nil {
		t.Fatal("no limits table")
	}
	var cols []Path
	for _, c := range strings.Split(header[1], " | ") {
		m := regexp.MustCompile("^`([a-z-]+)`").FindStringSubmatch(c)
		if m == nil {
			t.Fatalf("column %q names no path", c)
		}
		cols = append(cols, Path(m[1]))
	}
	rows := map[string][]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| ([a-zA-Z ]+) \\| (.*) \\|$").FindAllStringSubmatch(text, -1) {
		rows[m[1]] = strings.Split(m[2], " | ")
	}
	orDash := func(n int, f string) string {
		if n == 0 {
			return "—"
		}
		return fmt.Sprintf(f, n)
	}
	// Each row's cell for a path, from that path's limits.
	want := map[string]func(Limits) string{
		"image formats": func(l Limits) string { return strings.Join(l.ImageFormats, ", ") },
		"per image":     func(l Limits) string { return size(l.MaxImageBytes, l.ImageBytesBase64) },
		"image sides": func(l Limits) string {
			s := fmt.Sprintf("%d px", l.MaxImageSide)
			if l.ManyImages > 0 {
				s += fmt.Sprintf(" (%d px past %d images)", l.ManyImagesSide, l.ManyImages)
			}
			return s
		},
		"images per request":    func(l Limits) string { return orDash(l.MaxImages, "%d") },
		"PDF pages per request": func(l Limits) string { return orDash(l.MaxPDFPages, "%d") },
		"request body": func(l Limits) string {
			if l.MaxRequestBytes == 0 {
				return "—"
			}
			return size(l.MaxRequestBytes, false)
		},
	}
	for row, cell := range want {
		got, ok := rows[row]
		if !ok || len(got) != len(cols) {
			t.Errorf("row %q: %v", row, got)
			continue
		}
		for i, p := range cols {
			l, err := LimitsFor(p)
			if err != nil {
				t.Fatal(err)
			}
			if w := cell(l); got[i] != w {
				t.Errorf("%s, %s: README.md says %q, limits.go %q", row, p, got[i], w)
			}
		}
	}
	// Documents: the formats by name (or "all nine"), the size and count.
	docs := rows["documents"]
	for i, p := range cols {
		l, _ := LimitsFor(p)
		cell := docs[i]
		if len(l.DocumentFormats) == 0 {
			if !strings.HasPrefix(cell, "none") {
				t.Errorf("documents, %s: README.md says %q, limits.go takes none", p, cell)
			}
			continue
		}
		for _, f := range l.DocumentFormats {
			if !strings.Contains(cell, strings.ToUpper(f)) && !(len(l.DocumentFormats) == 9 && strings.Contains(cell, "all nine formats")) {
				t.Errorf("documents, %s: README.md %q does not name %s", p, cell, f)
			}
		}
		if l.MaxDocumentBytes > 0 && !strings.Contains(cell, size(l.MaxDocumentBytes, false)+" each") {
			t.Errorf("documents, %s: README.md %q lacks %s each", p, cell, size(l.MaxDocumentBytes, false))
		}
		if l.MaxDocuments > 0 && !strings.Contains(cell, fmt.Sprintf("%d per request", l.MaxDocuments)) {
			t.Errorf("documents, %s: README.md %q lacks %d per request", p, cell, l.MaxDocuments)
		}
	}
}

// TestReadmeEstimateFigures: the dry-run estimate's figures README.md states
// are the ones Summary uses (TestEstimate checks the arithmetic).
func TestReadmeEstimateFigures(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(strings.Join(strings.Fields(string(b)), " "), ",", "")
	for _, c := range []struct {
		re   string
		want int
	}{
		{`text at one token per ([0-9]+) characters`, charsPerToken},
		{`width×height/([0-9]+) after scaling`, pixelsPerToken},
		{`scaling to a ([0-9]+) px long edge`, imageLongEdge},
		{`long edge and ~([0-9]+) tokens`, imageMaxTokens},
		{`PDFs at ([0-9]+) tokens a page read visually`, pdfTokensPerPage},
		{`([0-9]+) a page as extracted text`, pdfTextTokensPerPage},
		{`Office files at one token per ([0-9]+) bytes`, officeBytesPerToken},
	} {
		m := regexp.MustCompile(c.re).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("README.md: nothing matches %s", c.re)
			continue
		}
		if m[1] != strconv.Itoa(c.want) {
			t.Errorf("%s: README.md says %s, the estimate uses %d", c.re, m[1], c.want)
		}
	}
}
