//go:build linux

package functions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// toolCallEvent is the IAM caller's Function URL request of one tools/call.
func toolCallEvent(t testing.TB, tool string, args any) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(functionURLEvent(t, true), &ev); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	ev["body"] = string(body)
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMCPDryRunCountsTokens runs the built mcp bootstrap under the RIE with
// its AWS wiring (DynamoDB and S3 in moto) and the bedrock-runtime client
// sent to the simulator: a Bedrock dry run counts its input with
// CountTokens, as the submit_batch documentation promises and make dev does.
func TestMCPDryRunCountsTokens(t *testing.T) {
	st := newStack(t)
	rt := &sim.RuntimeSim{}
	url, err := rt.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	st.extraEnv = []string{"AWS_ENDPOINT_URL_BEDROCK_RUNTIME=" + url}
	fn := startLambda(t, "mcp", st)

	var recs []map[string]string
	for i := range 120 {
		recs = append(recs, map[string]string{"id": fmt.Sprintf("q%03d", i), "prompt": strings.Repeat("count me ", 1+i%7)})
	}
	status, _, body := streamed(t, fn.invoke(t, toolCallEvent(t, "submit_batch", map[string]any{
		"model": "anthropic.claude-haiku-4-5-20251001-v1:0", "records": recs, "mode": "batch", "dry_run": true})))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			DryRun struct {
				Counted *struct {
					Method   string `json:"method"`
					Sampled  int    `json:"sampled"`
					Estimate int64  `json:"estimate"`
				} `json:"counted_input"`
				NotCounted string `json:"not_counted"`
			} `json:"dry_run"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(jsonRPCResult(t, body), &res); err != nil {
		t.Fatal(err)
	}
	dr := res.StructuredContent.DryRun
	if res.IsError || dr.Counted == nil {
		t.Fatalf("dry run not counted (error %v, not_counted %q): %s", res.IsError, dr.NotCounted, body)
	}
	if !strings.HasPrefix(dr.Counted.Method, "Bedrock CountTokens") || dr.Counted.Sampled != len(recs) || dr.Counted.Estimate <= 0 {
		t.Errorf("counted %+v, want Bedrock CountTokens on all %d records", *dr.Counted, len(recs))
	}
}
