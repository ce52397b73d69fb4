// Command cost prints what AWS would bill the suite itself for a 1,000,000-record
// text batch job and a 1,000,000-document embedding job, next to the inference
// those jobs buy (make cost). It runs each job for real at a smaller scale in
// the local suite (make dev's simulators and storage, offline) with metered
// adapters (package cost), then extrapolates linearly to 1,000,000 and says so.
//
//	go run ./infra/cost -n 2000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
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

func main() {
	n := flag.Int("n", 2000, "records per job in the local run (extrapolated to 1,000,000)")
	flag.Parse()
	if err := run(context.Background(), *n, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
}

// jobSpec is one job to measure.
type jobSpec struct {
	title, model string
	records      func(n int) []map[string]any
}

var jobs = []jobSpec{
	{"text batch job (Claude Haiku 4.5, Bedrock batch)", "anthropic.claude-haiku-4-5-20251001-v1:0", func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"id": fmt.Sprintf("t%07d", i), "prompt": fmt.Sprintf("Classify support ticket %d into billing, bug or question, and say why in two sentences.", i)}
		}
		return out
	}},
	{"embedding job (Titan Text Embeddings V2, 1024 dimensions, Bedrock batch)", "amazon.titan-embed-text-v2:0", func(n int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			body := fmt.Sprintf(`{"inputText":"Document %d: %s","dimensions":1024}`, i, strings.Repeat("batch inference keeps costs down. ", 12))
			out[i] = map[string]any{"id": fmt.Sprintf("e%07d", i), "model_input": json.RawMessage(body)}
		}
		return out
	}},
}

func run(ctx context.Context, n int, out io.Writer) error {
	cat := model.Default()
	fmt.Fprintf(out, "The suite's own AWS bill (us-east-1 list prices as of %s) next to the inference it buys.\n", cost.USEast1.AsOf)
	fmt.Fprintf(out, "Each job ran for real with %d records in the local suite (simulators, metered adapters) and is\n", n)
	fmt.Fprintf(out, "extrapolated LINEARLY to %d records (×%.0f). Prices: %s, %s, %s, %s, %s, %s.\n\n", target, float64(target)/float64(n),
		cost.USEast1.LambdaSource, cost.USEast1.DynamoSource, cost.USEast1.S3Source, cost.USEast1.EventsSource, cost.USEast1.SNSSource, cost.USEast1.LogsSource)
	for _, js := range jobs {
		u, view, err := measure(ctx, js, n)
		if err != nil {
			return fmt.Errorf("%s: %w", js.title, err)
		}
		f := float64(target) / float64(n)
		bill := u.Scale(f).Bill(cost.USEast1)
		suite := cost.Total(bill)
		m, ok := cat.Lookup(js.model)
		if !ok {
			return fmt.Errorf("model %s not in the catalog", js.model)
		}
		inf := m.Cost(model.Usage{Input: int64(float64(view.InputTokens) * f), Output: int64(float64(view.OutputTokens) * f)}, model.BasisBatch)
		fmt.Fprintf(out, "== %s, %d records\n", js.title, target)
		for _, l := range bill {
			fmt.Fprintln(out, "  "+l.String())
		}
		fmt.Fprintf(out, "  suite's own cost:  $%.4f\n", suite)
		fmt.Fprintf(out, "  inference cost:    $%.4f (batch prices; %d input and %d output tokens per record as the simulator counted them)\n",
			inf.Total, view.InputTokens/int64(n), view.OutputTokens/int64(n))
		if inf.Total > 0 {
			fmt.Fprintf(out, "  suite / inference: %.2f%%\n", 100*suite/inf.Total)
		}
		fmt.Fprintln(out)
	}
	return nil
}

// measure runs one job of n records through the metered local suite and
// returns what it used and the job's final view.
func measure(ctx context.Context, js jobSpec, n int) (cost.Usage, mcpserver.JobView, error) {
	dir, err := os.MkdirTemp("", "mcpbatch-cost-")
	if err != nil {
		return cost.Usage{}, mcpserver.JobView{}, err
	}
	defer os.RemoveAll(dir)
	m := &cost.Meter{}
	// What the functions log at INFO, as in Lambda, is CloudWatch Logs ingestion.
	log := slog.New(slog.NewJSONHandler(logBytes{m}, nil))
	l, err := local.New(ctx, local.Options{Dir: dir, Log: log, Meter: m, StepDelay: time.Millisecond,
		Owner: func(*http.Request) (string, error) { return "cost", nil }})
	if err != nil {
		return cost.Usage{}, mcpserver.JobView{}, err
	}
	defer l.Close()
	srv := httptest.NewServer(invocations(m, l.Handler()))
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cost", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		return cost.Usage{}, mcpserver.JobView{}, err
	}
	defer cs.Close()
	var h mcpserver.JobHandle
	if err := local.CallTool(ctx, cs, "submit_batch", map[string]any{"model": js.model, "records": js.records(n)}, &h); err != nil {
		return cost.Usage{}, mcpserver.JobView{}, err
	}
	var view mcpserver.JobView
	for deadline := time.Now().Add(5 * time.Minute); ; {
		if err := l.Sim.Settle(ctx); err != nil {
			return cost.Usage{}, view, err
		}
		l.Bus.Wait()
		if err := local.CallTool(ctx, cs, "get_job", map[string]any{"job_id": h.JobID}, &view); err != nil {
			return cost.Usage{}, view, err
		}
		if view.Terminal {
			break
		}
		if time.Now().After(deadline) {
			return cost.Usage{}, view, fmt.Errorf("job %s still %s after 5 minutes", h.JobID, view.Status)
		}
	}
	if view.Succeeded+view.Failed != n {
		return cost.Usage{}, view, fmt.Errorf("job %s ended %s with %d succeeded and %d failed of %d", h.JobID, view.Status, view.Succeeded, view.Failed, n)
	}
	// The caller reads every result once, page by page, as a client would.
	for cursor := ""; ; {
		var page mcpserver.ResultsOut
		args := map[string]any{"job_id": h.JobID, "limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		if err := local.CallTool(ctx, cs, "get_job_results", args, &page); err != nil {
			return cost.Usage{}, view, err
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if fi, err := l.MetricsFile.Stat(); err == nil {
		m.Log(int(fi.Size()), true)
	}
	return m.Usage(), view, nil
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
