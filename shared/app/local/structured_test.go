package local_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// Models of the structured-output flow besides haiku and claudeHaiku
// (both constrain their output natively, model.NativeOutput): Nova Lite on
// Bedrock is prompted (Claude Sonnet 4 was, until its end of life on
// 2026-10-14), Sonnet 4.6 on the Claude API native.
const (
	bedrockPrompted = "amazon.nova-lite-v1:0"
	claudeSonnet46  = "claude-sonnet-4-6"
)

var ticketCategories = []string{"billing", "bug", "feature", "other"}

// ticketSchema is a full schema: a category, a confidence and a summary.
var ticketSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"category":   map[string]any{"type": "string", "enum": []any{"billing", "bug", "feature", "other"}},
		"confidence": map[string]any{"type": "number"},
		"summary":    map[string]any{"type": "string"},
	},
	"required":             []any{"category", "confidence", "summary"},
	"additionalProperties": false,
}

// tickets are n support tickets of a batch named tag, each naming one
// category in its text.
func tickets(n int, tag string) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"id": fmt.Sprintf("t%03d", i),
			"prompt": fmt.Sprintf("Ticket %d of %s: the customer writes about a %s problem with their account.", i, tag, ticketCategories[i%len(ticketCategories)])}
	}
	return out
}

// A 150-record classification job on each path (Bedrock batch, Bedrock on
// demand, Anthropic Message Batches), with the categories shortcut on a
// model that constrains its output natively and with a full schema on
// one that is prompted: every valid output is stored as an object, the
// simulator's violations fail as schema_violation / parse_failed naming
// where, and retry_failed gives every record a conforming answer in the
// merged view. A schema the provider would refuse is refused at submit.
var _ = flow("StructuredOutputs", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{SchemaViolations: 0.1})
	cs := s.client("alice")

	refusal := toolErr(t, cs, "submit_batch", map[string]any{"model": haiku, "records": tickets(150, "refused"),
		"output_schema": map[string]any{"type": "object", "properties": map[string]any{"summary": map[string]any{"type": "string", "maxLength": 80}}, "additionalProperties": false}})
	if !strings.Contains(refusal, "output_schema.properties.summary.maxLength") || !strings.Contains(refusal, "Amazon Bedrock") {
		t.Errorf("a schema Bedrock's structured outputs refuse: %q, want a refusal naming the schema path and the API", refusal)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		// path the records take; violation codes the simulator's broken answers fail with
		path  string
		codes []string
	}{
		{"bedrock batch categories", map[string]any{"model": haiku, "categories": ticketCategories, "confidence": true}, job.PathBatch, []string{job.RecordParseFailed}},
		{"bedrock batch schema", map[string]any{"model": bedrockPrompted, "output_schema": ticketSchema}, job.PathBatch, []string{job.RecordSchemaViolation}},
		{"on demand categories", map[string]any{"model": haiku, "mode": "on_demand", "categories": ticketCategories, "confidence": true}, job.PathOnDemand, []string{job.RecordParseFailed}},
		{"on demand schema", map[string]any{"model": bedrockPrompted, "mode": "on_demand", "output_schema": ticketSchema}, job.PathOnDemand, []string{job.RecordSchemaViolation}},
		{"anthropic categories", map[string]any{"model": claudeHaiku, "categories": ticketCategories, "confidence": true}, "", []string{job.RecordParseFailed}},
		{"anthropic schema", map[string]any{"model": claudeSonnet46, "output_schema": ticketSchema}, "", []string{job.RecordParseFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			args["records"] = tickets(150, tc.name)
			args["name"] = tc.name
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
			j := s.runToEnd(cs, h.JobID)
			if j.RecordCount != 150 || j.Failed == 0 || j.Succeeded+j.Failed != 150 {
				t.Fatalf("job = %+v, want 150 records, some failed by the simulator's violations", j)
			}
			t.Logf("%s: %d succeeded, %d failed by the simulator", tc.name, j.Succeeded, j.Failed)
			recs := allResults(t, cs, h.JobID, "", 100)
			failed := 0
			for _, r := range recs {
				switch r.Status {
				case "succeeded":
					checkTicket(t, r)
				case "failed":
					failed++
					if !slices.Contains(tc.codes, r.ErrorCode) || r.Output == "" || !strings.Contains(r.ErrorMessage, "output_schema") || r.OutputJSON != nil {
						t.Errorf("failed record %s = %+v, want code %v, its raw output kept and no output_json", r.ID, r, tc.codes)
					}
					if r.ErrorCode == job.RecordSchemaViolation && !strings.Contains(r.ErrorMessage, "at /") && !strings.Contains(r.ErrorMessage, "missing") {
						t.Errorf("violation of %s does not say where: %q", r.ID, r.ErrorMessage)
					}
				}
				if tc.path != "" && r.Path != tc.path {
					t.Errorf("record %s path %q, want %s", r.ID, r.Path, tc.path)
				}
			}
			if failed != j.Failed {
				t.Errorf("%d failed results, get_job says %d", failed, j.Failed)
			}
			checkSummary(t, cs, h.JobID, false, recs)
			if tc.name == "bedrock batch schema" {
				checkParquet(t, cs, h.JobID, recs)
			}
			retry := call[mcpserver.RetryOut](t, cs, "retry_failed", map[string]any{"job_id": h.JobID, "which": "retryable"})
			if retry.RecordCount != j.Failed {
				t.Fatalf("retry of %d records, want the %d violations (retryable)", retry.RecordCount, j.Failed)
			}
			if rj := s.runToEnd(cs, retry.JobID); rj.Succeeded != j.Failed || rj.Failed != 0 {
				t.Fatalf("retry job = %+v, want every retried record to conform", rj)
			}
			merged := latestResults(t, s, h.JobID, 500)
			if len(merged) != 150 {
				t.Fatalf("merged view has %d records, want 150", len(merged))
			}
			for _, r := range merged {
				if r.Status != "succeeded" {
					t.Errorf("merged record %s = %+v, want succeeded after the retry", r.ID, r)
					continue
				}
				checkTicket(t, r)
			}
			checkSummary(t, cs, h.JobID, true, merged)
		})
	}
})

// checkTicket holds a succeeded record's output_json to the ticket
// schema, by hand (not by the suite's validator): the category its prompt
// names, a confidence, and the text it came from.
func checkTicket(t *testing.T, r mcpserver.RecordOut) {
	t.Helper()
	v, ok := r.OutputJSON.(map[string]any)
	if !ok {
		t.Errorf("record %s output_json %#v is not an object", r.ID, r.OutputJSON)
		return
	}
	got, _ := json.Marshal(v)
	var i int
	fmt.Sscanf(r.ID, "t%d", &i)
	if v["category"] != ticketCategories[i%len(ticketCategories)] {
		t.Errorf("record %s category %v, want %s", r.ID, v["category"], ticketCategories[i%len(ticketCategories)])
	}
	if _, ok := v["confidence"].(float64); !ok {
		t.Errorf("record %s output_json %s has no confidence", r.ID, got)
	}
	if compact := compactJSON(t, r.Output); compact != string(got) {
		t.Errorf("record %s output_json %s is not its output %q", r.ID, got, r.Output)
	}
}

func compactJSON(t *testing.T, s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Errorf("output %q is not JSON: %v", s, err)
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkSummary holds summarize_results over the job (merged: after its
// retry) to the results it summarizes, counted here from recs.
func checkSummary(t *testing.T, cs *mcp.ClientSession, jobID string, merged bool, recs []mcpserver.RecordOut) {
	t.Helper()
	cats, codes := map[string]int{}, map[string]int{}
	succeeded, billing := 0, 0
	lo, hi := 2.0, -1.0
	for _, r := range recs {
		if r.Status != "succeeded" {
			codes[r.ErrorCode]++
			continue
		}
		succeeded++
		v := r.OutputJSON.(map[string]any)
		cats[v["category"].(string)]++
		if v["category"] == "billing" {
			billing++
		}
		c := v["confidence"].(float64)
		lo, hi = min(lo, c), max(hi, c)
	}
	sum := call[mcpserver.SummaryOut](t, cs, "summarize_results", map[string]any{"job_id": jobID, "field": "category", "stats_field": "confidence"})
	if sum.Records != len(recs) || sum.Succeeded != succeeded || sum.Failed != len(recs)-succeeded || sum.Missing != sum.Failed || sum.Other != 0 {
		t.Errorf("summary (merged %v) = %+v, want %d records, %d succeeded", merged, sum.Summary, len(recs), succeeded)
	}
	got := map[string]int{}
	for _, c := range sum.Values {
		got[c.Value] = c.Count
	}
	if fmt.Sprint(got) != fmt.Sprint(cats) {
		t.Errorf("summary by category (merged %v) = %v, the stored results say %v", merged, got, cats)
	}
	gotCodes := map[string]int{}
	for _, c := range sum.Failures {
		gotCodes[c.Value] = c.Count
	}
	if fmt.Sprint(gotCodes) != fmt.Sprint(codes) {
		t.Errorf("failures by code (merged %v) = %v, the stored results say %v", merged, gotCodes, codes)
	}
	if st := sum.Stats; st == nil || st.Count != succeeded || st.Min != lo || st.Max != hi || st.P50 < lo || st.P90 > hi {
		t.Errorf("confidence stats (merged %v) = %+v, want %d values in %g..%g", merged, sum.Stats, succeeded, lo, hi)
	}
	only := call[mcpserver.SummaryOut](t, cs, "summarize_results", map[string]any{"job_id": jobID, "where_field": "category", "where_value": "billing", "status": "succeeded"})
	if only.Records != billing || only.Succeeded != billing {
		t.Errorf("summary of billing records = %+v, want %d", only.Summary, billing)
	}
}
