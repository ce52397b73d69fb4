//go:build linux

package functions_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// toolCall is the Function URL request of an IAM caller's tools/call.
func toolCall(t *testing.T, name string, args any) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(sample(t, "iam", "tools-call-get-job", false), &ev); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	ev["body"] = string(body)
	out, _ := json.Marshal(ev)
	return out
}

// oneAtATime is a proxy to RIE that passes one invoke at a time: RIE serves
// a single instance, and a second concurrent invoke crashes it, where Lambda
// would start another instance. While throttled is set it answers as Lambda
// does for a function at its concurrency limit (429), without running it.
func oneAtATime(t *testing.T, target string, throttled *atomic.Bool) string {
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if throttled.Load() {
			w.Header().Set("X-Amzn-Errortype", "TooManyRequestsException")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"Reason":"ReservedFunctionConcurrentInvocationLimitExceeded","Type":"User","message":"Rate Exceeded."}`)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestMCPReachesProvidersUnderRIE runs the mcp and providers bootstraps, each
// under its own RIE, mcp invoking providers through Lambda's Invoke API as
// deployed: an Anthropic dry run counts its records with the simulator's
// count_tokens, a submit creates the Message Batch, cancel_job cancels it,
// describe_endpoint of an endpoint SageMaker (moto) does not know comes back
// as SageMaker's refusal, and with the providers function throttled a submit
// waits queued for the reconciler. mcp links neither the Anthropic SDK nor the SageMaker
// control plane, and never holds the API key.
func TestMCPReachesProvidersUnderRIE(t *testing.T) {
	st := newStack(t)
	ctx := context.Background()
	const key = "sk-ant-rie-providers"
	as, _, anthropicEnv := anthropicForRIE(t, st, key)
	st.extraEnv = []string{"MCPBATCH_SAGEMAKER_ENDPOINTS=ghost-endpoint"}
	prov := startLambda(t, "providers", st, anthropicEnv...)
	var throttled atomic.Bool
	st.providers = oneAtATime(t, strings.TrimSuffix(prov.url, "/2015-03-31/functions/function/invocations"), &throttled)
	mcp := startLambda(t, "mcp", st)

	call := func(t *testing.T, name string, args any) (bool, string, json.RawMessage) {
		t.Helper()
		status, _, body := streamed(t, mcp.invoke(t, toolCall(t, name, args)))
		if status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", name, status, body)
		}
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(jsonRPCResult(t, body), &res); err != nil {
			t.Fatal(err)
		}
		var text []string
		for _, c := range res.Content {
			text = append(text, c.Text)
		}
		return res.IsError, strings.Join(text, "\n"), res.StructuredContent
	}
	records := []map[string]any{{"id": "a", "prompt": "Name three rivers."}, {"id": "b", "prompt": "Name a mountain range in Europe, and say why it formed."}}
	submit := map[string]any{"model": "claude-haiku-4-5", "provider": "anthropic", "records": records, "max_tokens": 64}

	dry := map[string]any{"dry_run": true}
	for k, v := range submit {
		dry[k] = v
	}
	isErr, text, _ := call(t, "submit_batch", dry)
	if isErr || !strings.Contains(text, "Input counted by Anthropic count_tokens") {
		t.Fatalf("dry run (error %v): %s", isErr, text)
	}
	if n := as.Calls()["count_tokens"]; n != len(records) {
		t.Errorf("the simulator counted %d records, want %d", n, len(records))
	}

	isErr, text, sc := call(t, "submit_batch", submit)
	if isErr {
		t.Fatalf("submit: %s", text)
	}
	jobID := func(sc json.RawMessage) string {
		t.Helper()
		var sub struct {
			JobID string `json:"job_id"`
		}
		if err := json.Unmarshal(sc, &sub); err != nil || sub.JobID == "" {
			t.Fatalf("submit answer %s: %v", sc, err)
		}
		return sub.JobID
	}
	submitted := jobID(sc)
	j, err := st.store.GetJob(ctx, submitted)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Parts) != 1 || j.Parts[0].Ref == "" || j.Parts[0].Status != job.StatusSubmitted {
		t.Fatalf("job parts %+v, want one submitted batch", j.Parts)
	}
	ref := j.Parts[0].Ref
	if _, ok := as.Statuses()[ref]; !ok || as.Calls()["create"] != 1 {
		t.Fatalf("the simulator has batches %v and %d creates, want %s once", as.Statuses(), as.Calls()["create"], ref)
	}

	if isErr, text, _ := call(t, "cancel_job", map[string]any{"job_id": submitted}); isErr {
		t.Fatalf("cancel: %s", text)
	}
	if s := as.Statuses()[ref]; s != "canceling" && s != "ended" {
		t.Errorf("batch %s is %s after cancel_job, want canceling", ref, s)
	}

	isErr, text, _ = call(t, "describe_endpoint", map[string]any{"endpoint_name": "ghost-endpoint"})
	if !isErr || !strings.Contains(text, "ghost-endpoint") || !strings.Contains(text, "SageMaker refused the request") {
		t.Errorf("describe_endpoint of an unknown endpoint (error %v): %s", isErr, text)
	}

	// With Lambda refusing to run the providers function, a submit is not
	// lost: its part stays queued, and the reconciler, which calls Anthropic
	// itself, creates the batch.
	throttled.Store(true)
	isErr, text, sc = call(t, "submit_batch", submit)
	if isErr {
		t.Fatalf("submit without providers: %s", text)
	}
	queued := jobID(sc)
	if j, err := st.store.GetJob(ctx, queued); err != nil || j.Parts[0].Ref != "" || j.Parts[0].Status != job.StatusQueued {
		t.Fatalf("job %+v (%v), want its part queued", j, err)
	}
	rec := startLambda(t, "reconciler", st, anthropicEnv...)
	rec.invoke(t, readFile(t, "../events/schedule/reconcile.json"))
	j, err = st.store.GetJob(ctx, queued)
	if err != nil || j.Parts[0].Ref == "" || as.Calls()["create"] != 2 {
		t.Fatalf("after the reconciler: part %+v (%v), %d creates", j.Parts[0], err, as.Calls()["create"])
	}
	for _, p := range []*lambdaProc{mcp, prov, rec} {
		if strings.Contains(p.out.String(), key) {
			t.Errorf("the API key appears in the %s function's logs", p.fn)
		}
	}
}
