package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// writers fan one pass over the records out to the three formats; the first
// write error sticks and stops the rest.
type writers struct {
	md, html, json io.Writer
	bm, bh, bj     *bufio.Writer
	err            error
}

func (w *writers) buf() {
	if w.bm == nil {
		w.bm, w.bh, w.bj = bufio.NewWriterSize(orDiscard(w.md), 64<<10), bufio.NewWriterSize(orDiscard(w.html), 64<<10), bufio.NewWriterSize(orDiscard(w.json), 64<<10)
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func (w *writers) M(format string, a ...any) { w.write(w.bm, format, a...) }
func (w *writers) H(format string, a ...any) { w.write(w.bh, format, a...) }
func (w *writers) J(format string, a ...any) { w.write(w.bj, format, a...) }

func (w *writers) write(b *bufio.Writer, format string, a ...any) {
	if w.err != nil {
		return
	}
	if len(a) == 0 {
		_, w.err = b.WriteString(format)
		return
	}
	_, w.err = fmt.Fprintf(b, format, a...)
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func e(s string) string { return html.EscapeString(s) }

// mdCell keeps a value on one Markdown table line.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1100px;color:#1b1f24;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right}.ok{color:#1a7f37}.bad{color:#cf222e}pre{white-space:pre-wrap;margin:0;font-size:.85rem}
.kpi{display:flex;flex-wrap:wrap;gap:.8rem}.kpi div{border:1px solid #d0d7de;border-radius:6px;padding:.5rem .8rem}.kpi b{display:block;font-size:1.2rem}`

func (w *writers) head(s Summary, fails []Failure, skipped []Skipped) {
	w.buf()
	dur := time.Duration(s.DurationSeconds * float64(time.Second)).Round(time.Second).String()
	cost := fmt.Sprintf("$%.4f", s.CostUSD)
	if !s.PriceKnown {
		cost = "unknown (no price for this model)"
	}
	// Markdown
	w.M("# %s\n\n", s.Title)
	if s.Pipeline != "" {
		w.M("Pipeline `%s`, run of %s.\n\n", s.Pipeline, s.Date)
	}
	w.M("## Summary\n\n| | |\n|---|---|\n")
	rows := [][2]string{
		{"Job", s.JobID}, {"Status", s.Status}, {"Mode", s.Mode}, {"Provider", s.Provider}, {"Model", s.Model},
		{"Documents", fmt.Sprint(s.Documents)}, {"Skipped documents", fmt.Sprint(s.SkippedDocuments)},
		{"Records", fmt.Sprint(s.Records)}, {"Succeeded", fmt.Sprint(s.Succeeded)}, {"Failed", fmt.Sprint(s.Failed)},
		{"Input tokens", fmt.Sprint(s.InputTokens)}, {"Output tokens", fmt.Sprint(s.OutputTokens)},
		{"Cache read / write tokens", fmt.Sprintf("%d / %d", s.CacheReadTokens, s.CacheWriteTokens)},
		{"Cost estimate", cost}, {"Duration", dur},
	}
	for _, r := range rows {
		w.M("| %s | %s |\n", r[0], mdCell(r[1]))
	}
	if s.OutputKind == KindJSON {
		w.M("\n## Distribution of `%s`\n\n| %s | records | share |\n|---|---:|---:|\n", s.CategoryField, s.CategoryField)
		for _, c := range s.Categories {
			w.M("| %s | %d | %.1f%% |\n", mdCell(c.Name), c.Count, pct(c.Count, s.Succeeded))
		}
		if s.Unparsed > 0 {
			w.M("| (output not JSON with `%s`) | %d | %.1f%% |\n", s.CategoryField, s.Unparsed, pct(s.Unparsed, s.Succeeded))
		}
	}
	w.M("\n## Failures (%d)\n\n", s.Failed)
	if s.Failed == 0 {
		w.M("None.\n")
	} else {
		w.M("| code | records |\n|---|---:|\n")
		for _, c := range s.FailureCodes {
			w.M("| %s | %d |\n", mdCell(c.Name), c.Count)
		}
		w.M("\n| record | code | reason |\n|---|---|---|\n")
		for _, f := range fails {
			w.M("| %s | %s | %s |\n", mdCell(f.ID), mdCell(f.Code), mdCell(clip(f.Message, 300)))
		}
		if s.ListedFailure < s.Failed {
			w.M("\n%d more failures are counted above but not listed.\n", s.Failed-s.ListedFailure)
		}
	}
	w.M("\n## Skipped documents (%d)\n\n", len(skipped))
	if len(skipped) == 0 {
		w.M("None.\n")
	} else {
		w.M("| document | reason |\n|---|---|\n")
		for _, sk := range skipped {
			w.M("| %s | %s |\n", mdCell(sk.Key), mdCell(sk.Reason))
		}
	}
	w.M("\n## Records\n\n| record | status | output |\n|---|---|---|\n")

	// HTML
	w.H("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">")
	w.H("<title>%s</title><style>%s</style></head><body>\n<h1>%s</h1>\n", e(s.Title), css, e(s.Title))
	if s.Pipeline != "" {
		w.H("<p>Pipeline <code>%s</code>, run of %s.</p>\n", e(s.Pipeline), e(s.Date))
	}
	w.H("<h2>Summary</h2>\n<div class=\"kpi\">")
	for _, r := range rows {
		w.H("<div>%s<b>%s</b></div>", e(r[0]), e(r[1]))
	}
	w.H("</div>\n<h2>Success and failure</h2>\n%s\n", outcomeSVG(s.Succeeded, s.Failed, s.SkippedDocuments))
	if s.OutputKind == KindJSON {
		w.H("<h2>Distribution of <code>%s</code></h2>\n%s\n", e(s.CategoryField), categorySVG(s))
	}
	w.H("<h2>Failures (%d)</h2>\n", s.Failed)
	if s.Failed == 0 {
		w.H("<p>None.</p>\n")
	} else {
		w.H("<table><tr><th>code</th><th>records</th></tr>")
		for _, c := range s.FailureCodes {
			w.H("<tr><td>%s</td><td class=\"num\">%d</td></tr>", e(c.Name), c.Count)
		}
		w.H("</table>\n<table><tr><th>record</th><th>code</th><th>reason</th></tr>\n")
		for _, f := range fails {
			w.H("<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n", e(f.ID), e(f.Code), e(clip(f.Message, 300)))
		}
		w.H("</table>\n")
		if s.ListedFailure < s.Failed {
			w.H("<p>%d more failures are counted above but not listed.</p>\n", s.Failed-s.ListedFailure)
		}
	}
	w.H("<h2>Skipped documents (%d)</h2>\n", len(skipped))
	if len(skipped) == 0 {
		w.H("<p>None.</p>\n")
	} else {
		w.H("<table><tr><th>document</th><th>reason</th></tr>\n")
		for _, sk := range skipped {
			w.H("<tr><td>%s</td><td>%s</td></tr>\n", e(sk.Key), e(sk.Reason))
		}
		w.H("</table>\n")
	}
	w.H("<h2>Records</h2>\n<table><tr><th>record</th><th>status</th><th>output</th></tr>\n")

	// JSON
	if skipped == nil {
		skipped = []Skipped{}
	}
	if fails == nil {
		fails = []Failure{}
	}
	w.J(`{"summary":%s,"failures":%s,"skipped":%s,"records":[`, js(s), js(fails), js(skipped))
}

func (w *writers) record(s Summary, i int, r job.Record) {
	out := r.Output
	if r.Status != job.RecordSucceeded {
		out = r.ErrorCode + ": " + r.ErrorMessage
	} else if r.OutputRef != "" {
		out = "(stored apart: " + r.OutputRef + ")"
	}
	shown := clip(out, MaxOutputChars)
	w.M("| %s | %s | %s |\n", mdCell(r.ID), r.Status, mdCell(shown))
	cls := "ok"
	if r.Status != job.RecordSucceeded {
		cls = "bad"
	}
	w.H("<tr><td>%s</td><td class=\"%s\">%s</td><td><pre>%s</pre></td></tr>\n", e(r.ID), cls, e(string(r.Status)), e(shown))
	if i > 0 {
		w.J(",")
	}
	rec := struct {
		ID        string `json:"id"`
		Status    string `json:"status"`
		Category  string `json:"category,omitempty"`
		Output    string `json:"output,omitempty"`
		OutputRef string `json:"output_ref,omitempty"`
		ErrorCode string `json:"error_code,omitempty"`
		ErrorMsg  string `json:"error_message,omitempty"`
	}{ID: r.ID, Status: string(r.Status), Output: r.Output, OutputRef: r.OutputRef, ErrorCode: r.ErrorCode, ErrorMsg: r.ErrorMessage}
	if s.OutputKind == KindJSON && r.Status == job.RecordSucceeded {
		rec.Category, _ = category(r.Output, s.CategoryField)
	}
	w.J("%s", js(rec))
}

func (w *writers) tail(s Summary) {
	w.H("</table>\n<p><small>Generated by mcpbatch for job %s.</small></p>\n</body></html>\n", e(s.JobID))
	w.J("]}\n")
	for _, b := range []*bufio.Writer{w.bm, w.bh, w.bj} {
		if err := b.Flush(); err != nil && w.err == nil {
			w.err = err
		}
	}
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// outcomeSVG is one stacked bar: succeeded, failed, skipped documents.
func outcomeSVG(ok, failed, skipped int) string {
	total := ok + failed + skipped
	const width, barW = 720, 600
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="70" role="img" aria-label="succeeded %d, failed %d, skipped %d">`, width, ok, failed, skipped)
	x := 0.0
	for _, part := range []struct {
		n     int
		color string
	}{{ok, "#2da44e"}, {failed, "#cf222e"}, {skipped, "#8c959f"}} {
		if total == 0 || part.n == 0 {
			continue
		}
		w := float64(barW) * float64(part.n) / float64(total)
		fmt.Fprintf(&b, `<rect x="%.1f" y="5" width="%.1f" height="28" fill="%s"/>`, x, w, part.color)
		x += w
	}
	if total == 0 {
		fmt.Fprintf(&b, `<rect x="0" y="5" width="%d" height="28" fill="#eaeef2"/>`, barW)
	}
	fmt.Fprintf(&b, `<g font-size="13" font-family="sans-serif"><rect x="0" y="45" width="12" height="12" fill="#2da44e"/><text x="16" y="56">succeeded %d</text>`+
		`<rect x="160" y="45" width="12" height="12" fill="#cf222e"/><text x="176" y="56">failed %d</text>`+
		`<rect x="300" y="45" width="12" height="12" fill="#8c959f"/><text x="316" y="56">skipped documents %d</text></g></svg>`, ok, failed, skipped)
	return b.String()
}

// categorySVG is a horizontal bar chart of the top categories.
func categorySVG(s Summary) string {
	cats := s.Categories
	const maxBars = 20
	if len(cats) > maxBars {
		rest := 0
		for _, c := range cats[maxBars-1:] {
			rest += c.Count
		}
		cats = append(append([]Count{}, cats[:maxBars-1]...), Count{Name: "(other)", Count: rest})
	}
	if s.Unparsed > 0 {
		cats = append(cats, Count{Name: "(unparsed)", Count: s.Unparsed})
	}
	top := 1
	for _, c := range cats {
		top = max(top, c.Count)
	}
	const labelW, barW, rowH = 180, 460, 24
	h := rowH*len(cats) + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="distribution of %s"><g font-size="13" font-family="sans-serif">`,
		labelW+barW+80, max(h, 30), e(s.CategoryField))
	if len(cats) == 0 {
		b.WriteString(`<text x="0" y="20">no categorised outputs</text>`)
	}
	for i, c := range cats {
		y := 5 + i*rowH
		w := float64(barW) * float64(c.Count) / float64(top)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text><rect x="%d" y="%d" width="%.1f" height="%d" fill="#0969da"/><text x="%.1f" y="%d">%d</text>`,
			labelW-6, y+15, e(clip(c.Name, 28)), labelW, y, w, rowH-6, float64(labelW)+w+6, y+15, c.Count)
	}
	b.WriteString(`</g></svg>`)
	return b.String()
}
