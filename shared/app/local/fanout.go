package local

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/handler"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// FanoutOptions configure make dev's validation queue, the twin of the SQS
// queue the validate function reads in AWS.
type FanoutOptions struct {
	// Workers is how many units run at once (the event source's maximum
	// concurrency in AWS); 0 is DefaultFanoutWorkers.
	Workers int
	// UnitBytes is the input one check unit reads (0: transfer.DefaultUnitBytes).
	UnitBytes int64
}

// DefaultFanoutWorkers is make dev's validation concurrency: one unit per core
// of a small laptop.
const DefaultFanoutWorkers = 4

// UnitQueue is make dev's validation queue: units sent are run by Workers
// goroutines; one that fails is delivered again after a pause, up to
// config.ValidateQueueReceives times, then kept in Dead (the DLQ).
type UnitQueue struct {
	run func(ctx context.Context, u transfer.Unit) error

	mu      sync.Mutex
	cond    *sync.Cond
	pending []delivery
	dead    []transfer.Unit
	closed  bool
	busy    sync.WaitGroup // units sent and not yet done or dead
	workers sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

type delivery struct {
	u       transfer.Unit
	receive int
}

func newUnitQueue(workers int, run func(ctx context.Context, u transfer.Unit) error) *UnitQueue {
	if workers <= 0 {
		workers = DefaultFanoutWorkers
	}
	q := &UnitQueue{run: run}
	q.cond = sync.NewCond(&q.mu)
	q.ctx, q.cancel = context.WithCancel(context.Background())
	for range workers {
		q.workers.Add(1)
		go q.work()
	}
	return q
}

// SendUnits implements transfer.UnitQueue. It never blocks: a worker sends
// the next phase's units.
func (q *UnitQueue) SendUnits(_ context.Context, units []transfer.Unit) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return context.Canceled
	}
	for _, u := range units {
		q.busy.Add(1)
		q.pending = append(q.pending, delivery{u: u, receive: 1})
	}
	q.cond.Broadcast()
	return nil
}

func (q *UnitQueue) work() {
	defer q.workers.Done()
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.closed {
			q.cond.Wait()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		d := q.pending[0]
		q.pending = q.pending[1:]
		q.mu.Unlock()
		err := q.run(q.ctx, d.u)
		if err == nil || q.ctx.Err() != nil {
			q.busy.Done()
			continue
		}
		if d.receive >= config.ValidateQueueReceives {
			q.mu.Lock()
			q.dead = append(q.dead, d.u)
			q.mu.Unlock()
			q.busy.Done()
			continue
		}
		// Back on the queue once its visibility timeout would have passed.
		time.AfterFunc(time.Duration(d.receive)*20*time.Millisecond, func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			if q.closed {
				q.busy.Done()
				return
			}
			q.pending = append(q.pending, delivery{u: d.u, receive: d.receive + 1})
			q.cond.Broadcast()
		})
	}
}

// Wait returns once every unit sent is done (or dead).
func (q *UnitQueue) Wait() { q.busy.Wait() }

// Dead is the units that failed every delivery.
func (q *UnitQueue) Dead() []transfer.Unit {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]transfer.Unit(nil), q.dead...)
}

func (q *UnitQueue) close() {
	q.mu.Lock()
	q.closed = true
	for range q.pending {
		q.busy.Done()
	}
	q.pending = nil
	q.cond.Broadcast()
	q.mu.Unlock()
	q.cancel()
	q.workers.Wait()
}

// addFanout gives the transfer service make dev's queue, its workers running
// the handler the validate Lambda runs for SQS messages.
func (l *Suite) addFanout(o Options) {
	tr := l.Service.Transfer
	h := &handler.Units{Svc: tr, Log: o.Log}
	l.Units = newUnitQueue(o.Fanout.Workers, func(ctx context.Context, u transfer.Unit) error {
		body, err := json.Marshal(u)
		if err != nil {
			return err
		}
		resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "local", Body: string(body)}}})
		if err == nil && len(resp.BatchItemFailures) > 0 {
			err = errUnitFailed
		}
		return err
	})
	tr.Units, tr.UnitBytes = l.Units, o.Fanout.UnitBytes
}

var errUnitFailed = errors.New("validation unit failed (logged)")

// Settle waits until the bus and the validation queue are both idle (a unit
// publishes events, an event sends units).
func (l *Suite) Settle() {
	for range 3 {
		l.Bus.Wait()
		l.Units.Wait()
	}
	l.Bus.Wait()
}
