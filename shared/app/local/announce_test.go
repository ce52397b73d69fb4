package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/notify"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// delivery is one request the receiver got.
type delivery struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a webhook endpoint that answers the first `fail` requests with 503.
type receiver struct {
	mu   sync.Mutex
	fail int
	got  []delivery
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, delivery{header: req.Header.Clone(), body: body, at: time.Now()})
	if len(r.got) <= r.fail {
		http.Error(w, "try later", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func schema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "project", "job-completed.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestJobCompletedSchema: the shipped sample event's detail follows the
// published schema, and the schema is strict enough to refuse a wrong one.
func TestJobCompletedSchema(t *testing.T) {
	rs := schema(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "project", "job-completed.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Detail map[string]any `json:"detail"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(ev.Detail); err != nil {
		t.Fatalf("sample detail: %v", err)
	}
	for name, mutate := range map[string]func(map[string]any){
		"unknown status": func(d map[string]any) { d["status"] = "done" },
		"no job id":      func(d map[string]any) { delete(d, "jobId") },
		"negative count": func(d map[string]any) { d["failed"] = -1 },
	} {
		d := map[string]any{}
		for k, v := range ev.Detail {
			d[k] = v
		}
		mutate(d)
		if rs.Validate(d) == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}

// TestWebhookDelivery runs a job that asked for a webhook and SNS in make
// dev's wiring: the receiver on loopback gets one signed delivery per terminal
// state, after a retry of a 503; a wrong secret does not verify; a redelivered
// Job Completed sends nothing again; the SNS stand-in gets the same summary.
var _ = flow("WebhookDelivery", func(t *testing.T, w wiring) {
	dir := t.TempDir()
	l, err := local.New(context.Background(), w.options(t, local.Options{Dir: dir, FailEvery: 10,
		Log:            slog.New(slog.NewJSONHandler(io.Discard, nil)),
		WebhookBackoff: func(int) time.Duration { return 10 * time.Millisecond }}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	rcv := &receiver{fail: 1}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	n := job.Notify{Webhook: srv.URL + "/hooks/mcpbatch", SNS: true}
	if err := l.Announce.CheckNotify(ctx, n); err != nil {
		t.Fatalf("make dev refused a loopback webhook: %v", err)
	}
	recs := make([]job.Input, 150)
	for i := range recs {
		recs[i] = job.Input{Prompt: fmt.Sprintf("Summarise document %d.", i)}
	}
	j, err := l.Service.Batch.Submit(ctx, batch.SubmitRequest{Owner: "local-dev", Model: "anthropic.claude-haiku-4-5-20251001-v1:0", Name: "hooked", Records: recs, Notify: &n})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := l.Sim.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		l.Bus.Wait()
	}
	rcv.mu.Lock()
	got := append([]delivery(nil), rcv.got...)
	rcv.mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want 2 (a 503, then the retry)", len(got))
	}
	if a, b := got[0].header.Get(notify.HeaderDeliveryID), got[1].header.Get(notify.HeaderDeliveryID); a == "" || a != b {
		t.Fatalf("delivery ids %q and %q: want one id on both attempts", a, b)
	}
	raw, err := os.ReadFile(filepath.Join(dir, local.WebhookSecretFile))
	if err != nil || len(raw) != 64 || strings.TrimSpace(string(raw)) != string(raw) {
		t.Fatalf("secret file %q (%v): want exactly 64 hex characters, no newline", raw, err)
	}
	secret, _, err := l.Announce.WebhookSecret(ctx, "local-dev")
	if err != nil || secret != string(notify.OwnerSecret(raw, "local-dev")) {
		t.Fatalf("owner secret %q, %v", secret, err)
	}
	d := got[1]
	hook := n.Webhook
	ts, sig := d.header.Get(notify.HeaderTimestamp), d.header.Get(notify.HeaderSignature)
	if err := notify.Verify([]byte(secret), "local-dev", hook, ts, sig, d.body, time.Now(), 5*time.Minute); err != nil {
		t.Fatalf("signature with the owner's secret: %v", err)
	}
	if err := notify.Verify([]byte("not-the-secret-0123456789abcdef0123"), "local-dev", hook, ts, sig, d.body, time.Now(), 5*time.Minute); err == nil {
		t.Fatal("a wrong secret verified the delivery")
	}
	tampered := []byte(strings.Replace(string(d.body), `"succeeded":135`, `"succeeded":150`, 1))
	if string(tampered) == string(d.body) || notify.Verify([]byte(secret), "local-dev", hook, ts, sig, tampered, time.Now(), 5*time.Minute) == nil {
		t.Fatal("a changed body verified (or the body lacks succeeded=135)")
	}
	var body struct {
		Type string         `json:"type"`
		Job  map[string]any `json:"job"`
	}
	if err := json.Unmarshal(d.body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Type != "job.completed" || body.Job["jobId"] != j.ID || body.Job["status"] != "partially_completed" || body.Job["failed"] != 15.0 {
		t.Fatalf("body %s: want job.completed of %s, partially_completed with 15 failed", d.body, j.ID)
	}
	if err := schema(t).Validate(body.Job); err != nil {
		t.Fatalf("the summary (the Job Completed detail) does not follow events/project/job-completed.schema.json: %v\n%s", err, d.body)
	}
	stored, err := l.Service.Queries.Get(ctx, "local-dev", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.NotifiedStatus != job.StatusPartiallyCompleted {
		t.Fatalf("notified status %q, want partially_completed", stored.NotifiedStatus)
	}

	// A redelivered Job Completed (EventBridge delivers at least once) sends nothing.
	ev, _ := json.Marshal(map[string]any{"version": "0", "id": "redelivery", "source": "mcpbatch", "detail-type": "Job Completed",
		"account": "123456789012", "region": "us-east-1", "time": time.Now().UTC().Format(time.RFC3339), "resources": []string{},
		"detail": map[string]any{"jobId": j.ID, "status": "partially_completed"}})
	if err := l.Router.Route(ctx, ev); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	if len(rcv.got) != 2 {
		t.Errorf("a redelivered event sent %d more requests, want none", len(rcv.got)-2)
	}
	rcv.mu.Unlock()

	notes := notifications(t, l)
	var mine int
	for _, nt := range notes {
		if nt.Topic == l.Announce.TopicARN && strings.Contains(nt.Subject, j.ID) {
			mine++
			if nt.Attributes["owner"] != "local-dev" {
				t.Errorf("SNS message attributes %v, want owner local-dev (subscribers filter on it)", nt.Attributes)
			}
			if nt.Message != string(d.body) {
				t.Errorf("SNS message %s, want the webhook body %s", nt.Message, d.body)
			}
		}
	}
	if mine != 1 {
		t.Fatalf("%d notifications of %s on the topic, want 1", mine, j.ID)
	}
})

// TestCheckNotify: AWS rules (no private addresses, https only, 2,048
// characters) and a deployment without a topic, each a field error.
func TestCheckNotify(t *testing.T) {
	aws := &announce.Service{Webhooks: &notify.Webhook{}}
	for _, tc := range []struct {
		name string
		n    job.Notify
		want string
	}{
		{"loopback", job.Notify{Webhook: "https://127.0.0.1/hook"}, "notify.webhook"},
		{"private", job.Notify{Webhook: "https://10.1.2.3/hook"}, "notify.webhook"},
		{"metadata", job.Notify{Webhook: "https://169.254.169.254/latest"}, "notify.webhook"},
		{"http", job.Notify{Webhook: "http://hooks.example.com/x"}, "notify.webhook"},
		{"too long", job.Notify{Webhook: "https://hooks.example.com/" + strings.Repeat("a", 2048)}, "2048"},
		{"no topic", job.Notify{SNS: true}, "notify.sns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := aws.CheckNotify(context.Background(), tc.n)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// TestSageMakerAsyncNotify: invoke_endpoint_async takes notify too; its end
// is announced on the notification topic once.
func TestSageMakerAsyncNotify(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	h := call[asyncHandle](t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "ping",
		"content_type": "text/plain", "notify": map[string]any{"sns": true}})
	waitTerminal(t, s, "alice", h.JobID)
	s.l.Bus.Wait()
	notes := notifications(t, s.l)
	n := 0
	for _, nt := range notes {
		if nt.Topic == s.l.Announce.TopicARN && strings.Contains(nt.Message, `"jobId":"`+h.JobID+`"`) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d notifications of %s, want 1: %+v", n, h.JobID, notes)
	}
	if msg := toolErr(t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "body": "ping",
		"content_type": "text/plain", "notify": map[string]any{"webhook": "http://[::1"}}); !strings.Contains(msg, "notify.webhook") {
		t.Fatalf("bad webhook: %s", msg)
	}
}

// TestWebhookSecretPerOwner: over MCP each owner gets its own verifying
// secret; one owner's secret does not verify a delivery signed for another.
func TestWebhookSecretPerOwner(t *testing.T) {
	s := newSuite(t)
	alice, bob := s.client("alice"), s.client("bob")
	a := call[mcpserver.WebhookSecretOut](t, alice, "get_webhook_secret", map[string]any{})
	b := call[mcpserver.WebhookSecretOut](t, bob, "get_webhook_secret", map[string]any{})
	if a.Secret == "" || a.Secret == b.Secret || a.Owner == b.Owner {
		t.Fatalf("alice %+v, bob %+v: want two different owners and secrets", a, b)
	}
	const url = "https://hooks.example.com/x"
	sig := notify.Sign([]byte(b.Secret), "1796068800", a.Owner, url, []byte("{}"))
	if err := notify.Verify([]byte(a.Secret), a.Owner, url, "1796068800", sig, []byte("{}"), time.Unix(1796068800, 0), time.Minute); !errors.Is(err, notify.ErrMismatch) {
		t.Fatalf("bob's secret signed a delivery alice's receiver accepted: %v", err)
	}
}
