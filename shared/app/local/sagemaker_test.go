package local_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

type asyncHandle struct {
	JobID          string `json:"job_id"`
	Status         string `json:"status"`
	Provider       string `json:"provider"`
	OutputLocation string `json:"output_location"`
	InputLocation  string `json:"input_location"`
}

type jobView struct {
	Status    string `json:"status"`
	Succeeded int    `json:"succeeded"`
	Failed    int    `json:"failed"`
	Error     string `json:"error"`
	Terminal  bool   `json:"terminal"`
	Provider  string `json:"provider"`
}

type resultsPage struct {
	Records []struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		Output       string `json:"output"`
		OutputURL    string `json:"output_url"`
		ErrorMessage string `json:"error_message"`
		ContentType  string `json:"content_type"`
		Note         string `json:"note"`
	} `json:"records"`
}

// waitTerminal polls get_job as a client would until the job ends.
func waitTerminal(t *testing.T, s *suite, owner, id string) jobView {
	t.Helper()
	cs := s.client(owner)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := s.l.SageMaker.Sim.Settle(t.Context()); err != nil {
			t.Fatal(err)
		}
		s.l.Bus.Wait()
		v := call[jobView](t, cs, "get_job", map[string]any{"job_id": id})
		if v.Terminal {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s", id, v.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = flow("SageMakerAsyncThroughMCP", func(t *testing.T, w wiring) {
	big := strings.Repeat("x", job.SageMakerMaxInlineBody+1)
	tests := []struct {
		name       string
		args       map[string]any
		knobs      func(s *suite)
		wantStatus string
		check      func(t *testing.T, h asyncHandle, p resultsPage)
	}{
		{
			name: "json body inline, result in the notification", wantStatus: "completed",
			args: map[string]any{"endpoint_name": "demo-async", "body": map[string]any{"inputs": "hello"}, "content_type": "application/json"},
			check: func(t *testing.T, h asyncHandle, p resultsPage) {
				if h.InputLocation != "" {
					t.Errorf("small body staged in S3 at %s", h.InputLocation)
				}
				var out struct {
					Simulated bool            `json:"simulated"`
					Echo      json.RawMessage `json:"echo"`
				}
				if err := json.Unmarshal([]byte(p.Records[0].Output), &out); err != nil || !out.Simulated || string(out.Echo) != `{"inputs":"hello"}` {
					t.Errorf("output %q: %v", p.Records[0].Output, err)
				}
			},
		},
		{
			name: "body at the inline limit goes inline", wantStatus: "completed",
			args:  map[string]any{"endpoint_name": "demo-async", "body": big[1:], "content_type": "text/plain"},
			knobs: func(s *suite) { s.l.SageMaker.Sim.OmitResponseBody = true },
			check: func(t *testing.T, h asyncHandle, p resultsPage) {
				if h.InputLocation != "" {
					t.Errorf("a body of %d bytes staged in S3 at %s", job.SageMakerMaxInlineBody, h.InputLocation)
				}
				if !strings.Contains(p.Records[0].Output, `"input_bytes":128000`) {
					t.Errorf("the endpoint did not get the whole body: %.200s", p.Records[0].Output)
				}
			},
		},
		{
			name: "body over the inline limit is streamed to S3, not rejected", wantStatus: "completed",
			args:  map[string]any{"endpoint_name": "demo-async", "body": big, "content_type": "text/plain"},
			knobs: func(s *suite) { s.l.SageMaker.Sim.OmitResponseBody = true },
			check: func(t *testing.T, h asyncHandle, p resultsPage) {
				if !strings.HasPrefix(h.InputLocation, local.Bucket+"/sagemaker/input/"+h.JobID) {
					t.Errorf("input location %q", h.InputLocation)
				}
				if !strings.Contains(p.Records[0].Output, `"input_bytes":128001`) {
					t.Errorf("the endpoint did not get the whole body: %.200s", p.Records[0].Output)
				}
			},
		},
		{
			name: "non-JSON output under a JSON content type is text with a note", wantStatus: "completed",
			args: map[string]any{"endpoint_name": "demo-async", "body": "ping", "content_type": "text/plain"},
			knobs: func(s *suite) {
				s.l.SageMaker.Sim.Model = func(string, string, []byte) (string, []byte) { return "application/json", []byte("not json {") }
			},
			check: func(t *testing.T, _ asyncHandle, p resultsPage) {
				r := p.Records[0]
				if r.Output != "not json {" || !strings.Contains(r.Note, "not valid JSON") || r.ContentType != "application/json" {
					t.Errorf("record %+v", r)
				}
			},
		},
		{
			name: "output over the item limit becomes a link", wantStatus: "completed",
			args: map[string]any{"endpoint_name": "demo-async", "body": "ping", "content_type": "text/plain"},
			knobs: func(s *suite) {
				s.l.SageMaker.Sim.OmitResponseBody = true
				s.l.SageMaker.Sim.Model = func(string, string, []byte) (string, []byte) {
					return "text/plain", []byte(strings.Repeat("y", job.MaxInlineOutputBytes+10))
				}
			},
			check: func(t *testing.T, h asyncHandle, p resultsPage) {
				r := p.Records[0]
				if r.Output != "" || r.OutputURL == "" || !strings.Contains(r.Note, "output_url") {
					t.Errorf("record %+v", r)
				}
			},
		},
		{
			name: "failed inference keeps the reason", wantStatus: "failed",
			args: map[string]any{"endpoint_name": "demo-async", "body": "ping", "content_type": "text/plain"},
			knobs: func(s *suite) {
				s.l.SageMaker.Sim.FailAsync = func(string, []byte) string { return "ClientError: simulated model crash" }
			},
			check: func(t *testing.T, _ asyncHandle, p resultsPage) {
				r := p.Records[0]
				if r.Status != "failed" || r.ErrorMessage != "ClientError: simulated model crash" {
					t.Errorf("record %+v", r)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSuiteOn(t, w, local.Options{FailEvery: 10})
			if tc.knobs != nil {
				tc.knobs(s)
			}
			cs := s.client("alice")
			h := call[asyncHandle](t, cs, "invoke_endpoint_async", tc.args)
			if h.Provider != job.ProviderSageMaker || !job.ValidID(h.JobID) || h.OutputLocation == "" {
				t.Fatalf("handle %+v", h)
			}
			v := waitTerminal(t, s, "alice", h.JobID)
			if v.Status != tc.wantStatus {
				t.Fatalf("status %s (%s), want %s", v.Status, v.Error, tc.wantStatus)
			}
			p := call[resultsPage](t, cs, "get_job_results", map[string]any{"job_id": h.JobID})
			if len(p.Records) != 1 || p.Records[0].ID != h.JobID {
				t.Fatalf("want one record named after the job, got %+v", p.Records)
			}
			tc.check(t, h, p)
			// Another owner sees nothing.
			if msg := toolErr(t, s.client("mallory"), "get_job", map[string]any{"job_id": h.JobID}); !strings.Contains(msg, "job not found") {
				t.Errorf("other owner: %s", msg)
			}
		})
	}
})

func TestSageMakerBadInput(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "prod-secret", "body": "x", "content_type": "text/plain"}, `endpoint_name: "prod-secret" is not allowed here; allowed endpoints: demo-async, demo-realtime, demo-canary, demo-async-zero`},
		{"invoke_endpoint", map[string]any{"endpoint_name": "prod-secret", "body": "x", "content_type": "text/plain"}, `endpoint_name: "prod-secret" is not allowed`},
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "content_type": "text/plain"}, "body: required"},
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "input_uri": "s3://b/k", "content_type": "text/plain"}, "body: give body or input_uri, not both"},
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "input_uri": "https://x", "content_type": "text/plain"}, "input_uri"},
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "content_type": "text/plain", "inference_timeout_s": 3601}, "inference_timeout_s: must be 1..3600 seconds (got 3601)"},
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "content_type": "text/plain", "request_ttl_s": 59}, "request_ttl_s: must be 60..21600 seconds (got 59)"},
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "content_type": "text/plain", "custom_attributes": strings.Repeat("a", 1025)}, "custom_attributes: 1025 characters is over SageMaker's limit of 1024"},
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x"}, `missing properties: ["content_type"]`},
		{"invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "content_type": "text/plain", "ttl_days": 400}, "ttl_days: must be 1..365"},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.want, func(t *testing.T) {
			if msg := toolErr(t, cs, tc.tool, tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("got %q, want it to contain %q", msg, tc.want)
			}
		})
	}
	// Nothing was stored by the refused calls.
	page := call[struct {
		Jobs []any `json:"jobs"`
	}](t, cs, "list_jobs", map[string]any{})
	if len(page.Jobs) != 0 {
		t.Errorf("refused calls left %d jobs", len(page.Jobs))
	}
}

func TestSageMakerRealtimeThroughMCP(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	type out struct {
		Body           json.RawMessage `json:"body"`
		ContentType    string          `json:"content_type"`
		InvokedVariant string          `json:"invoked_variant"`
		Attempts       int             `json:"attempts"`
	}
	s.l.SageMaker.Sim.QueueFaults("demo-realtime", "ServiceUnavailable", "ModelNotReadyException")
	o := call[out](t, cs, "invoke_endpoint", map[string]any{"endpoint_name": "demo-realtime", "body": map[string]any{"x": 1}, "content_type": "application/json"})
	if o.Attempts != 3 || o.InvokedVariant != "AllTraffic" || o.ContentType != "application/json" || !strings.Contains(string(o.Body), `"echo":{"x":1}`) {
		t.Fatalf("got %+v body %s", o, o.Body)
	}
	s.l.SageMaker.Sim.QueueFaults("demo-realtime", "ModelError")
	msg := toolErr(t, cs, "invoke_endpoint", map[string]any{"endpoint_name": "demo-realtime", "body": "x", "content_type": "text/plain"})
	for _, want := range []string{"ModelError, not retried", "original status 500", "simulated model failure", "arn:aws:logs:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("model error text %q lacks %q", msg, want)
		}
	}
	if n := s.l.SageMaker.Sim.Calls("demo-realtime"); n != 4 {
		t.Errorf("endpoint saw %d calls, want 3 + 1 (ModelError never retried)", n)
	}
	// cancel_job on an async inference says why it cannot be done.
	h := call[asyncHandle](t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "content_type": "text/plain"})
	if err := s.l.SageMaker.Sim.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.l.Bus.Wait()
	v := call[jobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if !v.Terminal {
		if msg := toolErr(t, cs, "cancel_job", map[string]any{"job_id": h.JobID}); !strings.Contains(msg, "cannot be cancelled") {
			t.Errorf("cancel: %s", msg)
		}
	}
}

// TestSageMakerRefusedInvocation: an allowed endpoint SageMaker does not know
// ends the job failed, with the refusal as its one result and a clear tool error.
func TestSageMakerRefusedInvocation(t *testing.T) {
	s := newSuite(t)
	s.l.SageMaker.Sim.DeleteEndpoint("demo-async") // demo-async is allowed but does not exist
	cs := s.client("alice")
	msg := toolErr(t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "content_type": "text/plain"})
	if !strings.Contains(msg, "SageMaker refused the request (ValidationError, not retried)") || !strings.Contains(msg, "demo-async") {
		t.Fatalf("tool error %q", msg)
	}
	page := call[struct {
		Jobs []struct {
			JobID  string `json:"job_id"`
			Status string `json:"status"`
			Error  string `json:"error"`
		} `json:"jobs"`
	}](t, cs, "list_jobs", map[string]any{})
	if len(page.Jobs) != 1 || page.Jobs[0].Status != "failed" || !strings.Contains(page.Jobs[0].Error, "not found") {
		t.Fatalf("jobs %+v", page.Jobs)
	}
	p := call[resultsPage](t, cs, "get_job_results", map[string]any{"job_id": page.Jobs[0].JobID})
	if len(p.Records) != 1 || p.Records[0].Status != "failed" || !strings.Contains(p.Records[0].ErrorMessage, "not found") {
		t.Fatalf("results %+v", p.Records)
	}
}

// TestSageMakerLostNotification: when the notification never arrives, the
// reconciliation use case finds SageMaker's output or failure object and
// settles the job the same way.
func TestSageMakerLostNotification(t *testing.T) {
	tests := []struct {
		name       string
		fail       bool
		wantStatus string
	}{
		{"output object completes the job", false, "completed"},
		{"failure object fails the job", true, "failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSuite(t)
			sm := s.l.SageMaker
			sm.Sim.Emit = nil // the notification is lost
			if tc.fail {
				sm.Sim.FailAsync = func(string, []byte) string { return "ClientError: simulated crash" }
			}
			cs := s.client("alice")
			h := call[asyncHandle](t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "x", "content_type": "text/plain"})
			if err := sm.Sim.Settle(t.Context()); err != nil {
				t.Fatal(err)
			}
			if v := call[jobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); v.Terminal {
				t.Fatalf("job ended without a notification: %+v", v)
			}
			ctx := t.Context()
			if n, err := s.l.Service.SageMaker.ReconcileSageMaker(ctx, time.Now().Add(time.Minute), 100); err != nil || n != 1 {
				t.Fatalf("reconcile settled %d: %v", n, err)
			}
			if n, err := s.l.Service.SageMaker.ReconcileSageMaker(ctx, time.Now().Add(time.Minute), 100); err != nil || n != 0 {
				t.Fatalf("second reconcile settled %d: %v", n, err)
			}
			v := call[jobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
			if v.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s", v.Status, tc.wantStatus)
			}
			p := call[resultsPage](t, cs, "get_job_results", map[string]any{"job_id": h.JobID})
			if len(p.Records) != 1 || tc.fail && p.Records[0].ErrorMessage != "ClientError: simulated crash" {
				t.Fatalf("results %+v", p.Records)
			}
		})
	}
}
