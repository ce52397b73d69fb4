// Package bus publishes the project's events: to an EventBridge bus in AWS, or to
// an in-process bus in make dev that delivers the same envelope JSON to the same
// handlers the Lambdas run.
package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// PutEventsAPI is the one EventBridge call the publisher makes.
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// EventBridge publishes to the project bus.
type EventBridge struct {
	Client  PutEventsAPI
	BusName string
	Source  string
}

// Publish sends one event and fails when EventBridge rejects the entry.
func (b *EventBridge) Publish(ctx context.Context, detailType string, detail any) error {
	raw, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("encode %s detail: %w", detailType, err)
	}
	out, err := b.Client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{{
		EventBusName: aws.String(b.BusName), Source: aws.String(b.Source),
		DetailType: aws.String(detailType), Detail: aws.String(string(raw)),
	}}})
	if err != nil {
		return fmt.Errorf("put %s event: %w", detailType, err)
	}
	if out.FailedEntryCount > 0 && len(out.Entries) > 0 {
		e := out.Entries[0]
		return fmt.Errorf("put %s event rejected: %s: %s", detailType, aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
	}
	return nil
}

// Envelope is an EventBridge event as delivered to a target.
type Envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// Local is the in-process bus of make dev. Delivery is asynchronous, like
// EventBridge's, so a publisher never runs its consumers inline.
//
// Deliveries run under the bus's own context, not the publisher's (a request
// that published an event may end long before its handler does). Shutdown
// cancels that context, as the end of a Lambda invocation stops its handler:
// handlers return at their last checkpoint, and the work they were doing is
// picked up again at the next start.
type Local struct {
	Source  string
	Account string
	Region  string
	Deliver func(ctx context.Context, event []byte) error
	Log     *slog.Logger

	wg     sync.WaitGroup
	once   sync.Once
	ctx    context.Context // deliveries' context, cancelled by Shutdown
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool          // Shutdown was called: no new deliveries
	gaveUp chan struct{} // closed when Shutdown stops waiting for handlers
}

func (b *Local) init() {
	b.once.Do(func() {
		b.ctx, b.cancel = context.WithCancel(context.Background())
		b.gaveUp = make(chan struct{})
	})
}

// Publish wraps detail in an EventBridge envelope and delivers it.
func (b *Local) Publish(ctx context.Context, detailType string, detail any) error {
	raw, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("encode %s detail: %w", detailType, err)
	}
	ev, err := json.Marshal(Envelope{
		Version: "0", ID: newEventID(), DetailType: detailType, Source: b.Source, Account: b.Account,
		Time: time.Now().UTC().Format(time.RFC3339), Region: b.Region, Resources: []string{}, Detail: raw,
	})
	if err != nil {
		return err
	}
	b.Send(ev)
	return nil
}

// Send delivers an already-enveloped event asynchronously, retrying a failed
// delivery a few times as EventBridge's Lambda target would.
// After Shutdown the event is dropped (and logged).
func (b *Local) Send(ev []byte) {
	b.init()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		if b.Log != nil {
			b.Log.Warn("local bus is shut down; event dropped (its work resumes at the next start)", "bytes", len(ev))
		}
		return
	}
	b.wg.Add(1)
	b.mu.Unlock()
	go func() {
		defer b.wg.Done()
		for attempt := 1; attempt <= 3; attempt++ {
			err := b.Deliver(b.ctx, ev)
			if err == nil || b.ctx.Err() != nil {
				return // done, or cut short by Shutdown: no retry
			}
			if b.Log != nil {
				b.Log.Error("local bus delivery failed", "attempt", attempt, "error", err)
			}
			t := time.NewTimer(time.Duration(attempt) * 200 * time.Millisecond)
			select {
			case <-b.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
}

// Wait blocks until every event published so far is delivered (for tests and
// shutdown), or until a Shutdown gave up waiting for its handlers.
func (b *Local) Wait() {
	b.init()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-b.gaveUp:
	}
}

// Shutdown stops new deliveries, cancels the context of the handlers in flight
// and waits for them to return until ctx ends (then it returns ctx's error and
// leaves them behind; the process is about to exit).
func (b *Local) Shutdown(ctx context.Context) error {
	b.init()
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-b.gaveUp:
		default:
			close(b.gaveUp)
		}
		b.mu.Unlock()
		return fmt.Errorf("local bus: handlers still running at shutdown: %w", ctx.Err())
	}
}

func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
