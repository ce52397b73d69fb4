package announce_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/notify"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// hooks is a Webhooks double: each Send is counted and answered by send.
type hooks struct {
	mu    sync.Mutex
	sends int
	send  func(ctx context.Context) error
}

func (h *hooks) Validate(context.Context, string) error { return nil }
func (h *hooks) OwnerSecrets(context.Context, string) ([]string, error) {
	return []string{"s"}, nil
}

func (h *hooks) Send(ctx context.Context, _, _ string, _ []byte) error {
	h.mu.Lock()
	h.sends++
	h.mu.Unlock()
	if h.send == nil {
		return nil
	}
	return h.send(ctx)
}

func (h *hooks) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sends
}

// ended stores a completed job that asks for a webhook.
func ended(t *testing.T) (*localstore.Store, *job.Job) {
	t.Helper()
	st, err := localstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now()
	j := &job.Job{ID: job.NewID(now), Owner: "o", Provider: job.ProviderBedrock, Model: "m", Status: job.StatusCompleted,
		CreatedAt: now, UpdatedAt: now, CompletedAt: now, ExpiresAt: now.Add(time.Hour), Notify: &job.Notify{Webhook: "https://h.example.com/x"}}
	if err := st.CreateJob(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	return st, j
}

// TestDuplicateEventsAtOnceSendOnce: two deliveries of one "Job Completed"
// handled at once POST the webhook once; the other is told to come back
// (before: both read the job before either marked it, and both sent).
func TestDuplicateEventsAtOnceSendOnce(t *testing.T) {
	st, j := ended(t)
	inSend := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	h := &hooks{send: func(context.Context) error {
		first := false
		once.Do(func() { first = true; close(inSend) })
		if first {
			<-done // the first send is on the wire while the duplicate arrives
		}
		return nil
	}}
	s := &announce.Service{Jobs: st, Webhooks: h}
	first := make(chan error, 1)
	go func() { first <- s.OnJobCompleted(context.Background(), j.ID) }()
	<-inSend
	err := s.OnJobCompleted(context.Background(), j.ID)
	close(done)
	if !errors.Is(err, announce.ErrBusy) {
		t.Errorf("second delivery while the first sends: %v, want ErrBusy (retried later)", err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := s.OnJobCompleted(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	if n := h.count(); n != 1 {
		t.Fatalf("%d sends, want 1", n)
	}
}

// TestStoppedMidSendIsRetried: a notifier stopped while the webhook was on
// the wire fails, so the event is retried and the webhook sent; before, the
// cut-short send was recorded as the job's announcement and never sent.
func TestStoppedMidSendIsRetried(t *testing.T) {
	st, j := ended(t)
	ctx, stop := context.WithCancel(context.Background())
	h := &hooks{send: func(ctx context.Context) error {
		stop()
		return &notify.DeliveryError{Attempts: 1, Err: ctx.Err()}
	}}
	s := &announce.Service{Jobs: st, Webhooks: h}
	if err := s.OnJobCompleted(ctx, j.ID); err == nil {
		t.Fatal("a send cut short returned no error: the event would not be retried")
	}
	h.send = nil
	if err := s.OnJobCompleted(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := st.GetJob(context.Background(), j.ID)
	if n := h.count(); n != 2 || got.NotifiedStatus != job.StatusCompleted || len(got.Warnings) != 0 {
		t.Fatalf("%d sends, notified %q, warnings %q; want the retry to send (2), completed, none", n, got.NotifiedStatus, got.Warnings)
	}
}

// TestDeliveredThenStoppedIsRecorded: a webhook delivered just before the
// notifier was stopped is recorded, so the event's retry sends nothing
// (before: marking it failed on the cancelled context and the retry resent).
func TestDeliveredThenStoppedIsRecorded(t *testing.T) {
	st, j := ended(t)
	ctx, stop := context.WithCancel(context.Background())
	h := &hooks{send: func(context.Context) error { stop(); return nil }}
	s := &announce.Service{Jobs: st, Webhooks: h}
	if err := s.OnJobCompleted(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	h.send = nil
	if err := s.OnJobCompleted(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	if n := h.count(); n != 1 {
		t.Fatalf("%d sends, want 1", n)
	}
}

// TestFailedDeliveryNotedOnJob: a receiver that failed every attempt is
// recorded on the job as a warning (get_job shows it), not only in a log.
func TestFailedDeliveryNotedOnJob(t *testing.T) {
	st, j := ended(t)
	h := &hooks{send: func(context.Context) error {
		return &notify.DeliveryError{Attempts: notify.DefaultMaxAttempts, Status: 503, Err: errors.New("receiver answered 503")}
	}}
	s := &announce.Service{Jobs: st, Webhooks: h}
	if err := s.OnJobCompleted(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := st.GetJob(context.Background(), j.ID)
	if got.NotifiedStatus != job.StatusCompleted || len(got.Warnings) != 1 ||
		!strings.HasPrefix(got.Warnings[0], "notify.webhook:") || !strings.Contains(got.Warnings[0], "after 5 attempt(s): last status 503") {
		t.Fatalf("notified %q, warnings %q; want completed and one notify.webhook warning naming the attempts and status", got.NotifiedStatus, got.Warnings)
	}
	if err := s.OnJobCompleted(context.Background(), j.ID); err != nil || h.count() != 1 {
		t.Fatalf("redelivered event: %v, %d sends; want nothing sent again", err, h.count())
	}
}

// TestClaimOfADeadNotifierExpires: a claim nobody gave back (the notifier
// died) holds the announcement until it expires, then a retry sends.
func TestClaimOfADeadNotifierExpires(t *testing.T) {
	st, j := ended(t)
	now := time.Now()
	if _, err := st.UpdateJob(context.Background(), j.ID, func(cur *job.Job) error {
		cur.NotifyingUntil = now.Add(time.Minute)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h := &hooks{}
	s := &announce.Service{Jobs: st, Webhooks: h, Now: func() time.Time { return now }}
	if err := s.OnJobCompleted(context.Background(), j.ID); !errors.Is(err, announce.ErrBusy) || h.count() != 0 {
		t.Fatalf("under a live claim: %v, %d sends; want ErrBusy and none", err, h.count())
	}
	now = now.Add(time.Minute)
	if err := s.OnJobCompleted(context.Background(), j.ID); err != nil || h.count() != 1 {
		t.Fatalf("after the claim expired: %v, %d sends; want one", err, h.count())
	}
}

// flakyTopic fails its first publishes, as a throttled SNS does.
type flakyTopic struct{ fails, calls int }

func (f *flakyTopic) NotifyOwner(context.Context, string, string, string, string) error {
	f.calls++
	if f.calls <= f.fails {
		return errors.New("ThrottlingException: rate exceeded (test double)")
	}
	return nil
}

// TestSNSFailureKeepsWebhookOutcome: with both a webhook and SNS, a failed
// publish retries the event; the retry publishes again but does not resend
// the webhook, delivered or refused for good, and its note is kept (before:
// 3 webhook sends with SNS failing twice).
func TestSNSFailureKeepsWebhookOutcome(t *testing.T) {
	for _, c := range []struct {
		name    string
		send    func(context.Context) error
		warning bool
	}{
		{"delivered", nil, false},
		{"refused for good", func(context.Context) error {
			return &notify.DeliveryError{Attempts: 1, Status: 400, Err: errors.New("receiver answered 400")}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, j := ended(t)
			if _, err := st.UpdateJob(context.Background(), j.ID, func(cur *job.Job) error {
				cur.Notify.SNS = true
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			h, topic := &hooks{send: c.send}, &flakyTopic{fails: 2}
			s := &announce.Service{Jobs: st, Webhooks: h, Topic: topic, TopicARN: "arn:aws:sns:us-east-1:123456789012:mcpbatch"}
			for i := range 3 {
				err := s.OnJobCompleted(context.Background(), j.ID)
				if (err != nil) != (i < 2) {
					t.Fatalf("delivery %d: %v; want the first two to fail on SNS", i+1, err)
				}
			}
			got, _ := st.GetJob(context.Background(), j.ID)
			if h.count() != 1 || topic.calls != 3 || got.NotifiedStatus != job.StatusCompleted || (len(got.Warnings) == 1) != c.warning || len(got.Warnings) > 1 {
				t.Fatalf("%d webhook sends, %d publishes, notified %q, warnings %q; want 1, 3, completed and the warning %v",
					h.count(), topic.calls, got.NotifiedStatus, got.Warnings, c.warning)
			}
		})
	}
}

// TestStaleReleaseKeepsAnotherClaim: a notifier whose claim expired while it
// sent, stopped afterwards, gives back only its own claim: the notifier that
// took over keeps its claim, and a third delivery is told to come back
// instead of sending a third time (before: the stale release cleared it).
func TestStaleReleaseKeepsAnotherClaim(t *testing.T) {
	st, j := ended(t)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	inB, releaseB := make(chan struct{}), make(chan struct{})
	b := &announce.Service{Jobs: st, Now: clock, Webhooks: &hooks{send: func(context.Context) error {
		close(inB)
		<-releaseB
		return nil
	}}}
	bDone := make(chan error, 1)
	ctxA, stopA := context.WithCancel(context.Background())
	a := &announce.Service{Jobs: st, Now: clock, Webhooks: &hooks{send: func(context.Context) error {
		mu.Lock()
		now = now.Add(announce.DefaultClaim + time.Second) // A's claim runs out mid-send
		mu.Unlock()
		go func() { bDone <- b.OnJobCompleted(context.Background(), j.ID) }()
		<-inB
		stopA()
		return context.Canceled
	}}}
	if err := a.OnJobCompleted(ctxA, j.ID); err == nil {
		t.Fatal("A: want its send cut short")
	}
	c := &hooks{}
	err := (&announce.Service{Jobs: st, Now: clock, Webhooks: c}).OnJobCompleted(context.Background(), j.ID)
	close(releaseB)
	if berr := <-bDone; berr != nil {
		t.Fatalf("B: %v", berr)
	}
	if !errors.Is(err, announce.ErrBusy) || c.count() != 0 {
		t.Fatalf("C while B sends: %v, %d sends; want ErrBusy and none", err, c.count())
	}
	if got, _ := st.GetJob(context.Background(), j.ID); got.NotifiedStatus != job.StatusCompleted {
		t.Fatalf("notified %q after B, want completed", got.NotifiedStatus)
	}
}

// landsThenCancelled is a store whose writes land but whose answer is lost
// to a cancelled context, as a DynamoDB call cut short after the server
// wrote the item.
type landsThenCancelled struct {
	*localstore.Store
	stop func()
}

func (s *landsThenCancelled) UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error) {
	j, err := s.Store.UpdateJob(context.WithoutCancel(ctx), id, fn)
	if s.stop != nil {
		s.stop() // the caller is stopped while the write is in flight
		s.stop = nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the answer is lost, the write stays
	}
	return j, err
}

// TestStoppedWhileClaimingIsRetried: a notifier stopped while its claim was
// being written, the write landing, gives the claim back, so the event's
// retry sends at once (before: the claim stayed for DefaultClaim with
// nothing sent, and every retry within it was told the job was busy).
func TestStoppedWhileClaimingIsRetried(t *testing.T) {
	st, j := ended(t)
	ctx, stop := context.WithCancel(context.Background())
	h := &hooks{}
	s := &announce.Service{Jobs: &landsThenCancelled{Store: st, stop: stop}, Webhooks: h}
	if err := s.OnJobCompleted(ctx, j.ID); err == nil {
		t.Fatal("a notifier stopped while claiming returned no error: the event would not be retried")
	}
	if err := s.OnJobCompleted(context.Background(), j.ID); err != nil {
		t.Fatalf("the event's retry: %v", err)
	}
	got, _ := st.GetJob(context.Background(), j.ID)
	if n := h.count(); n != 1 || got.NotifiedStatus != job.StatusCompleted {
		t.Fatalf("%d sends, notified %q; want the retry to send once, completed", n, got.NotifiedStatus)
	}
}
