package local_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// objects counts what the suite stored in its bucket (inputs, ids, results).
func objects(t *testing.T, s *suite) int {
	t.Helper()
	objs, err := s.l.Blobs.List(context.Background(), local.Bucket+"/")
	if err != nil {
		t.Fatal(err)
	}
	return len(objs)
}

// The model lifecycle at submit, through the MCP tools: a model at end of
// life is refused naming its date and successor with nothing created; a
// legacy one runs, and submit_batch and get_job say so. The operator
// override marks an allowed model as the provider would.
func TestLifecycleAtSubmit(t *testing.T) {
	const sonnet45, sonnet46 = "anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-6"
	cases := []struct {
		name, lifecycle string
	}{
		{"end of life", `{"status":"end_of_life","legacy_since":"2025-12-19","end_of_life":"2026-06-19","successor":"` + sonnet46 + `"}`},
		{"legacy", `{"status":"legacy","legacy_since":"2026-10-01","end_of_life":"2099-06-01","successor":"` + sonnet46 + `"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := haiku // legacy
			if tc.name == "end of life" {
				id = sonnet45
			}
			t.Setenv(model.EnvModelsJSON, `{"models":[{"id":"`+id+`","lifecycle":`+tc.lifecycle+`}]}`)
			s := newCleanSuite(t)
			cs := s.client("alice")
			args := map[string]any{"model": id, "records": records(120), "mode": "batch"}
			if tc.name == "end of life" {
				msg := toolErr(t, cs, "submit_batch", args)
				for _, w := range []string{"model", sonnet45, "end of life on 2026-06-19", "use " + sonnet46 + " instead", "nothing was submitted"} {
					if !strings.Contains(msg, w) {
						t.Errorf("refusal %q lacks %q", msg, w)
					}
				}
				if jobs := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{}); len(jobs.Jobs) != 0 {
					t.Errorf("list_jobs after a refusal: %+v", jobs.Jobs)
				}
				if n := len(s.l.Sim.Statuses()); n != 0 {
					t.Errorf("Bedrock holds %d jobs after a refusal", n)
				}
				if n := objects(t, s); n != 0 {
					t.Errorf("%d objects stored after a refusal", n)
				}
				return
			}
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
			want := "is legacy since 2026-10-01 and reaches its end of life on 2099-06-01; use " + sonnet46 + " instead"
			if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], want) {
				t.Errorf("submit_batch warnings = %q, want one containing %q", h.Warnings, want)
			}
			v := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
			if len(v.Warnings) != 1 || v.Warnings[0] != h.Warnings[0] {
				t.Errorf("get_job warnings = %q, want %q", v.Warnings, h.Warnings)
			}
		})
	}
}

// TestTemperatureRefusedForTheAnthropicAPI: the Anthropic SDK sends
// anthropic-version 2026-10-21, which refuses temperature for every model;
// submit_batch refuses it naming the field, the model and the version, and
// nothing is created: no job, no object, no call to the API.
func TestTemperatureRefusedForTheAnthropicAPI(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	before := objects(t, s)
	msg := toolErr(t, cs, "submit_batch", map[string]any{"model": "claude-haiku-4-5", "provider": "anthropic",
		"records": records(5), "temperature": 0.5})
	for _, w := range []string{"temperature", "claude-haiku-4-5", "2026-10-21", "leave it out"} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal %q lacks %q", msg, w)
		}
	}
	if jobs := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{}); len(jobs.Jobs) != 0 {
		t.Errorf("list_jobs after a refusal: %+v", jobs.Jobs)
	}
	if after := objects(t, s); after != before {
		t.Errorf("objects went from %d to %d on a refusal", before, after)
	}
	if n := s.l.Anthropic.Calls()["create"]; n != 0 {
		t.Errorf("the Anthropic API got %d batch creates", n)
	}
	// The same job without temperature runs.
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": "claude-haiku-4-5", "provider": "anthropic", "records": records(5)})
	if h.JobID == "" || s.l.Anthropic.Calls()["create"] != 1 {
		t.Errorf("submit without temperature: %+v, creates %d", h, s.l.Anthropic.Calls()["create"])
	}
}

// TestEndOfLifeOutsideTheAllowList: a model past its end of life that make
// dev does not allow is refused through submit_batch for its end of life,
// naming the date and the successor, not as "not allowed"; nothing is created.
func TestEndOfLifeOutsideTheAllowList(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	const haiku35 = "anthropic.claude-3-5-haiku-20241022-v1:0"
	msg := toolErr(t, cs, "submit_batch", map[string]any{"model": haiku35, "records": records(120), "mode": "batch"})
	for _, w := range []string{haiku35, "end of life on 2026-06-19", "use " + haiku + " instead", "nothing was submitted"} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal %q lacks %q", msg, w)
		}
	}
	if strings.Contains(msg, "not allowed") {
		t.Errorf("refusal %q says not allowed", msg)
	}
	if jobs := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{}); len(jobs.Jobs) != 0 {
		t.Errorf("list_jobs after a refusal: %+v", jobs.Jobs)
	}
}
