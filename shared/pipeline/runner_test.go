package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// noJobs is a store with no runs yet.
type noJobs struct{ Jobs }

func (noJobs) GetJob(context.Context, string) (*job.Job, error) { return nil, store.ErrNotFound }

type pubs struct{ got []TickRequest }

func (p *pubs) Publish(_ context.Context, _ string, d any) error {
	p.got = append(p.got, d.(TickRequest))
	return nil
}

// TestRequestBounds: run_pipeline takes only dates of the pipeline's schedule
// window (today back ttl_days, in its zone) and refuses a folder with no usable
// document with that reason, before anything is published.
func TestRequestBounds(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	dirs := t.TempDir()
	write := func(date, name, body string) {
		d := filepath.Join(dirs, date)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("2026-11-30", "a.txt", "A ticket about billing.")
	write("2026-11-29", "a.exe", "MZ")
	write("2026-11-29", "b.txt", "   ")
	cfg, err := Parse(strings.NewReader(`{"pipelines":[{"name":"triage","schedule":"cron(0 2 * * ? *)","time_zone":"Europe/Berlin",
		"source":{"s3_prefix":"s3://b/{date}/"},"model":"anthropic.claude-3-5-haiku-20241022-v1:0","prompt":"{{.Text}}",
		"output":{"kind":"text"},"title":"T","ttl_days":10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		date, wantErr string
	}{
		{"2026-11-30", ""},
		{"2026-11-21", "date: pipeline triage has no usable documents for 2026-11-21"}, // the window's first day
		{"2026-11-20", "date: pipeline triage runs for dates in its schedule window 2026-11-21 to 2026-12-01 (today in Europe/Berlin and the 10 days before it, its ttl_days); got 2026-11-20"},
		{"0001-01-01", "date: pipeline triage runs for dates in its schedule window 2026-11-21 to 2026-12-01"},
		{"9999-12-31", "date: pipeline triage runs for dates in its schedule window 2026-11-21 to 2026-12-01"},
		{"2026-12-02", "date: pipeline triage runs for dates in its schedule window"},
		{"2026-11-29", "date: pipeline triage has no usable documents for 2026-11-29: 2 documents, 2 skipped (a.exe: unsupported document type"},
		{"2026-11-28", "date: pipeline triage has no usable documents for 2026-11-28: 0 documents"},
	}
	for _, c := range cases {
		t.Run(c.date, func(t *testing.T) {
			bus := &pubs{}
			r := &Runner{Config: cfg, Jobs: noJobs{}, Bus: bus, Now: func() time.Time { return now },
				SourceFor: func(_ *Pipeline, date string) (Source, error) { return DirSource{Dir: filepath.Join(dirs, date)}, nil }}
			ri, err := r.Request(context.Background(), "triage", c.date, 0)
			if c.wantErr == "" {
				if err != nil || ri.JobID == "" || len(bus.got) != 1 {
					t.Fatalf("got %+v, %v, published %v", ri, err, bus.got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("got %+v, %v; want an error containing %q", ri, err, c.wantErr)
			}
			if len(bus.got) != 0 {
				t.Fatalf("published %v for a refused date", bus.got)
			}
		})
	}
}
