package local_test

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

// Bedrock text models run through Converse in make dev, against the strict
// simulators (which hold their own Converse rules): a PDF in a batch job read
// visually (citations on for Claude), a document alone in its message given a
// text block, Mistral 7B's system prompt folded into the first turn, each with
// the job's warning.
func TestConverseEndToEnd(t *testing.T) {
	pdf := map[string]any{"type": "document", "name": "Invoice March", "source": map[string]any{
		"type": "base64", "media_type": "application/pdf", "data": base64.StdEncoding.EncodeToString([]byte(onePagePDF))}}
	docRecords := func(n int, withText bool) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			blocks := []any{pdf}
			if withText {
				blocks = append(blocks, map[string]any{"type": "text", "text": fmt.Sprintf("What is the total of invoice %d?", i)})
			}
			out[i] = map[string]any{"id": fmt.Sprintf("inv-%03d", i), "messages": []any{map[string]any{"role": "user", "content": blocks}}}
		}
		return out
	}
	cases := []struct {
		name, model, mode string
		records           []map[string]any
		system            string
		wantSeen          string // in every answer
		wantWarning       string // in the job's warnings ("" none)
	}{
		{name: "a PDF in a Bedrock batch job", model: sonnet45, mode: "batch", records: docRecords(100, true),
			wantSeen: "saw application/pdf 1 pages, "},
		{name: "a document alone in its message gets a text block", model: sonnet45, mode: "batch", records: docRecords(100, false),
			wantSeen: "saw application/pdf 1 pages, ", wantWarning: content.TextAddedWarning},
		{name: "Mistral 7B with a system prompt", model: "mistral.mistral-7b-instruct-v0:2", mode: "on_demand", records: records(12),
			system: "You are terse.", wantWarning: bedrock.FoldedWarning("mistral.mistral-7b-instruct-v0:2")},
		{name: "Llama prompts in a batch job, no family body", model: "meta.llama3-3-70b-instruct-v1:0", mode: "batch", records: records(100)},
	}
	s := newSuiteFailing(t, 0)
	cs := s.client("alice")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"model": tc.model, "records": tc.records, "mode": tc.mode, "max_tokens": 200}
			if tc.system != "" {
				args["system"] = tc.system
			}
			// A dry run shows the warnings the job will carry; the submit result too.
			args["dry_run"] = true
			d := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
			if tc.wantWarning != "" && (d.DryRun == nil || !slices.Contains(d.DryRun.Warnings, tc.wantWarning)) {
				t.Errorf("dry run %+v lacks the warning %q", d.DryRun, tc.wantWarning)
			}
			delete(args, "dry_run")
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
			if tc.wantWarning != "" && !slices.Contains(h.Warnings, tc.wantWarning) {
				t.Errorf("submit result warnings %q lack %q", h.Warnings, tc.wantWarning)
			}
			j := s.finish(cs, h.JobID)
			if j.Status != "completed" || j.Succeeded != len(tc.records) || j.BadLines != 0 {
				t.Fatalf("job %+v", j)
			}
			if j.InputTokens == 0 || j.OutputTokens == 0 {
				t.Errorf("tokens not counted: in %d out %d", j.InputTokens, j.OutputTokens)
			}
			if tc.wantWarning != "" && !slices.Contains(j.Warnings, tc.wantWarning) {
				t.Errorf("warnings %q lack %q", j.Warnings, tc.wantWarning)
			}
			// Claude Sonnet 4.5 is legacy on Bedrock (end of life 2027-04-08): that warning is not the content's.
			if content := slices.DeleteFunc(slices.Clone(j.Warnings), func(w string) bool { return strings.Contains(w, ") is legacy since ") }); tc.wantWarning == "" && len(content) > 0 {
				t.Errorf("warnings %q, want none", content)
			}
			for _, r := range allResults(t, cs, h.JobID, "succeeded", 100)[:3] {
				if !strings.HasPrefix(r.Output, "[simulated]") || !strings.Contains(r.Output, tc.wantSeen) || strings.Contains(r.Output, "extracted text") {
					t.Errorf("record %s output %q, want a simulated answer showing %q read visually", r.ID, r.Output, tc.wantSeen)
				}
				// Citations on: the answer's citationsContent text is part of the output.
				if tc.wantSeen != "" && !strings.Contains(r.Output, "as Invoice March says on page 1.") {
					t.Errorf("record %s output %q lacks the cited text", r.ID, r.Output)
				}
			}
		})
	}
}

// A toolConfig in a Converse job is refused at submit (Bedrock fails such
// records with 400), naming the record and the field, and nothing is created.
func TestConverseToolConfigRefusedAtSubmit(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	recs := records(100)
	recs[7] = map[string]any{"id": "with-tools", "model_input": map[string]any{
		"messages":   []any{map[string]any{"role": "user", "content": []any{map[string]any{"text": "weather?"}}}},
		"toolConfig": map[string]any{"tools": []any{map[string]any{"toolSpec": map[string]any{"name": "w", "inputSchema": map[string]any{"json": map[string]any{}}}}}},
	}}
	msg := toolErr(t, cs, "submit_batch", map[string]any{"model": sonnet45, "records": recs})
	for _, w := range []string{"records[7].model_input.toolConfig", "Converse", "toolConfig"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
	if list := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{}); len(list.Jobs) != 0 {
		t.Fatalf("a refused submit created jobs: %+v", list.Jobs)
	}
}
