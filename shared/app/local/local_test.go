package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

const haiku = "anthropic.claude-haiku-4-5-20251001-v1:0"

// textOnly is a current default model that reads no images.
const textOnly = "meta.llama3-3-70b-instruct-v1:0"

type suite struct {
	t   *testing.T
	l   *local.Suite
	srv *httptest.Server
}

// newSuite runs the local suite with a manually stepped simulator that fails
// every 10th record; the owner is whatever the X-Test-Owner header says.
func newSuite(t *testing.T) *suite { return newSuiteFailing(t, 10) }

// newCleanSuite is the local suite with a simulator that fails no record.
func newCleanSuite(t *testing.T) *suite { return newSuiteFailing(t, 0) }

// newSuiteFailing is the local suite whose Bedrock simulator fails every
// failEvery-th record (0: none), served over HTTP with the upload links
// pointing at it.
func newSuiteFailing(t *testing.T, failEvery int) *suite {
	return newSuiteWith(t, local.Options{FailEvery: failEvery})
}

// newSuiteWith is the local suite with o's knobs; the directory, log and
// owner header are the test's.
func newSuiteWith(t *testing.T, o local.Options) *suite { return newSuiteOn(t, sqliteWiring, o) }

// newSuiteOn is newSuiteWith on wiring w (an end-to-end flow's).
func newSuiteOn(t *testing.T, w wiring, o local.Options) *suite {
	t.Helper()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	o.Dir, o.Log = t.TempDir(), log
	o.Owner = func(r *http.Request) (string, error) {
		if o := r.Header.Get("X-Test-Owner"); o != "" {
			return o, nil
		}
		return "", fmt.Errorf("no owner")
	}
	l, err := local.New(context.Background(), w.options(t, o))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(l.Handler())
	l.Uploads.SetBaseURL(srv.URL)
	t.Cleanup(func() { srv.Close(); l.Close() })
	return &suite{t: t, l: l, srv: srv}
}

type ownerTransport struct{ owner string }

func (o ownerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Owner", o.owner)
	return http.DefaultTransport.RoundTrip(r)
}

func (s *suite) client(owner string) *mcp.ClientSession {
	s.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.srv.URL + "/mcp", HTTPClient: &http.Client{Transport: ownerTransport{owner}}, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { cs.Close() })
	return cs
}

// call invokes a tool and decodes its structured content; it fails the test on a tool error.
func call[T any](t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) T {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", tool, text(res))
	}
	var out T
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", tool, raw, err)
	}
	return out
}

// toolErr invokes a tool that must fail and returns the error text.
func toolErr(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error, want a tool error: %v", tool, err)
	}
	if !res.IsError {
		t.Fatalf("%s: succeeded, want a tool error", tool)
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func records(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"id": fmt.Sprintf("q%03d", i), "prompt": fmt.Sprintf("Summarise fact #%d", i)}
	}
	return out
}

func (s *suite) settle() {
	s.t.Helper()
	if err := s.l.Sim.Settle(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	s.l.Bus.Wait()
}

func allResults(t *testing.T, cs *mcp.ClientSession, jobID, status string, limit int) []mcpserver.RecordOut {
	t.Helper()
	var all []mcpserver.RecordOut
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		args := map[string]any{"job_id": jobID, "limit": limit}
		if status != "" {
			args["status"] = status
		}
		if cursor != "" {
			args["cursor"] = cursor
		}
		page := call[mcpserver.ResultsOut](t, cs, "get_job_results", args)
		if len(page.Records) > limit {
			t.Fatalf("page of %d records, limit %d", len(page.Records), limit)
		}
		all = append(all, page.Records...)
		if page.NextCursor == "" {
			return all
		}
		cursor = page.NextCursor
	}
}

var _ = flow("SubmitToResults", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{FailEvery: 10})
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(150), "name": "smoke"})
	if h.JobID == "" || h.RecordCount != 150 || h.Status != "submitted" || h.Provider != "bedrock" {
		t.Fatalf("handle = %+v", h)
	}
	seen, seenProvider := map[string]bool{}, map[string]bool{}
	for i := 0; i < 20; i++ {
		j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
		seen[j.Status] = true
		seenProvider[j.ProviderStatus] = true
		if j.Terminal {
			break
		}
		s.l.Sim.Step(context.Background())
		s.l.Bus.Wait()
	}
	for _, st := range []string{"submitted", "validating", "in_progress", "partially_completed"} {
		if !seen[st] {
			t.Errorf("get_job never showed %s (saw %v)", st, seen)
		}
	}
	for _, st := range []string{"Submitted", "Validating", "Scheduled", "InProgress"} {
		if !seenProvider[st] {
			t.Errorf("get_job never showed provider_status %s (saw %v)", st, seenProvider)
		}
	}
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "partially_completed" || j.Succeeded != 135 || j.Failed != 15 || j.BadLines != 0 || j.CompletedAt == "" {
		t.Fatalf("final job = %+v", j)
	}
	if j.InputTokens == 0 || j.OutputTokens == 0 {
		t.Errorf("tokens not counted: %+v", j)
	}
	all := allResults(t, cs, h.JobID, "", 40)
	ids := map[string]bool{}
	for _, r := range all {
		if ids[r.ID] {
			t.Errorf("record %s returned twice", r.ID)
		}
		ids[r.ID] = true
		switch r.Status {
		case "succeeded":
			if !strings.Contains(r.Output, "[simulated]") {
				t.Errorf("record %s output %q does not say it is simulated", r.ID, r.Output)
			}
		case "failed":
			if r.ErrorCode == "" || r.ErrorMessage == "" {
				t.Errorf("failed record %s without error: %+v", r.ID, r)
			}
		default:
			t.Errorf("record %s status %q", r.ID, r.Status)
		}
	}
	if len(ids) != 150 {
		t.Fatalf("got %d distinct results, want 150", len(ids))
	}
	if failed := allResults(t, cs, h.JobID, "failed", 500); len(failed) != 15 {
		t.Errorf("status=failed gave %d records, want 15", len(failed))
	}
	list := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{})
	if len(list.Jobs) != 1 || list.Jobs[0].JobID != h.JobID {
		t.Errorf("list_jobs = %+v", list)
	}
})

func TestToolInputErrors(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	dup := records(120)
	dup[7]["id"] = dup[3]["id"]
	badID := records(120)
	badID[5]["id"] = strings.Repeat("é", 257)
	noPrompt := records(120)
	delete(noPrompt[9], "prompt")
	tests := []struct {
		name, tool string
		args       map[string]any
		want       []string
	}{
		{"empty records", "submit_batch", map[string]any{"model": haiku, "records": []any{}}, []string{"records", "100"}},
		{"under minimum", "submit_batch", map[string]any{"model": haiku, "records": records(20), "mode": "batch"}, []string{"records", "minimum of 100"}},
		{"duplicate ids", "submit_batch", map[string]any{"model": haiku, "records": dup}, []string{"records[7].id", "duplicate"}},
		{"bad id", "submit_batch", map[string]any{"model": haiku, "records": badID}, []string{"records[5].id", "at most 256 characters"}},
		{"no prompt", "submit_batch", map[string]any{"model": haiku, "records": noPrompt}, []string{"records[9]", "prompt"}},
		{"ttl too long", "submit_batch", map[string]any{"model": haiku, "records": records(100), "ttl_days": 400}, []string{"ttl_days", "1..365"}},
		{"ttl negative", "submit_batch", map[string]any{"model": haiku, "records": records(100), "ttl_days": -1}, []string{"ttl_days"}},
		{"model not allowed", "submit_batch", map[string]any{"model": "meta.llama3-70b", "records": records(100)}, []string{"model", haiku}},
		{"max_tokens", "submit_batch", map[string]any{"model": haiku, "records": records(100), "max_tokens": 100000}, []string{"max_tokens", "1..64000", haiku}},
		{"unknown job", "get_job", map[string]any{"job_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"}, []string{"job not found"}},
		{"junk job id", "get_job", map[string]any{"job_id": "../../etc"}, []string{"job not found"}},
		{"unknown job results", "get_job_results", map[string]any{"job_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"}, []string{"job not found"}},
		{"unknown job cancel", "cancel_job", map[string]any{"job_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"}, []string{"job not found"}},
		{"list bad status", "list_jobs", map[string]any{"status": "done"}, []string{"status", "completed"}},
		{"list limit", "list_jobs", map[string]any{"limit": 501}, []string{"limit", "1..500"}},
		{"list bad cursor", "list_jobs", map[string]any{"cursor": "garbage"}, []string{"cursor"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := toolErr(t, cs, tc.tool, tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "goroutine") || strings.Contains(msg, ".go:") {
				t.Errorf("error leaks internals: %q", msg)
			}
		})
	}
	if list := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{}); len(list.Jobs) != 0 {
		t.Errorf("rejected submits left jobs behind: %+v", list.Jobs)
	}
	// A results cursor and limit are checked against a real job too.
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"results limit", map[string]any{"job_id": h.JobID, "limit": 501}, "limit"},
		{"results status", map[string]any{"job_id": h.JobID, "status": "weird"}, "status"},
		{"results cursor", map[string]any{"job_id": h.JobID, "cursor": "garbage"}, "cursor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := toolErr(t, cs, "get_job_results", tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not mention %q", msg, tc.want)
			}
		})
	}
}

func TestOwnerIsolation(t *testing.T) {
	s := newSuite(t)
	alice, bob := s.client("alice"), s.client("bob")
	h := call[mcpserver.JobHandle](t, alice, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
	s.settle()
	for _, tool := range []string{"get_job", "get_job_results", "cancel_job"} {
		t.Run(tool, func(t *testing.T) {
			if msg := toolErr(t, bob, tool, map[string]any{"job_id": h.JobID}); !strings.Contains(msg, "job not found") {
				t.Errorf("bob got %q", msg)
			}
			// The owner still sees it.
			res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"job_id": h.JobID}})
			if err != nil || res.IsError {
				t.Errorf("alice: %v %s", err, text(res))
			}
		})
	}
	t.Run("list_jobs", func(t *testing.T) {
		if l := call[mcpserver.ListOut](t, bob, "list_jobs", map[string]any{}); len(l.Jobs) != 0 {
			t.Errorf("bob lists %d jobs", len(l.Jobs))
		}
		if l := call[mcpserver.ListOut](t, alice, "list_jobs", map[string]any{}); len(l.Jobs) != 1 {
			t.Errorf("alice lists %d jobs", len(l.Jobs))
		}
	})
	t.Run("no identity", func(t *testing.T) {
		resp, err := http.Post(s.srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("status %d, want 401", resp.StatusCode)
		}
	})
}

func TestOversizedRequest(t *testing.T) {
	s := newSuite(t)
	big := strings.Repeat("x", 7<<20)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"submit_batch","arguments":{"model":%q,"records":[{"prompt":%q}]}}}`, haiku, big)
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Test-Owner", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID     int `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.ID != 7 || !out.Result.IsError || len(out.Result.Content) == 0 {
		t.Fatalf("reply = %+v", out)
	}
	msg := out.Result.Content[0].Text
	for _, w := range []string{"records", "6 MB", "split"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
}

// finalState is what must not depend on event order or duplication.
type finalState struct {
	Status                      string
	Succeeded, Failed, BadLines int
	Results                     int
}

// TestEventOrderAndDuplicates replays a job's Bedrock events in order, twice
// each, reversed and shuffled: the final job and result count never change, and
// a late InProgress never moves a finished job back.
var _ = flow("EventOrderAndDuplicates", func(t *testing.T, w wiring) {
	variants := []struct {
		name  string
		order func([][]byte) [][]byte
	}{
		{"in order", func(e [][]byte) [][]byte { return e }},
		{"each twice", func(e [][]byte) [][]byte {
			var out [][]byte
			for _, x := range e {
				out = append(out, x, x)
			}
			return out
		}},
		{"reversed", func(e [][]byte) [][]byte {
			out := make([][]byte, len(e))
			for i, x := range e {
				out[len(e)-1-i] = x
			}
			return out
		}},
		{"shuffled twice", func(e [][]byte) [][]byte {
			out := append(append([][]byte{}, e...), e...)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
			return out
		}},
	}
	var want *finalState
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := newSuiteOn(t, w, local.Options{FailEvery: 10})
			var mu sync.Mutex
			var captured [][]byte
			s.l.Sim.Emit = func(_ context.Context, ev []byte) {
				mu.Lock()
				captured = append(captured, ev)
				mu.Unlock()
			}
			cs := s.client("alice")
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(120)})
			s.settle()
			if len(captured) < 5 {
				t.Fatalf("simulator emitted %d events", len(captured))
			}
			for _, ev := range v.order(captured) {
				if err := s.l.Router.Route(context.Background(), ev); err != nil {
					t.Fatalf("route: %v", err)
				}
				s.l.Bus.Wait()
			}
			// A late InProgress after the end.
			for _, ev := range captured {
				if bytes.Contains(ev, []byte(`"status":"InProgress"`)) {
					if err := s.l.Router.Route(context.Background(), ev); err != nil {
						t.Fatal(err)
					}
				}
			}
			s.l.Bus.Wait()
			j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
			got := finalState{Status: j.Status, Succeeded: j.Succeeded, Failed: j.Failed, BadLines: j.BadLines,
				Results: len(allResults(t, cs, h.JobID, "", 500))}
			if want == nil {
				want = &got
				if got.Status != "partially_completed" || got.Results != 120 || got.Failed != 12 {
					t.Fatalf("baseline = %+v", got)
				}
				return
			}
			if got != *want {
				t.Errorf("final state %+v, want %+v", got, *want)
			}
		})
	}
})

var _ = flow("Cancel", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{FailEvery: 10})
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
	c := call[mcpserver.CancelOut](t, cs, "cancel_job", map[string]any{"job_id": h.JobID})
	if c.Status != "cancelling" {
		t.Fatalf("cancel = %+v", c)
	}
	s.settle()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "cancelled" || !j.Terminal {
		t.Fatalf("after stop: %+v", j)
	}
	again := call[mcpserver.CancelOut](t, cs, "cancel_job", map[string]any{"job_id": h.JobID})
	if again.Status != "cancelled" {
		t.Errorf("second cancel = %+v", again)
	}
})

func TestLocalEventsEndpoint(t *testing.T) {
	s := newSuite(t)
	sample, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "bedrock", "Completed.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		body string
		want int
		msg  string
	}{
		{"bedrock event for an unknown job is acknowledged", string(sample), http.StatusAccepted, ""},
		{"not json", "nope", http.StatusBadRequest, "not JSON"},
		{"unknown shape", `{"hello":"world"}`, http.StatusBadRequest, "EventBridge"},
		{"unknown source", `{"source":"aws.s3","detail-type":"Object Created","detail":{}}`, http.StatusBadRequest, "aws.s3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/local/events", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Test-Owner", "ops") // the suite's stand-in for the dev key
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || !strings.Contains(string(b), tc.msg) {
				t.Errorf("status %d body %q, want %d containing %q", resp.StatusCode, b, tc.want, tc.msg)
			}
		})
	}
}

func BenchmarkSubmit10k(b *testing.B) {
	l, err := local.New(context.Background(), local.Options{Dir: b.TempDir(), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Owner: func(*http.Request) (string, error) { return "bench", nil }})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	recs := make([]map[string]any, 10_000)
	for i := range recs {
		recs[i] = map[string]any{"id": fmt.Sprintf("r%05d", i), "prompt": fmt.Sprintf("Classify support ticket %d into billing, bug or question.", i)}
	}
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "submit_batch", Arguments: map[string]any{"model": haiku, "records": recs}})
		if err != nil || res.IsError {
			b.Fatalf("%v %s", err, text(res))
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/submit")
	}
}

// With the reconciler, a full Bedrock quota queues the job instead of failing
// it: with quota 2 and 5 jobs, 3 wait as queued and all 5 start and complete in
// the order they came.
func TestQuotaQueuesAndDrainsInOrder(t *testing.T) {
	s := newSuite(t)
	s.l.Sim.MaxJobsPerModel = 2
	s.l.Service.Batch.DefaultQuota = 2
	cs := s.client("alice")
	var ids []string
	for range 5 {
		h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(100)})
		ids = append(ids, h.JobID)
	}
	statuses := func() []string {
		var out []string
		for _, id := range ids {
			out = append(out, call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": id}).Status)
		}
		return out
	}
	if got, want := strings.Join(statuses(), ","), "submitted,submitted,queued,queued,queued"; got != want {
		t.Fatalf("statuses after submit = %s, want %s", got, want)
	}
	if j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": ids[2]}); j.ProviderStatus != "WaitingForQuota" || j.Error != "" {
		t.Errorf("queued job = %+v, want provider_status WaitingForQuota and no error", j)
	}
	// The Bedrock quota is the simulator's too: nothing may exceed it at any point.
	var started []string
	for round := 0; round < 10; round++ {
		s.settle()
		rep, err := s.l.Service.Reconciler.Reconcile(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Submitted > 2 {
			t.Fatalf("round %d submitted %d jobs with a quota of 2", round, rep.Submitted)
		}
		s.l.Bus.Wait()
		done := 0
		for _, st := range statuses() {
			if st == "completed" || st == "partially_completed" {
				done++
			}
		}
		if done == 5 {
			break
		}
	}
	for _, id := range ids {
		j, err := s.l.Service.Queries.Get(context.Background(), "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		if !j.Status.Terminal() || j.Succeeded+j.Failed != 100 {
			t.Fatalf("job %s = %s with %d+%d records, want all 100 ingested", id, j.Status, j.Succeeded, j.Failed)
		}
		started = append(started, j.SubmittedAt.Format(time.RFC3339Nano))
	}
	for i := 1; i < len(started); i++ {
		if started[i] < started[i-1] {
			t.Errorf("job %d started at %s before job %d at %s: queue order broken", i+1, started[i], i, started[i-1])
		}
	}
}
