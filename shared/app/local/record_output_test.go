package local_test

import (
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// A record's own model_input sends its own output cap (max_tokens, Converse's
// inferenceConfig.maxTokens) over the job's max_tokens: the dry run and the
// budget price what will be sent. Server tools, billed per use beyond any
// estimate, are refused in records.
func TestRecordOutputCapIsPriced(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	for _, c := range []struct {
		name, model, body string
	}{
		{"anthropic max_tokens", claudeHaiku, `{"messages":[{"role":"user","content":"write a lot"}],"max_tokens":4000}`},
		{"converse maxTokens", sonnet45, `{"messages":[{"role":"user","content":[{"text":"write a lot"}]}],"inferenceConfig":{"maxTokens":4000}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := records(100)
			for i := range 10 {
				recs[i] = map[string]any{"model_input": rawJSON(c.body)}
			}
			dry := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": c.model, "records": recs, "max_tokens": 100, "mode": "batch", "dry_run": true})
			if want := int64(10*4000 + 90*100); dry.DryRun.MaxOutputTokens != want {
				t.Errorf("max_output_tokens %d, want %d (10 records send 4000 each)", dry.DryRun.MaxOutputTokens, want)
			}
			// A budget that covers max_tokens × records but not what is sent.
			plain := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": c.model, "records": records(100), "max_tokens": 100, "mode": "batch", "dry_run": true})
			msg := toolErr(t, cs, "submit_batch", map[string]any{"model": c.model, "records": recs, "max_tokens": 100, "mode": "batch", "budget_usd": plain.DryRun.Cost.Total * 1.5})
			if !strings.Contains(msg, "budget_usd") {
				t.Errorf("submit over its budget by what is sent: %q, want refused", msg)
			}
		})
	}
	recs := records(100)
	recs[4] = map[string]any{"model_input": rawJSON(`{"messages":[{"role":"user","content":"news?"}],"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5}]}`)}
	msg := toolErr(t, cs, "submit_batch", map[string]any{"model": claudeHaiku, "records": recs, "dry_run": true})
	if !strings.Contains(msg, "records[4].model_input.tools[0]") || !strings.Contains(msg, "web_search_20250305") {
		t.Errorf("server tool in a record: %q, want it refused naming the field", msg)
	}
}
