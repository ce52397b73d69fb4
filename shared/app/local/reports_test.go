package local_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/pipeline/corpus"
	"github.com/mcpbatch/mcpbatch/shared/report"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// runDate is a few days back, inside every shipped pipeline's schedule window
// (run_pipeline takes no date outside it).
var runDate = time.Now().UTC().AddDate(0, 0, -3).Format(time.DateOnly)

type reportSuite struct {
	t      *testing.T
	l      *local.Suite
	corpus map[string]string // document key → topic
}

// newReportSuite runs the local suite over a generated corpus with the shipped
// pipelines file, pointed at the corpus folder. The batch simulator is stepped
// by hand (failing every failEvery-th record), so runs are deterministic.
func newReportSuite(t *testing.T, w wiring, spec corpus.Spec, failEvery int) *reportSuite {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "corpus")
	want, err := corpus.Generate(src, spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pipeline.Load(filepath.Join("..", "..", "..", "infra", "pipelines", "pipelines.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pipelines[0].Source.LocalDir = src
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	l, err := local.New(context.Background(), w.options(t, local.Options{Dir: filepath.Join(dir, "state"), FailEvery: failEvery, Log: log,
		Reports: local.ReportsOptions{Pipelines: cfg, Concurrency: 4}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &reportSuite{t: t, l: l, corpus: want}
}

// run ticks the pipeline as the schedule would and lets everything settle.
func (s *reportSuite) run() pipeline.RunInfo {
	s.t.Helper()
	ri, err := s.l.Reports.Runner.Tick(context.Background(), pipeline.TickRequest{Pipeline: "support-triage", Date: runDate})
	if err != nil {
		s.t.Fatal(err)
	}
	s.settle()
	return ri
}

func (s *reportSuite) settle() {
	s.t.Helper()
	for range 3 { // batch steps → ingest → Job Completed → report
		if err := s.l.Sim.Settle(context.Background()); err != nil {
			s.t.Fatal(err)
		}
		s.l.Bus.Wait()
	}
}

type reportDoc struct {
	Summary  report.Summary   `json:"summary"`
	Failures []report.Failure `json:"failures"`
	Skipped  []report.Skipped `json:"skipped"`
	Records  []struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Category string `json:"category"`
	} `json:"records"`
}

func (s *reportSuite) report(ri pipeline.RunInfo) (reportDoc, map[string]string) {
	s.t.Helper()
	j, err := s.l.Service.Batch.Store.GetJob(context.Background(), ri.JobID)
	if err != nil {
		s.t.Fatal(err)
	}
	if j.Pipeline == nil || j.Pipeline.ReportURI == "" {
		s.t.Fatalf("job %s (%s) has no report", j.ID, j.Status)
	}
	files := map[string]string{}
	for _, n := range []string{"report.md", "report.html", "report.json"} {
		rc, err := s.l.Blobs.Open(context.Background(), j.Pipeline.ReportURI+"/"+n, 0)
		if err != nil {
			s.t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[n] = string(b)
	}
	var doc reportDoc
	if err := json.Unmarshal([]byte(files["report.json"]), &doc); err != nil {
		s.t.Fatal(err)
	}
	return doc, files
}

func (s *reportSuite) notifications() []local.Notification {
	s.t.Helper()
	n := notifications(s.t, s.l)
	return n
}

// TestPipelineEndToEnd: schedule tick → batch job → simulated completion →
// report files with the right numbers → one notification.
var _ = flow("PipelineEndToEnd", func(t *testing.T, w wiring) {
	s := newReportSuite(t, w, corpus.Demo, 10)
	ri := s.run()
	if !ri.Created || ri.Mode != job.ModeBatch || ri.Records != 125 {
		t.Fatalf("tick: %+v; want a new batch run of 125 records", ri)
	}
	doc, files := s.report(ri)
	sm := doc.Summary
	// The simulator fails every 10th record of the input file, 12 of 125.
	if sm.Records != 125 || sm.Succeeded != 113 || sm.Failed != 12 || sm.Mode != job.ModeBatch || sm.Documents != 130 || sm.SkippedDocuments != 5 {
		t.Fatalf("summary: %+v", sm)
	}
	// Expected distribution: each succeeded record's topic from the generator.
	want := map[string]int{}
	for _, r := range doc.Records {
		topic, ok := s.corpus[r.ID]
		if !ok {
			t.Fatalf("report record %q is not a corpus document", r.ID)
		}
		if r.Status == "succeeded" {
			want[topic]++
			if r.Category != topic {
				t.Errorf("%s: category %q, want %q", r.ID, r.Category, topic)
			}
		}
	}
	got := map[string]int{}
	for _, c := range sm.Categories {
		got[c.Name] = c.Count
	}
	if len(got) != 5 || !mapsEqual(got, want) {
		t.Fatalf("categories %v, want %v", got, want)
	}
	if len(doc.Failures) != 12 || sm.InputTokens == 0 || sm.CostUSD <= 0 || !sm.PriceKnown {
		t.Fatalf("failures %d, tokens %d, cost %v", len(doc.Failures), sm.InputTokens, sm.CostUSD)
	}
	// Bad documents are skipped and listed, never aborting the run; the template failure names its document.
	var skipped []string
	for _, sk := range doc.Skipped {
		skipped = append(skipped, sk.Key+": "+sk.Reason)
	}
	for _, w := range []string{"zz-oversized.txt: ", "zz-not-utf8.txt: unreadable: not UTF-8", "zz-broken.json: unreadable: not valid JSON",
		"zz-no-subject.json: prompt template failed on document zz-no-subject.json", "zz-scanned-invoice.pdf: document is a truncated PDF"} {
		if !slices.ContainsFunc(skipped, func(s string) bool { return strings.HasPrefix(s, w) }) {
			t.Errorf("skipped list lacks %q: %v", w, skipped)
		}
	}
	for _, f := range []string{"report.md", "report.html"} {
		if !strings.Contains(files[f], "zz-no-subject.json") || !strings.Contains(files[f], "Support tickets, nightly triage") {
			t.Errorf("%s lacks the skipped document or the title", f)
		}
	}
	n := s.notifications()
	if len(n) != 1 || !strings.Contains(n[0].Subject, "113 of 125 succeeded") || !strings.Contains(n[0].Message, "report.html") {
		t.Fatalf("notifications: %+v", n)
	}
})

// TestPipelineIdempotence: the same date run twice (also concurrently) makes one
// job; a Job Completed delivered twice makes one report and one notification.
func TestPipelineIdempotence(t *testing.T) {
	s := newReportSuite(t, sqliteWiring, corpus.Spec{Text: 30}, 0)
	first := s.run()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			again, err := s.l.Reports.Runner.Tick(context.Background(), pipeline.TickRequest{Pipeline: "support-triage", Date: runDate})
			if err != nil || again.Created || again.JobID != first.JobID {
				t.Errorf("rerun: %+v, %v; want the first run %s", again, err, first.JobID)
			}
		})
	}
	wg.Wait()
	jobs, _, err := s.l.Service.Batch.Store.ListJobs(context.Background(), pipeline.Owner("support-triage"), store.JobQuery{})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("%d jobs for one date (%v)", len(jobs), err)
	}
	before, _ := s.report(first)
	for range 2 {
		if err := s.l.Router.Route(context.Background(), completedEvent(first.JobID)); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := s.report(first)
	if n := s.notifications(); len(n) != 1 {
		t.Fatalf("%d notifications after duplicate Job Completed, want 1", len(n))
	}
	if !reflect.DeepEqual(before.Summary, after.Summary) {
		t.Fatal("report changed on a duplicate Job Completed")
	}
}

func completedEvent(jobID string) []byte {
	b, _ := json.Marshal(map[string]any{"version": "0", "id": "dup", "source": "mcpbatch", "detail-type": "Job Completed",
		"account": "123456789012", "region": "us-east-1", "time": "2026-11-28T02:00:00Z", "resources": []string{},
		"detail": map[string]any{"jobId": jobID, "status": "completed"}})
	return b
}

// TestOnDemandAndBatchReportsMatch: 30 documents run on demand, 150 in batch;
// both reports have the same structure.
var _ = flow("OnDemandAndBatchReportsMatch", func(t *testing.T, w wiring) {
	shape := func(spec corpus.Spec, wantMode string) (reportDoc, []string) {
		s := newReportSuite(t, w, spec, 0)
		ri := s.run()
		if ri.Mode != wantMode {
			t.Fatalf("%d documents ran %s, want %s", spec.Text, ri.Mode, wantMode)
		}
		doc, files := s.report(ri)
		if doc.Summary.Succeeded != spec.Text || doc.Summary.Mode != wantMode {
			t.Fatalf("%s summary: %+v", wantMode, doc.Summary)
		}
		return doc, []string{headings(files["report.md"]), htmlSections(files["report.html"]), jsonShape(files["report.json"])}
	}
	od, odShape := shape(corpus.Spec{Text: 30}, job.ModeOnDemand)
	bt, btShape := shape(corpus.Spec{Text: 150}, job.ModeBatch)
	for i, name := range []string{"markdown headings", "html sections", "json keys"} {
		if odShape[i] != btShape[i] {
			t.Errorf("%s differ:\non demand: %s\nbatch:     %s", name, odShape[i], btShape[i])
		}
	}
	if len(od.Summary.Categories) == 0 || len(bt.Summary.Categories) == 0 {
		t.Fatal("a report has no category distribution")
	}
	if od.Summary.CacheReadTokens == 0 {
		t.Fatal("the on-demand run read nothing from the prompt cache")
	}
})

func headings(md string) string {
	var out []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "#") {
			out = append(out, strings.TrimRight(strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return -1
				}
				return r
			}, l), " ()"))
		}
	}
	return strings.Join(out, " / ")
}

func htmlSections(h string) string {
	var out []string
	for _, part := range strings.Split(h, "<h2>")[1:] {
		title, _, _ := strings.Cut(part, "</h2>")
		out = append(out, strings.TrimRight(strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return -1
			}
			return r
		}, title), " ()"))
	}
	out = append(out, "svg:"+string(rune('0'+strings.Count(h, "<svg"))))
	return strings.Join(out, " / ")
}

func jsonShape(raw string) string {
	var doc map[string]json.RawMessage
	_ = json.Unmarshal([]byte(raw), &doc)
	var sm map[string]any
	_ = json.Unmarshal(doc["summary"], &sm)
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	for k := range sm {
		keys = append(keys, "summary."+k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestReportTools drives run_pipeline, get_report, list_reports and an
// on-demand submit_batch through a real MCP client over HTTP.
func TestReportTools(t *testing.T) {
	s := newReportSuite(t, sqliteWiring, corpus.Spec{Text: 12, Bad: true}, 0)
	srv := httptest.NewServer(s.l.Handler())
	t.Cleanup(srv.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	run := call[pipeline.RunInfo](t, cs, "run_pipeline", map[string]any{"pipeline": "support-triage", "date": runDate})
	if !strings.HasPrefix(run.JobStatus, "requested") || run.JobID == "" {
		t.Fatalf("run_pipeline: %+v", run)
	}
	s.settle()
	again := call[pipeline.RunInfo](t, cs, "run_pipeline", map[string]any{"pipeline": "support-triage", "date": runDate})
	if again.JobID != run.JobID || !again.ReportReady {
		t.Fatalf("second run_pipeline: %+v, want the finished run %s", again, run.JobID)
	}
	rep := call[pipeline.ReportView](t, cs, "get_report", map[string]any{"pipeline": "support-triage", "date": runDate})
	if rep.Summary == nil || rep.Summary.Succeeded != 12 || rep.Summary.SkippedDocuments != 5 || rep.Links["report.html"] == "" || rep.Run.Mode != job.ModeOnDemand {
		t.Fatalf("get_report: %+v", rep)
	}
	list := call[struct {
		Reports []pipeline.RunInfo `json:"reports"`
	}](t, cs, "list_reports", map[string]any{})
	if len(list.Reports) != 1 || list.Reports[0].JobID != run.JobID {
		t.Fatalf("list_reports: %+v", list)
	}
	errs := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_report", map[string]any{"pipeline": "support-triage", "date": "2026-01-01"}, "invalid input: date: pipeline support-triage has no run on 2026-01-01"},
		{"get_report", map[string]any{"pipeline": "nope", "date": runDate}, `invalid input: pipeline: no pipeline "nope"; configured: support-triage, release-notes-digest, docs-corpus`},
		{"run_pipeline", map[string]any{"pipeline": "support-triage", "date": "27.11.2026"}, `invalid input: date: want YYYY-MM-DD (got "27.11.2026")`},
		{"list_reports", map[string]any{"cursor": "garbage"}, "invalid input: cursor:"},
		{"submit_batch", map[string]any{"model": haiku, "mode": "fast", "records": records(3)}, `invalid input: mode: must be auto, batch or on_demand (got "fast")`},
	}
	for _, e := range errs {
		t.Run(e.tool+" error", func(t *testing.T) {
			if got := toolErr(t, cs, e.tool, e.args); !strings.HasPrefix(got, e.want) {
				t.Fatalf("got %q, want it to start with %q", got, e.want)
			}
		})
	}
	// A small submit_batch goes on demand and ends with the same tools as batch.
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(5), "system": "Be brief."})
	s.settle()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Mode != job.ModeOnDemand || j.Status != "completed" || j.Succeeded != 5 || j.CacheRead == 0 {
		t.Fatalf("on-demand job: %+v", j)
	}
}
