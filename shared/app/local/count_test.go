package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	rt "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	rttypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// A dry run of 5,000 records counts a sample with CountTokens and its
// interval contains the true count: the runtime simulator's own count of
// every record, asked of it directly.
func TestDryRunCountedInterval(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	const n = 5000
	recs, prompts := variedRecords(n)
	d := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": recs, "dry_run": true})
	if d.DryRun == nil || d.DryRun.Counted == nil {
		t.Fatalf("dry run %+v has no counted input", d.DryRun)
	}
	c := d.DryRun.Counted
	if c.Sampled != 400 || c.Records != n || c.Low > c.Estimate || c.Estimate > c.High || c.Low == c.High {
		t.Fatalf("counted %+v, want 400 of %d sampled and an interval around the estimate", c, n)
	}

	paths := map[string]batch.PathCost{}
	for _, p := range d.DryRun.Paths {
		paths[p.Path] = p
	}
	if d.DryRun.Auto != "batch" || paths["batch"].Cost.Total <= 0 || paths["batch"].Cost.Total >= paths["on_demand standard"].Cost.Total || d.DryRun.AutoWhy == "" {
		t.Errorf("paths %+v, auto %q (%s): want batch picked and cheaper than on demand", paths, d.DryRun.Auto, d.DryRun.AutoWhy)
	}
	// The same model on Anthropic's Message Batches, offered by this suite, as information.
	if a := paths["anthropic batch"]; !a.InfoOnly || a.Provider != "anthropic" || a.Model != claudeHaiku || a.Cost.Total <= 0 ||
		!strings.Contains(a.Note, "submit with provider anthropic and model "+claudeHaiku) {
		t.Errorf("anthropic batch path %+v, want the information-only Anthropic price with how to run it", a)
	}

	client := rt.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *rt.Options) { o.BaseEndpoint = aws.String(s.l.Reports.RuntimeURL) })
	var truth int64
	for _, p := range prompts {
		out, err := client.CountTokens(context.Background(), &rt.CountTokensInput{ModelId: aws.String(haiku),
			Input: &rttypes.CountTokensInputMemberConverse{Value: rttypes.ConverseTokensRequest{Messages: []rttypes.Message{{
				Role: rttypes.ConversationRoleUser, Content: []rttypes.ContentBlock{&rttypes.ContentBlockMemberText{Value: p}}}}}}})
		if err != nil {
			t.Fatal(err)
		}
		truth += int64(aws.ToInt32(out.InputTokens))
	}
	if truth < c.Low || truth > c.High {
		t.Errorf("true count %d outside the interval [%d, %d] (estimate %d)", truth, c.Low, c.High, c.Estimate)
	}
	t.Logf("true %d, estimate %d, 99%% interval [%d, %d] (±%.2f%%); chars/4 estimate %d", truth, c.Estimate, c.Low, c.High,
		100*float64(c.High-c.Low)/2/float64(truth), d.DryRun.EstimatedInputTokens)
}

// variedRecords are n prompt records whose lengths vary (3..~180 words), so
// a sample's spread is real.
func variedRecords(n int) ([]map[string]any, []string) {
	recs := make([]map[string]any, n)
	prompts := make([]string, n)
	for i := range recs {
		prompts[i] = fmt.Sprintf("Summarise fact #%d:%s", i, strings.Repeat(" lorem ipsum dolor", (i*7919)%61))
		recs[i] = map[string]any{"id": fmt.Sprintf("r%05d", i), "prompt": prompts[i]}
	}
	return recs, prompts
}

// A dry run of a 5,000-record Anthropic job counts 400 records with
// count_tokens through the SDK, and its interval contains the true count:
// the input the simulator bills when the same records run as a batch. Its
// paths list the Message Batches price, and auto keeps the batch.
func TestDryRunCountedIntervalAnthropic(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	const n = 5000
	recs, _ := variedRecords(n)
	d := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": recs, "dry_run": true})
	c := d.DryRun.Counted
	if c == nil {
		t.Fatalf("dry run %+v has no counted input", d.DryRun)
	}
	if c.Sampled != 400 || c.Records != n || c.Low > c.Estimate || c.Estimate > c.High || c.Low == c.High || !strings.Contains(c.Method, "Anthropic count_tokens") {
		t.Fatalf("counted %+v, want 400 of %d counted by Anthropic count_tokens and an interval around the estimate", c, n)
	}
	if calls := s.l.Anthropic.Calls()["count_tokens"]; calls != 400 {
		t.Errorf("%d count_tokens calls reached the simulator, want 400", calls)
	}
	if len(d.DryRun.Paths) != 1 {
		t.Fatalf("paths %+v, want the Message Batches path only", d.DryRun.Paths)
	}
	p := d.DryRun.Paths[0]
	if p.Path != "batch" || p.Provider != "anthropic" || !p.Cost.Priced || !strings.Contains(p.Note, "Anthropic Message Batches prices: input 50% below") || d.DryRun.Auto != "batch" {
		t.Errorf("path %+v, auto %q: want the Anthropic batch at 50%% off, picked", p, d.DryRun.Auto)
	}

	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": recs})
	s.l.Anthropic.Step()
	s.reconcile()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "completed" || j.Succeeded != n {
		t.Fatalf("job %+v, want %d records completed", j, n)
	}
	truth := j.InputTokens + j.CacheRead + j.CacheWrite
	if truth < c.Low || truth > c.High {
		t.Errorf("billed input %d outside the interval [%d, %d] (estimate %d)", truth, c.Low, c.High, c.Estimate)
	}
	t.Logf("billed %d, estimate %d, 99%% interval [%d, %d] (±%.2f%%); chars/4 estimate %d", truth, c.Estimate, c.Low, c.High,
		100*float64(c.High-c.Low)/2/float64(truth), d.DryRun.EstimatedInputTokens)
}

// When count_tokens answers 429 (after the SDK's retries), the dry run says
// so: from the first call, the input is not counted (fields, warning, text)
// and the estimate is priced; part way, the interval comes from the records
// counted so far, says how many, and still holds the billed input.
func TestDryRunCountThrottled(t *testing.T) {
	var calls, limit atomic.Int64
	s := newSuiteWith(t, local.Options{AnthropicCountBusy: func() bool { return calls.Add(1) > limit.Load() }})
	cs := s.client("alice")
	recs, _ := variedRecords(5000)
	dryRun := func() (*batch.DryRunResult, string) {
		t.Helper()
		calls.Store(0)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "submit_batch",
			Arguments: map[string]any{"model": claudeHaiku, "records": recs, "dry_run": true}})
		if err != nil || res.IsError {
			t.Fatalf("dry run: %v %s", err, text(res))
		}
		var h mcpserver.JobHandle
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatal(err)
		}
		return h.DryRun, text(res)
	}
	warned := func(d *batch.DryRunResult, what string) bool {
		return slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, what) })
	}

	limit.Store(0)
	d, txt := dryRun()
	if d.Counted != nil || !strings.Contains(d.NotCounted, "HTTP 429") || !warned(d, "not counted") {
		t.Fatalf("throttled from the start: %+v, want not counted (429) with a warning", d)
	}
	if len(d.Paths) != 1 || !d.Paths[0].Cost.Priced || d.Paths[0].Cost.Total <= 0 {
		t.Errorf("paths %+v, want the estimate priced", d.Paths)
	}
	if !strings.Contains(txt, "Input not counted: counting failed") {
		t.Errorf("answer text does not say the input was not counted:\n%s", txt)
	}

	limit.Store(150)
	d, txt = dryRun()
	c := d.Counted
	if c == nil || c.Sampled != 150 || !strings.Contains(c.Partial, "after 150 of 400") || !warned(d, "fewer records than planned") || !strings.Contains(txt, "Fewer records counted than planned") {
		t.Fatalf("throttled after 150: %+v (%s), want an interval from 150 counts that says so", c, txt)
	}
	limit.Store(1 << 30)
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": recs})
	s.l.Anthropic.Step()
	s.reconcile()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if truth := j.InputTokens + j.CacheRead + j.CacheWrite; j.Succeeded != 5000 || truth < c.Low || truth > c.High {
		t.Errorf("billed input %d (%d succeeded) outside the 150-count interval [%d, %d]", truth, j.Succeeded, c.Low, c.High)
	} else {
		t.Logf("billed %d, estimate from 150 counts %d, 99%% interval [%d, %d] (±%.2f%%)", truth, c.Estimate, c.Low, c.High, 100*float64(c.High-c.Low)/2/float64(truth))
	}
}
