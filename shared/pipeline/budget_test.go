package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// capture is a Submitter that keeps what it was asked and starts nothing.
type capture struct{ got *batch.SubmitRequest }

func (c *capture) Submit(_ context.Context, req batch.SubmitRequest) (*job.Job, error) {
	c.got = &req
	return nil, errors.New("captured (test double)")
}

// A run_pipeline caller's budget_usd may only lower the operator's: one over
// the pipeline's is refused at run_pipeline, and a tick that carries one
// (an event published by hand) runs at the pipeline's; without a pipeline
// budget the caller's applies.
func TestRunBudgetOnlyLowersThePipelines(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	dirs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dirs, "2026-11-30"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirs, "2026-11-30", "a.txt"), []byte("A ticket about billing."), 0o644); err != nil {
		t.Fatal(err)
	}
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pipeline, caller, want float64
		refused                string // run_pipeline's error ("" accepted)
	}{
		{100, 0, 100, ""},
		{100, 40, 40, ""},
		{100, 100, 100, ""},
		{100, 250, 100, "budget_usd: must be at most the pipeline's budget_usd 100"},
		{0, 40, 40, ""},
		{0, 0, 0, ""},
	} {
		t.Run(fmt.Sprintf("%g over %g", c.caller, c.pipeline), func(t *testing.T) {
			budget := ""
			if c.pipeline > 0 {
				budget = fmt.Sprintf(`,"budget_usd":%g`, c.pipeline)
			}
			cfg, err := Parse(strings.NewReader(`{"pipelines":[{"name":"triage","schedule":"cron(0 2 * * ? *)","time_zone":"UTC",
				"source":{"s3_prefix":"s3://b/{date}/"},"model":"anthropic.claude-3-5-haiku-20241022-v1:0","prompt":"{{.Text}}",
				"output":{"kind":"text"},"title":"T","ttl_days":10` + budget + `}]}`))
			if err != nil {
				t.Fatal(err)
			}
			svc := &capture{}
			r := &Runner{Config: cfg, Svc: svc, Jobs: noJobs{}, Bus: &pubs{}, Blobs: blobs, Bucket: "s3://b", Now: func() time.Time { return now },
				SourceFor: func(_ *Pipeline, date string) (Source, error) { return DirSource{Dir: filepath.Join(dirs, date)}, nil }}
			_, err = r.Request(context.Background(), "triage", "2026-11-30", c.caller)
			if c.refused == "" && err != nil || c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)) {
				t.Errorf("run_pipeline: %v, want refused %q", err, c.refused)
			}
			r.Tick(context.Background(), TickRequest{Pipeline: "triage", Date: "2026-11-30", BudgetUSD: c.caller})
			if svc.got == nil || svc.got.BudgetUSD != c.want {
				t.Fatalf("the run was submitted with %+v, want budget_usd %g", svc.got, c.want)
			}
		})
	}
}
