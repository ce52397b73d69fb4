package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/notify"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
)

// Webhook receivers of the soak: one loopback server, a path per planned job
// (retries deliver to their parent's), each path behaving as the seed chose.
const (
	hookOK        = "answers 204"
	hookFlaky     = "answers 500 twice per delivery, then 204"
	hookThrottled = "answers 429 once per delivery, then 204"
	hookSlow      = "first attempt of a delivery answers after the sender's timeout"
	hookDown      = "answers 503 to everything (never recovers)"
	hookGone      = "answers 410 (final)"
)

// soakHookTimeout bounds one webhook attempt in the soak (the default is 10 s).
// Two seconds: at 500 ms a 410 answered on a loaded machine (the raised
// seeds side by side) came after the sender had given up, and was sent again.
const soakHookTimeout = 2 * time.Second

// Fault names of the webhook layer, as printed.
const (
	fHook5xx      = "webhook attempts answered 500/503 by the receiver"
	fHook429      = "webhook attempts answered 429 by the receiver"
	fHookTimeout  = "webhook attempts timed out (slow receiver)"
	fHookGone     = "webhook attempts answered 410 (final)"
	fKillAnnounce = "notifier killed mid-delivery"
	fRedeliver    = "Job Completed redelivered after the end (twice at once)"
)

// hookBehaviour is what the receiver of planned job k does ("" for a job without a webhook).
func hookBehaviour(c *chaos, k int) string {
	key := strconv.Itoa(k)
	if c.roll("webhook", key) >= c.rate("webhook") {
		return ""
	}
	x := c.roll("hook-kind", key)
	for _, b := range []struct {
		upTo float64
		kind string
	}{{0.3, hookOK}, {0.5, hookFlaky}, {0.65, hookThrottled}, {0.8, hookSlow}, {0.9, hookDown}, {1, hookGone}} {
		if x < b.upTo {
			return b.kind
		}
	}
	return hookOK
}

// soakDelivery is one attempt a receiver got.
type soakDelivery struct {
	id        string // X-Mcpbatch-Delivery-Id
	jobID     string
	status    job.Status
	succeeded int
	failed    int
	code      int  // what the receiver answered
	late      bool // answered after the sender gave up
	badSig    string
}

type soakReceivers struct {
	c      *chaos
	srv    *httptest.Server
	secret []byte
	kinds  map[string]string // path → behaviour
	mu     sync.Mutex
	got    map[string][]soakDelivery // path → attempts, in arrival order
	// sends counts the notifier's sends of each job's end (by job id): what
	// the service did, whatever a loaded machine made of each attempt.
	sends map[string]int
}

// countingWebhooks counts each Send at the sender.
type countingWebhooks struct {
	announce.Webhooks
	r *soakReceivers
}

func (w countingWebhooks) Send(ctx context.Context, owner, raw string, body []byte) error {
	var b announce.Body
	_ = json.Unmarshal(body, &b)
	w.r.mu.Lock()
	w.r.sends[b.Job.JobID]++
	w.r.mu.Unlock()
	return w.Webhooks.Send(ctx, owner, raw, body)
}

func newSoakReceivers(ctx context.Context, l *local.Suite, c *chaos, plan []soakItem) (*soakReceivers, error) {
	secret, _, err := l.Announce.WebhookSecret(ctx, soakOwner)
	if err != nil {
		return nil, err
	}
	r := &soakReceivers{c: c, secret: []byte(secret), kinds: map[string]string{}, got: map[string][]soakDelivery{}, sends: map[string]int{}}
	for _, it := range plan {
		if it.hook != "" {
			r.kinds[hookPath(it.k)] = it.hook
		}
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	// Short attempts and backoff: the soak's time passes in seconds.
	wh := l.Announce.Webhooks.(*notify.Webhook)
	wh.Client = &http.Client{Timeout: soakHookTimeout}
	wh.Backoff = func(n int) time.Duration { return time.Duration(n) * 10 * time.Millisecond }
	l.Announce.Webhooks = countingWebhooks{Webhooks: wh, r: r}
	return r, nil
}

func hookPath(k int) string { return fmt.Sprintf("/hook/soak-%03d", k) }

func (r *soakReceivers) url(k int) string { return r.srv.URL + hookPath(k) }

func (r *soakReceivers) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	d := soakDelivery{id: req.Header.Get(notify.HeaderDeliveryID)}
	if err := notify.Verify(r.secret, soakOwner, r.srv.URL+req.URL.Path, req.Header.Get(notify.HeaderTimestamp),
		req.Header.Get(notify.HeaderSignature), body, time.Now(), 5*time.Minute); err != nil {
		d.badSig = err.Error()
	}
	var b announce.Body
	if err := json.Unmarshal(body, &b); err != nil {
		d.badSig = "body: " + err.Error()
	}
	d.jobID, d.status, d.succeeded, d.failed = b.Job.JobID, b.Job.Status, b.Job.Succeeded, b.Job.Failed
	r.mu.Lock()
	n := 1 // attempt of this delivery at this receiver
	for _, prev := range r.got[req.URL.Path] {
		if prev.id == d.id {
			n++
		}
	}
	kind := r.kinds[req.URL.Path]
	r.mu.Unlock()
	d.code = http.StatusNoContent
	switch {
	case kind == hookFlaky && n <= 2:
		d.code = http.StatusInternalServerError
		r.c.count(fHook5xx)
	case kind == hookThrottled && n == 1:
		d.code = http.StatusTooManyRequests
		r.c.count(fHook429)
	case kind == hookDown:
		d.code = http.StatusServiceUnavailable
		r.c.count(fHook5xx)
	case kind == hookGone:
		d.code = http.StatusGone
		r.c.count(fHookGone)
	case kind == hookSlow && n == 1:
		d.late = true
		r.c.count(fHookTimeout)
		sleep(req.Context(), 2*soakHookTimeout)
	}
	if req.Context().Err() != nil {
		// The sender gave up before the answer was ready (its attempt timed
		// out on a loaded machine): it never sees this answer and tries again.
		d.late = true
	}
	r.mu.Lock()
	r.got[req.URL.Path] = append(r.got[req.URL.Path], d)
	r.mu.Unlock()
	r.c.note(d.jobID, fmt.Sprintf("webhook attempt %d of %s answered %d (late %v)", n, d.id, d.code, d.late))
	w.WriteHeader(d.code)
}

// wrapAnnounce kills the first "Job Completed" handling of some jobs a few
// milliseconds in, while the webhook is on the wire; the bus redelivers the
// event, as Lambda retries an async invoke.
func (c *chaos) wrapAnnounce(l *local.Suite) {
	key := config.EventSource + "|" + config.DetailJobCompleted
	h := l.Router.Events[key]
	l.Router.Events[key] = func(ctx context.Context, ev events.CloudWatchEvent) error {
		var d service.Completed
		_ = json.Unmarshal(ev.Detail, &d)
		if c.nth("announce", d.JobID) > 1 || c.roll("kill-announce", d.JobID) >= c.rate("kill_announce") {
			return h(ctx, ev)
		}
		c.count(fKillAnnounce)
		c.note(d.JobID, "notifier killed mid-delivery")
		c.killedNotifier.Store(d.JobID, true)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(time.Duration(1+c.roll("kill-announce-at", d.JobID)*20)*time.Millisecond, cancel)
		return h(ctx, ev)
	}
}

// redeliver publishes "Job Completed" again, twice at once, for some ended
// jobs with a webhook: a late duplicate of an event already handled.
func (c *chaos) redeliver(ctx context.Context, l *local.Suite, jobs []*job.Job) {
	for _, j := range jobs {
		if j.Notify.Empty() || !j.Status.Terminal() || c.roll("redeliver", j.ID) >= c.rate("redeliver") {
			continue
		}
		c.count(fRedeliver)
		c.note(j.ID, "Job Completed redelivered twice")
		for range 2 {
			_ = l.Bus.Publish(ctx, config.DetailJobCompleted, service.CompletedOf(j))
		}
	}
}

// checkWebhooks: each job with a webhook had its end sent once (one send,
// one delivery id), with its final status and counts, and delivered when
// its receiver recovers; for a receiver that never does, the send made the
// documented attempts and the job says the delivery failed; jobs without
// one got nothing; every attempt was signed for its receiver.
func checkWebhooks(r *soakReport, rc *soakReceivers, plan []soakItem, jobs []*job.Job) {
	byID := map[string]*job.Job{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	type key struct{ path, jobID string }
	got := map[key][]soakDelivery{}
	for path, ds := range rc.got {
		for _, d := range ds {
			if d.badSig != "" {
				r.webhookBad++
				r.jobProblem("webhook not verifiable", d.jobID, fmt.Sprintf("%s at %s: %s", d.id, path, d.badSig))
			}
			got[key{path, d.jobID}] = append(got[key{path, d.jobID}], d)
		}
		if rc.kinds[path] == "" {
			r.webhookBad++
			r.problem("webhook to a job that asked for none", fmt.Sprintf("%s got %d attempts", path, len(ds)))
		}
	}
	paths := map[string]string{} // receiver URL → path
	for _, it := range plan {
		if it.hook != "" {
			paths[rc.url(it.k)] = hookPath(it.k)
		}
	}
	for _, j := range jobs {
		if j.Notify == nil || j.Notify.Webhook == "" {
			continue
		}
		path := paths[j.Notify.Webhook]
		kind := rc.kinds[path]
		ds := got[key{path, j.ID}]
		r.webhookJobs++
		tag := fmt.Sprintf("job %s %q (%s, receiver %s)", j.ID, j.Name, j.Status, kind)
		if !j.Status.Terminal() {
			continue // counted as not terminal already
		}
		ids := map[string]bool{}
		accepted, refused := 0, 0
		for _, d := range ds {
			ids[d.id] = true
			if d.status != j.Status || d.succeeded != j.Succeeded || d.failed != j.Failed {
				r.webhookBad++
				r.jobProblem("webhook body differs from the job's end", j.ID, fmt.Sprintf("%s: delivered %s %d+%d, job %s %d+%d",
					tag, d.status, d.succeeded, d.failed, j.Status, j.Succeeded, j.Failed))
			}
			switch {
			case d.code/100 == 2:
				accepted++
			case d.code == http.StatusGone && !d.late:
				refused++ // a 410 the sender saw ends its send
			}
		}
		// One send per job end; a notifier killed mid-send sends once more,
		// under the same delivery id (the one receivers deduplicate on). An
		// attempt the sender gave up on (a slow receiver, a loaded machine)
		// is retried within its send, also under that id.
		_, killed := rc.c.killedNotifier.Load(j.ID)
		sends, most := rc.sends[j.ID], 1
		if killed {
			most = 2
		}
		if len(ids) > 1 || sends > most {
			r.webhookDup++
			r.jobProblem("webhook sent more than once", j.ID, fmt.Sprintf("%s: %d sends, %d delivery ids", tag, sends, len(ids)))
		}
		warned := hasWarning(j, "notify.webhook")
		notified := j.NotifiedStatus == j.Status
		switch kind {
		case hookDown:
			if !notified || !warned || !strings.Contains(strings.Join(j.Warnings, " "), fmt.Sprintf("after %d attempt(s)", notify.DefaultMaxAttempts)) ||
				len(ds) > sends*notify.DefaultMaxAttempts {
				r.webhookLost++
				r.jobProblem("dead receiver not handled as documented", j.ID, fmt.Sprintf("%s: %d attempts over %d sends, notified %q, warnings %q",
					tag, len(ds), sends, j.NotifiedStatus, j.Warnings))
			}
		case hookGone:
			if !notified || !warned || !strings.Contains(strings.Join(j.Warnings, " "), "last status 410") || refused > sends {
				r.webhookLost++
				r.jobProblem("refusing receiver not handled as documented", j.ID, fmt.Sprintf("%s: %d answers 410 over %d sends, notified %q, warnings %q",
					tag, refused, sends, j.NotifiedStatus, j.Warnings))
			}
		default:
			if accepted == 0 || !notified || warned {
				r.webhookLost++
				r.jobProblem("webhook not delivered", j.ID, fmt.Sprintf("%s: %d attempts, %d accepted, notified %q, warnings %q",
					tag, len(ds), accepted, j.NotifiedStatus, j.Warnings))
			}
		}
	}
}

func hasWarning(j *job.Job, prefix string) bool {
	for _, w := range j.Warnings {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}
