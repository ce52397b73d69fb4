package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/internal/browsertest"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/pipeline/corpus"
)

const haiku = "anthropic.claude-haiku-4-5-20251001-v1:0"

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

func callTool[T any](t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) T {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	var out T
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", tool, raw, err)
	}
	return out
}

func records(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"id": fmt.Sprintf("q%03d", i), "prompt": fmt.Sprintf("Summarise fact #%d", i)}
	}
	return out
}

// leaked finds JavaScript's words for a missing value shown as text.
var leaked = regexp.MustCompile(`null|undefined|NaN|\[object Object\]`)

// js quotes a Go string for a JavaScript expression.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestConsoleInChromium runs make dev's suite in process with token auth and
// real jobs from the Bedrock simulator (every 10th record fails), and drives
// the console in headless Chromium.
func TestConsoleInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	key, auth, err := local.DevToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The shipped pipelines file over a small generated corpus: a run of 30
	// documents goes on demand and writes its report.
	src := filepath.Join(dir, "corpus")
	if _, err := corpus.Generate(src, corpus.Spec{Text: 30}); err != nil {
		t.Fatal(err)
	}
	cfg, err := pipeline.Load(filepath.Join("..", "..", "infra", "pipelines", "pipelines.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pipelines[0].Source.LocalDir = src
	l, err := local.New(context.Background(), local.Options{Dir: dir, FailEvery: 10, Owner: auth.Owner,
		Log:     slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Reports: local.ReportsOptions{Pipelines: cfg, Concurrency: 4}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", l.Handler())
	h := l.MCP.Handler(auth.Owner)
	mux.Handle("/console", h)
	mux.Handle("/console/", h)
	srv := httptest.NewServer(mux)
	l.Uploads.SetBaseURL(srv.URL) // signed download links, as make dev gives
	t.Cleanup(func() { srv.Close(); l.Close() })

	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	done := callTool[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(150), "name": "nightly summaries"})
	if err := l.Sim.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Bus.Wait()
	run, err := l.Reports.Runner.Tick(context.Background(), pipeline.TickRequest{Pipeline: cfg.Pipelines[0].Name, Date: "2026-11-27"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // steps → ingest → Job Completed → report
		if err := l.Sim.Settle(context.Background()); err != nil {
			t.Fatal(err)
		}
		l.Bus.Wait()
	}
	running := callTool[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(120), "name": "still running"})
	finished := callTool[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": done.JobID})
	if finished.Status != "partially_completed" || finished.Failed != 15 {
		t.Fatalf("setup: job %s is %s with %d failed, want partially_completed with 15", done.JobID, finished.Status, finished.Failed)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hasRetry := slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "retry_failed" })

	b := startBrowser(t, bin)
	noProblems := func(step string) {
		t.Helper()
		var text string
		b.eval(`document.body.innerText`, &text)
		if bad := leaked.FindString(text); bad != "" {
			t.Errorf("%s: the page shows %q (a missing value rendered as text)", step, bad)
		}
		if logs := b.takeLogs(); len(logs) > 0 {
			t.Fatalf("%s: the page reported problems:\n%s", step, strings.Join(logs, "\n"))
		}
	}

	t.Run("no key shows the key form", func(t *testing.T) {
		b.t = t
		b.navigate(srv.URL + "/console")
		b.waitFor("the key form", `document.body.dataset.ready === "key"`)
		var state struct {
			FormShown, NavHidden bool
			ViewText             string
		}
		b.eval(`({FormShown: !document.getElementById("key-view").hidden && document.getElementById("key-form") !== null,
			NavHidden: document.getElementById("nav").hidden, ViewText: document.getElementById("view").innerText})`, &state)
		if !state.FormShown || !state.NavHidden || state.ViewText != "" {
			t.Fatalf("without a key: %+v, want only the key form", state)
		}
		noProblems("key form")
	})

	// Controls: the problem check sees console errors and exceptions, and the
	// CSP really blocks inline script in this browser.
	t.Run("controls", func(t *testing.T) {
		b.t = t
		b.eval(`console.error("control error"); setTimeout(() => { missingFn(); }, 0); new Promise(r => setTimeout(r, 100))`, nil)
		var ran bool
		b.eval(`(() => { const s = document.createElement("script"); s.textContent = "window.inlineRan = true"; document.body.append(s);
			return new Promise(r => setTimeout(() => r(window.inlineRan === true), 100)); })()`, &ran)
		if ran {
			t.Fatal("an inline script ran: the Content-Security-Policy is not in force")
		}
		logs := strings.Join(b.takeLogs(), "\n")
		for _, want := range []string{"control error", "missingFn", "Content Security Policy"} {
			if !strings.Contains(logs, want) {
				t.Errorf("problem log lacks %q:\n%s", want, logs)
			}
		}
	})

	t.Run("job list", func(t *testing.T) {
		b.t = t
		b.eval(`document.getElementById("key-input").value = `+js(key)+`; document.getElementById("key-form").requestSubmit()`, nil)
		b.waitFor("the job list", `document.body.dataset.ready === "jobs" && document.querySelectorAll("tr[data-job]").length > 0`)
		var rows []struct {
			ID, Text string
			Progress string
		}
		b.eval(`[...document.querySelectorAll("tr[data-job]")].map(r => ({ID: r.dataset.job, Text: r.innerText, Progress: (r.querySelector(".progress") || {getAttribute: () => ""}).getAttribute("aria-valuenow")}))`, &rows)
		if len(rows) != 2 || rows[0].ID != running.JobID || rows[1].ID != done.JobID {
			t.Fatalf("rows %+v, want the running job then the finished one (newest first)", rows)
		}
		if rows[0].Progress != "0" || rows[1].Progress != "100" {
			t.Errorf("progress bars: running %q, finished %q; want a bar on each, at 0 and 100", rows[0].Progress, rows[1].Progress)
		}
		var charts []string
		b.eval(`[...document.querySelectorAll("#usage figcaption")].map(f => f.innerText)`, &charts)
		for _, want := range []string{"Jobs per day", "Records per day", "Tokens per day", "Cost per day (USD)", "Failures by error code"} {
			if !slices.Contains(charts, want) {
				t.Errorf("usage charts %q lack %q", charts, want)
			}
		}
		var bars int
		b.eval(`document.querySelectorAll("#usage svg.chart rect").length`, &bars)
		if bars < 4 {
			t.Errorf("%d bars in the usage charts, want at least one per chart", bars)
		}
		for _, want := range []string{"nightly summaries", "partially completed", "150", "135", "15"} {
			if !strings.Contains(rows[1].Text, want) {
				t.Errorf("finished job row %q lacks %q", rows[1].Text, want)
			}
		}
		var stored struct {
			Session string
			Cookie  string
		}
		b.eval(`({Session: sessionStorage.getItem("mcpbatch.key") || "", Cookie: document.cookie})`, &stored)
		if stored.Session != key || stored.Cookie != "" {
			t.Errorf("key storage: session %q cookie %q; want the key in sessionStorage and no cookie", stored.Session, stored.Cookie)
		}
		noProblems("job list")
		// The README's screenshot is rewritten only on request (its timestamps change every run).
		shot := filepath.Join(t.TempDir(), "console.png")
		if os.Getenv("MCPBATCH_UPDATE_SCREENSHOT") != "" {
			shot = filepath.Join("testdata", "console.png")
		}
		b.screenshot(shot)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 1000 {
			t.Fatalf("screenshot: %v", err)
		}
	})

	t.Run("job page lists failed records", func(t *testing.T) {
		b.t = t
		b.eval(`location.hash = "#/job/" + `+js(done.JobID), nil)
		b.waitFor("the job page", `document.body.dataset.ready === "job" && document.querySelectorAll("#failed-records tr[data-record]").length > 0`)
		var recs []struct{ ID, Code, Message string }
		b.eval(`[...document.querySelectorAll("#failed-records tr[data-record]")].map(r => ({ID: r.dataset.record, Code: r.cells[1].innerText, Message: r.cells[2].innerText}))`, &recs)
		want := 0
		for i := range 150 {
			if (i+1)%10 == 0 {
				want++
			}
		}
		if len(recs) != want {
			t.Fatalf("%d failed records listed, want %d: %+v", len(recs), want, recs)
		}
		for _, r := range recs {
			if !strings.HasPrefix(r.ID, "q") || r.Message == "" || r.Code == "—" {
				t.Errorf("failed record %+v lacks its id, code or message", r)
			}
		}
		var timeline []string
		b.eval(`[...document.querySelectorAll("ol.timeline li")].map(li => li.innerText)`, &timeline)
		if len(timeline) < 3 || !strings.HasPrefix(timeline[0], "Created") {
			t.Errorf("timeline %q", timeline)
		}
		// An export link appears.
		b.eval(`[...document.querySelectorAll("button")].find(x => x.innerText === "Export JSONL").click()`, nil)
		b.waitFor("the export link", `document.querySelector(".links p") !== null`)
		var exported string
		b.eval(`document.querySelector(".links p").innerText`, &exported)
		if !strings.Contains(exported, "150 records") {
			t.Errorf("export line %q, want 150 records", exported)
		}
		// The link is clickable and downloads the file.
		var href string
		b.eval(`(document.querySelector(".links p a[href]") || {href: ""}).href`, &href)
		resp, err := http.Get(href)
		if err != nil {
			t.Fatalf("export link %q: %v", href, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Count(string(body), "\n") != 150 {
			t.Errorf("export link %q: %d, %d lines; want the 150-record JSONL", href, resp.StatusCode, strings.Count(string(body), "\n"))
		}
		noProblems("job page")
	})

	t.Run("retry button", func(t *testing.T) {
		b.t = t
		b.eval(`document.getElementById("retry-failed").click()`, nil)
		if hasRetry {
			b.waitFor("the child job's page", `location.hash !== "#/job/" + `+js(done.JobID)+` && document.body.dataset.ready === "job"`)
			var child string
			b.eval(`decodeURIComponent(location.hash.slice("#/job/".length))`, &child)
			v := callTool[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": child})
			if v.RecordCount != 15 {
				t.Fatalf("child job %s has %d records, want the 15 failed ones", child, v.RecordCount)
			}
		} else {
			// The tool is not on this server yet: the page says so and stays put.
			b.waitFor("the retry error", `document.querySelector("[role=alert]:not([hidden])") !== null && document.querySelector("[role=alert]:not([hidden])").innerText.includes("retry_failed")`)
		}
		noProblems("retry")
	})

	t.Run("pipeline runs view", func(t *testing.T) {
		b.t = t
		b.eval(`location.hash = "#/reports"`, nil)
		b.waitFor("the pipeline runs", `document.body.dataset.ready === "reports" && document.querySelector("tr[data-run]") !== null`)
		var runs []string
		b.eval(`[...document.querySelectorAll("tr[data-run]")].map(r => r.dataset.run)`, &runs)
		if want := []string{run.Pipeline + "/" + run.Date}; !slices.Equal(runs, want) {
			t.Fatalf("runs %q, want %q", runs, want)
		}
		b.eval(`document.querySelector("tr[data-run] a[href^='#/report/']").click()`, nil)
		b.waitFor("the report page", `document.body.dataset.ready === "report" && document.querySelector("dl.facts") !== null`)
		var text string
		b.eval(`document.getElementById("view").innerText`, &text)
		for _, want := range []string{"Records", "30", "report.html", "report.json"} {
			if !strings.Contains(text, want) {
				t.Errorf("report page lacks %q:\n%s", want, text)
			}
		}
		noProblems("pipeline runs")
	})

	// No page scrolls sideways at a phone's, a laptop's or a wide screen's
	// width: the jobs list (with its charts) and a job page, screenshot each.
	t.Run("layout at 420, 1400 and 1920 px", func(t *testing.T) {
		b.t = t
		shots := t.TempDir()
		if os.Getenv("MCPBATCH_UPDATE_SCREENSHOT") != "" {
			shots = "testdata"
		}
		for _, width := range []int{420, 1400, 1920} {
			b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}, nil)
			for _, page := range []struct{ name, hash, ready string }{
				{"jobs", "#/jobs", `document.body.dataset.ready === "jobs" && document.querySelector("#usage svg") !== null`},
				{"job", "#/job/" + done.JobID, `document.body.dataset.ready === "job" && document.querySelector(".summary table.failures") !== null`},
			} {
				b.eval(`location.hash = "#/"; location.hash = `+js(page.hash), nil)
				b.waitFor(page.name+" page", page.ready)
				var over struct{ Page, Widest int }
				b.eval(`({Page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
					Widest: Math.max(0, ...[...document.querySelectorAll("#view *")].map(e => e.getBoundingClientRect().right - document.documentElement.clientWidth))})`, &over)
				if over.Page > 0 || over.Widest > 1 {
					t.Errorf("%s page at %d px: overflows by %d px (widest element %d px past the edge)", page.name, width, over.Page, over.Widest)
				}
				b.screenshot(filepath.Join(shots, fmt.Sprintf("console-%s-%d.png", page.name, width)))
			}
		}
		b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}, nil)
		noProblems("layout")
	})

	t.Run("job page charts the summary", func(t *testing.T) {
		b.t = t
		h := callTool[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": triageRecords(150), "name": "triage",
			"categories": triageCategories, "confidence": true})
		if err := l.Sim.Settle(context.Background()); err != nil {
			t.Fatal(err)
		}
		l.Bus.Wait()
		want := storedSummary(t, func(cursor string) mcpserver.ResultsOut {
			args := map[string]any{"job_id": h.JobID, "limit": 500}
			if cursor != "" {
				args["cursor"] = cursor
			}
			return callTool[mcpserver.ResultsOut](t, cs, "get_job_results", args)
		})
		b.eval(`location.hash = "#/job/" + `+js(h.JobID), nil)
		b.waitFor("the summary chart", `document.body.dataset.ready === "job" && document.querySelector(".results-summary dl.numbers") !== null`)
		var got chartRead
		b.eval(readChart(`document`), &got)
		want.check(t, got)
		noProblems("summary chart")
	})

	t.Run("a refused key returns to the key form", func(t *testing.T) {
		b.t = t
		b.eval(`sessionStorage.setItem("mcpbatch.key", "mcpb_wrongwrongwrongwrongwrongwrongwrong")`, nil)
		b.navigate(srv.URL + "/console#/jobs")
		b.waitFor("the key form", `document.body.dataset.ready === "key"`)
		var msg string
		b.eval(`document.getElementById("key-message").innerText`, &msg)
		if !strings.Contains(msg, "401") {
			t.Errorf("key message %q, want it to say the key was refused (401)", msg)
		}
		var left string
		b.eval(`sessionStorage.getItem("mcpbatch.key") || ""`, &left)
		if left != "" {
			t.Errorf("the refused key is still stored")
		}
		// The browser itself reports the 401 of /mcp; nothing else may appear.
		for _, l := range b.takeLogs() {
			if !strings.Contains(l, "401") {
				t.Errorf("unexpected page problem: %s", l)
			}
		}
	})
}
