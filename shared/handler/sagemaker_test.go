package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// sampleJobID is the inferenceId of every sample in events/sagemaker.
const (
	sampleJobID  = "01jc3v9k2m4n5p6q7r8s9t0v1w"
	sampleOutput = "s3://mcpbatch-data-bucket/sagemaker/output/3f2b9c1e8d7a4b6c.out"
	sampleAnswer = `{"label":"positive","score":0.97}`
)

// published records what the service announces on the project bus.
type published struct {
	mu     sync.Mutex
	events []service.Completed
}

func (p *published) Publish(_ context.Context, detailType string, detail any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if detailType == config.DetailJobCompleted {
		p.events = append(p.events, detail.(service.Completed))
	}
	return nil
}

type smEnv struct {
	router *Router
	store  store.Store
	blobs  *fsblob.Store
	bus    *published
}

// newSMEnv runs the real handler over the real service, with the embedded store
// and object folder, and one submitted SageMaker job with the samples' id.
func newSMEnv(t testing.TB) *smEnv {
	t.Helper()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	st, blobs := localdeps.New(t)
	bus := &published{}
	const bucket = "s3://mcpbatch-data-bucket"
	m := &smsvc.Service{Jobs: st, Blobs: blobs, Results: store.Writer{Records: st, Objects: blobs, Prefix: service.ResultsPrefix(bucket)},
		Telemetry: service.Telemetry{Bus: bus, Log: log}, Log: log, Bucket: bucket}
	now := time.Now().UTC()
	if err := st.CreateJob(context.Background(), &job.Job{
		ID: sampleJobID, Owner: "alice", Provider: job.ProviderSageMaker, Model: "demo-async", Status: job.StatusSubmitted,
		ProviderStatus: smsvc.SageMakerAccepted, RecordCount: 1, Shards: 1, TTLDays: 7, CreatedAt: now, ExpiresAt: job.ExpiresAt(now, 7),
		OutputURI: sampleOutput, FailureURI: "s3://mcpbatch-data-bucket/sagemaker/failure/3f2b9c1e8d7a4b6c-error.out",
	}); err != nil {
		t.Fatal(err)
	}
	return &smEnv{router: &Router{SageMaker: &SageMakerEvents{Svc: m, Log: log}}, store: st, blobs: blobs, bus: bus}
}

// smSample reads one of events/sagemaker.
func smSample(t *testing.T, name string) []byte {
	t.Helper()
	return sample(t, filepath.Join("..", "..", "events", "sagemaker", name))
}

func (e *smEnv) deliver(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := e.router.Route(context.Background(), smSample(t, n)); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
}

func (e *smEnv) state(t *testing.T) (*job.Job, []job.Record) {
	t.Helper()
	j, err := e.store.GetJob(context.Background(), sampleJobID)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := e.store.ListRecords(context.Background(), j.RecordSet(), store.RecordQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return j, recs
}

// TestSageMakerSamples: every sample, in every order that matters, duplicated,
// through the handler the Lambda runs.
func TestSageMakerSamples(t *testing.T) {
	tests := []struct {
		name       string
		deliveries []string
		wantStatus job.Status
		wantOutput string
		wantError  string
	}{
		{"success with responseBody", []string{"success-with-body.json"}, job.StatusCompleted, sampleAnswer, ""},
		{"success without responseBody reads the output object", []string{"success-without-body.json"}, job.StatusCompleted, sampleAnswer, ""},
		{"error", []string{"error.json"}, job.StatusFailed, "", "ClientError: Received server error (500) from model"},
		// The error topic's responseBody is the model's own answer: kept as the output.
		{"error with the model's response body", []string{"error-with-body.json"}, job.StatusFailed, `{"error":"model says: field \"inputs\" is required"}`, "ClientError: Received client error (400)"},
		{"duplicates change nothing", []string{"success-with-body.json", "success-with-body.json", "success-without-body.json"}, job.StatusCompleted, sampleAnswer, ""},
		{"an error after a success leaves it succeeded", []string{"success-with-body.json", "error.json", "error.json"}, job.StatusCompleted, sampleAnswer, ""},
		{"a success after an error leaves it failed", []string{"error.json", "success-without-body.json"}, job.StatusFailed, "", "ClientError"},
		{"test notifications are ignored", []string{"test-notification.json", "success-with-body.json", "test-notification.json"}, job.StatusCompleted, sampleAnswer, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newSMEnv(t)
			// The output object exists only when a sample without responseBody needs it,
			// so the other cases prove responseBody is used.
			if slices.Contains(tc.deliveries, "success-without-body.json") {
				if _, err := e.blobs.Put(context.Background(), sampleOutput, strings.NewReader(sampleAnswer), "application/json"); err != nil {
					t.Fatal(err)
				}
			}
			e.deliver(t, tc.deliveries...)
			j, recs := e.state(t)
			if j.Status != tc.wantStatus || len(recs) != 1 {
				t.Fatalf("status %s with %d records, want %s with 1", j.Status, len(recs), tc.wantStatus)
			}
			r := recs[0]
			if r.ID != sampleJobID || r.Output != tc.wantOutput || !strings.Contains(r.ErrorMessage, tc.wantError) {
				t.Fatalf("record %+v", r)
			}
			if (tc.wantStatus == job.StatusCompleted) != (j.Succeeded == 1 && j.Failed == 0 && r.Status == job.RecordSucceeded) {
				t.Fatalf("counts %d/%d, record %s", j.Succeeded, j.Failed, r.Status)
			}
			if len(e.bus.events) != 1 || e.bus.events[0].Status != tc.wantStatus || e.bus.events[0].JobID != sampleJobID {
				t.Fatalf("Job Completed published %+v, want once with %s", e.bus.events, tc.wantStatus)
			}
		})
	}
}

func TestSageMakerTestNotificationAlone(t *testing.T) {
	e := newSMEnv(t)
	e.deliver(t, "test-notification.json")
	j, recs := e.state(t)
	if j.Status != job.StatusSubmitted || len(recs) != 0 || len(e.bus.events) != 0 {
		t.Fatalf("a TestNotification changed the job: %s, %d records, %d events", j.Status, len(recs), len(e.bus.events))
	}
}

// notification builds an SNS delivery of a success for the sample job.
func notification(t *testing.T, mutate func(n map[string]any)) []byte {
	t.Helper()
	var ev events.SNSEvent
	if err := json.Unmarshal(smSample(t, "success-without-body.json"), &ev); err != nil {
		t.Fatal(err)
	}
	var n map[string]any
	if err := json.Unmarshal([]byte(ev.Records[0].SNS.Message), &n); err != nil {
		t.Fatal(err)
	}
	mutate(n)
	raw, _ := json.Marshal(n)
	ev.Records[0].SNS.Message = string(raw)
	out, _ := json.Marshal(ev)
	return out
}

func TestSageMakerOutputs(t *testing.T) {
	big := bytes.Repeat([]byte("z"), 1<<20)
	tests := []struct {
		name        string
		contentType string
		output      []byte
		wantOutput  string
		wantRef     bool
		wantNote    string
	}{
		{"json", "application/json", []byte(`[1,2]`), `[1,2]`, false, ""},
		{"non-JSON under a JSON type is text with a note", "application/json; charset=utf-8", []byte("oops {"), "oops {", false, "not valid JSON"},
		{"csv", "text/csv", []byte("a,b\n1,2\n"), "a,b\n1,2\n", false, ""},
		{"binary is base64 with a note", "image/png", []byte{0x89, 'P', 'N', 'G', 0xff, 0x00}, "iVBOR/8A", false, "base64"},
		{"1 MB output becomes a pointer", "text/plain", big, "", true, "output_url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newSMEnv(t)
			if _, err := e.blobs.Put(context.Background(), sampleOutput, bytes.NewReader(tc.output), tc.contentType); err != nil {
				t.Fatal(err)
			}
			body := notification(t, func(n map[string]any) {
				n["responseParameters"].(map[string]any)["contentType"] = tc.contentType
			})
			if err := e.router.Route(context.Background(), body); err != nil {
				t.Fatal(err)
			}
			j, recs := e.state(t)
			if j.Status != job.StatusCompleted || len(recs) != 1 {
				t.Fatalf("status %s, %d records", j.Status, len(recs))
			}
			r := recs[0]
			if r.Output != tc.wantOutput || (r.OutputRef != "") != tc.wantRef || !strings.Contains(r.Note, tc.wantNote) || r.ContentType != tc.contentType {
				t.Fatalf("record output %.40q ref %q note %q type %q", r.Output, r.OutputRef, r.Note, r.ContentType)
			}
			if tc.wantRef && r.OutputRef != sampleOutput {
				t.Fatalf("pointer %q, want SageMaker's output object %q", r.OutputRef, sampleOutput)
			}
		})
	}
}

func TestSageMakerForeignAndMalformed(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(n map[string]any)
	}{
		{"inference id not from this stack", func(n map[string]any) { n["inferenceId"] = "11111111-2222-3333-4444-555555555555" }},
		{"unknown job id", func(n map[string]any) { n["inferenceId"] = "01jc3v9k2m4n5p6q7r8s9t0v1x" }},
		{"not a sagemaker event", func(n map[string]any) { n["eventSource"] = "aws:s3" }},
		{"unknown status", func(n map[string]any) { n["invocationStatus"] = "Pending" }},
		{"bad base64 body", func(n map[string]any) {
			n["responseBody"] = map[string]any{"content": "!!!", "encoding": "BASE64"}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newSMEnv(t)
			if err := e.router.Route(context.Background(), notification(t, tc.mutate)); err != nil {
				t.Fatalf("must be acknowledged, got %v", err)
			}
			j, recs := e.state(t)
			if j.Status != job.StatusSubmitted || len(recs) != 0 {
				t.Fatalf("job changed: %s, %d records", j.Status, len(recs))
			}
		})
	}
	// A missing output object is a real failure: returned, so Lambda retries the delivery.
	e := newSMEnv(t)
	if err := e.router.Route(context.Background(), smSample(t, "success-without-body.json")); err == nil {
		t.Fatal("missing output object was acknowledged; want an error so the delivery is retried")
	}
	if j, _ := e.state(t); j.Status != job.StatusSubmitted {
		t.Fatalf("job moved to %s without its result", j.Status)
	}
}
