// Command cost prints what AWS would bill the suite itself for a 1,000,000-record
// text batch job and a 1,000,000-document embedding job, next to the inference
// those jobs buy (make cost). It runs each job for real at a smaller scale in
// the local suite (make dev's simulators and storage, offline) with metered
// adapters (package cost), then extrapolates linearly to 1,000,000 and says so.
//
//	go run ./infra/cost -n 2000
//	go run ./infra/cost -json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/cost"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

const target = 1_000_000

// Record sizes the jobs are measured at, as the simulator counts tokens
// (one per 4 bytes): a text record of about 500 input tokens answered in
// about 200, a document of about 500 tokens embedded.
const (
	promptTokens = 500
	replyTokens  = 200
	docTokens    = 500
)

func main() {
	n := flag.Int("n", 2000, "records per job in the local run (extrapolated to 1,000,000)")
	asJSON := flag.Bool("json", false, "print one JSON document instead of the bills")
	flag.Parse()
	if err := run(context.Background(), *n, *asJSON, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
}

// jobSpec is one job to measure.
type jobSpec struct {
	title, model string
	records      func(n int) []map[string]any
}

// words makes about tokens tokens of varied text for record i.
func words(i, tokens int) string {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	var b strings.Builder
	for b.Len() < 4*tokens {
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		b.WriteByte(' ')
	}
	return b.String()
}

var vocabulary = strings.Fields(`customer wrote that the invoice for March shows a charge twice and the refund promised
last week has not arrived; the app crashes when the export button is pressed on a tablet; login fails after the password
reset email expires; shipping to the new address was confirmed but the order still lists the old one; the plan upgrade
did not apply the discount code; support closed the ticket without an answer and the customer asks for escalation`)

func textJob(title, model string) jobSpec {
	return jobSpec{title, model, func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"id": fmt.Sprintf("t%07d", i), "prompt": fmt.Sprintf("Classify support ticket %d into billing, bug or question, and say why: %s", i, words(i, promptTokens))}
		}
		return out
	}}
}

var jobs = []jobSpec{
	textJob("text batch job (Claude Haiku 4.5, Bedrock batch)", "anthropic.claude-haiku-4-5-20251001-v1:0"),
	textJob("text batch job (Nova Micro, Bedrock batch)", "amazon.nova-micro-v1:0"),
	{"embedding job (Titan Text Embeddings V2, 1024 dimensions, Bedrock batch)", "amazon.titan-embed-text-v2:0", func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			body, _ := json.Marshal(map[string]any{"inputText": fmt.Sprintf("Document %d: %s", i, words(i, docTokens)), "dimensions": 1024})
			out[i] = map[string]any{"id": fmt.Sprintf("e%07d", i), "model_input": json.RawMessage(body)}
		}
		return out
	}},
}

// layouts are the record layouts each job is priced with, from one run.
var layouts = []struct{ name, title string }{
	{"packed", "records packed in pages"},
	{"per-record", "today's layout, one item per record"},
}

// Line is one job priced with one layout, per 1,000,000 records (-json).
type Line struct {
	Title                 string  `json:"title"`
	Model                 string  `json:"model"`
	Layout                string  `json:"layout"`
	Records               int     `json:"records"`
	InputTokensPerRecord  int64   `json:"input_tokens_per_record"`
	OutputTokensPerRecord int64   `json:"output_tokens_per_record"`
	SuiteUSD              float64 `json:"suite_usd"`
	InferenceUSD          float64 `json:"inference_usd"`
	// Share is suite_usd / inference_usd.
	Share float64 `json:"share"`
}

func run(ctx context.Context, n int, asJSON bool, out io.Writer) error {
	cat := model.Default()
	if !asJSON {
		fmt.Fprintf(out, "The suite's own AWS bill (us-east-1 list prices as of %s) next to the inference it buys.\n", cost.USEast1.AsOf)
		fmt.Fprintf(out, "Each job ran for real with %d records in the local suite (simulators, metered adapters) and is\n", n)
		fmt.Fprintf(out, "extrapolated LINEARLY to %d records (×%.0f). Prices: %s, %s, %s, %s, %s, %s.\n", target, float64(target)/float64(n),
			cost.USEast1.LambdaSource, cost.USEast1.DynamoSource, cost.USEast1.S3Source, cost.USEast1.EventsSource, cost.USEast1.SNSSource, cost.USEast1.LogsSource)
		fmt.Fprintf(out, "Each job is priced twice from its one run: results packed in pages, and in today's layout (one item per record).\n\n")
	}
	var lines []Line
	for _, js := range jobs {
		packed, today, view, err := measure(ctx, js, n)
		if err != nil {
			return fmt.Errorf("%s: %w", js.title, err)
		}
		f := float64(target) / float64(n)
		m, ok := cat.Lookup(js.model)
		if !ok {
			return fmt.Errorf("model %s not in the catalog", js.model)
		}
		inf := m.Cost(model.Usage{Input: int64(float64(view.InputTokens) * f), Output: int64(float64(view.OutputTokens) * f)}, model.BasisBatch)
		for i, u := range []cost.Usage{packed, packed.WithKind("record", today)} {
			bill := u.Scale(f).Bill(cost.USEast1)
			suite := cost.Total(bill)
			l := Line{Title: js.title, Model: js.model, Layout: layouts[i].name, Records: target,
				InputTokensPerRecord: view.InputTokens / int64(n), OutputTokensPerRecord: view.OutputTokens / int64(n),
				SuiteUSD: suite, InferenceUSD: inf.Total}
			if inf.Total > 0 {
				l.Share = suite / inf.Total
			}
			lines = append(lines, l)
			if asJSON {
				continue
			}
			fmt.Fprintf(out, "== %s, %d records, %s\n", js.title, target, layouts[i].title)
			for _, b := range bill {
				fmt.Fprintln(out, "  "+b.String())
			}
			fmt.Fprintf(out, "  suite's own cost:  $%.4f\n", suite)
			fmt.Fprintf(out, "  inference cost:    $%.4f (batch prices; %d input and %d output tokens per record as the simulator counted them)\n",
				inf.Total, l.InputTokensPerRecord, l.OutputTokensPerRecord)
			if inf.Total > 0 {
				fmt.Fprintf(out, "  suite / inference: %.2f%%\n", 100*l.Share)
			}
			fmt.Fprintln(out)
		}
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Jobs []Line `json:"jobs"`
		}{lines})
	}
	return nil
}

// measure runs one job of n records through the metered local suite and
// returns what it used, what its record items would have used in today's
// layout, and the job's final view.
func measure(ctx context.Context, js jobSpec, n int) (cost.Usage, cost.Usage, mcpserver.JobView, error) {
	dir, err := os.MkdirTemp("", "mcpbatch-cost-")
	if err != nil {
		return cost.Usage{}, cost.Usage{}, mcpserver.JobView{}, err
	}
	defer os.RemoveAll(dir)
	m, today := &cost.Meter{}, &cost.Meter{}
	// What the functions log at INFO, as in Lambda, is CloudWatch Logs ingestion.
	log := slog.New(slog.NewJSONHandler(logBytes{m}, nil))
	l, err := local.New(ctx, local.Options{Dir: dir, Log: log, Meter: m, RecordsToday: today, ReplyTokens: replyTokens, Models: []string{js.model}, StepDelay: time.Millisecond,
		Owner: func(*http.Request) (string, error) { return "cost", nil }})
	if err != nil {
		return cost.Usage{}, cost.Usage{}, mcpserver.JobView{}, err
	}
	defer l.Close()
	srv := httptest.NewServer(invocations(m, l.Handler()))
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cost", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		return cost.Usage{}, cost.Usage{}, mcpserver.JobView{}, err
	}
	defer cs.Close()
	var h mcpserver.JobHandle
	if err := local.CallTool(ctx, cs, "submit_batch", map[string]any{"model": js.model, "records": js.records(n)}, &h); err != nil {
		return cost.Usage{}, cost.Usage{}, mcpserver.JobView{}, err
	}
	var view mcpserver.JobView
	for deadline := time.Now().Add(5 * time.Minute); ; {
		if err := l.Sim.Settle(ctx); err != nil {
			return cost.Usage{}, cost.Usage{}, view, err
		}
		l.Bus.Wait()
		if err := local.CallTool(ctx, cs, "get_job", map[string]any{"job_id": h.JobID}, &view); err != nil {
			return cost.Usage{}, cost.Usage{}, view, err
		}
		if view.Terminal {
			break
		}
		if time.Now().After(deadline) {
			return cost.Usage{}, cost.Usage{}, view, fmt.Errorf("job %s still %s after 5 minutes", h.JobID, view.Status)
		}
	}
	if view.Succeeded+view.Failed != n {
		return cost.Usage{}, cost.Usage{}, view, fmt.Errorf("job %s ended %s with %d succeeded and %d failed of %d", h.JobID, view.Status, view.Succeeded, view.Failed, n)
	}
	// The caller reads every result once, page by page, as a client would.
	for cursor := ""; ; {
		var page mcpserver.ResultsOut
		args := map[string]any{"job_id": h.JobID, "limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		if err := local.CallTool(ctx, cs, "get_job_results", args, &page); err != nil {
			return cost.Usage{}, cost.Usage{}, view, err
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if fi, err := l.MetricsFile.Stat(); err == nil {
		m.Log(int(fi.Size()), true)
	}
	return m.Usage(), today.Usage(), view, nil
}

// invocations counts each /mcp request as one invocation of the mcp function.
func invocations(m *cost.Meter, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		h.ServeHTTP(w, r)
		if strings.HasPrefix(r.URL.Path, "/mcp") {
			m.Invoke("mcp", local.FunctionMemoryMB["mcp"], time.Since(t0))
			m.Log(lambdaReportBytes, false)
		}
	})
}

// lambdaReportBytes is about what Lambda itself logs per invocation (START,
// END and REPORT lines); the routed functions add it in local.route's count too.
const lambdaReportBytes = 320

type logBytes struct{ m *cost.Meter }

func (l logBytes) Write(p []byte) (int, error) {
	l.m.Log(len(p), false)
	return len(p), nil
}
