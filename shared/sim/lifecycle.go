package sim

import (
	"context"
	"fmt"
)

// Simulator is the one lifecycle every simulator keeps, so a caller (a test,
// make dev's suite) starts, settles and stops them all the same way.
type Simulator interface {
	// Settle runs the simulator's pending work (jobs, batches, async
	// inferences) to its end, in at most MaxSettleSteps steps, and gives up
	// when ctx ends. A simulator that answers every call before returning has
	// nothing pending and settles at once.
	Settle(ctx context.Context) error
	// Close stops its background work and its listener.
	Close() error
}

// MaxSettleSteps bounds Settle: a simulator whose work has not ended after
// this many steps reports it rather than spin.
const MaxSettleSteps = 1000

// SettleSteps calls step until it moves nothing, ctx ends or MaxSettleSteps
// pass; name says which simulator did not settle.
func SettleSteps(ctx context.Context, name string, step func(context.Context) int) error {
	for range MaxSettleSteps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: settle: %w", name, err)
		}
		if step(ctx) == 0 {
			return nil
		}
	}
	return fmt.Errorf("%s: work did not end in %d steps", name, MaxSettleSteps)
}

// Settled is Settle for the simulators that answer every call before
// returning (the runtime, Service Quotas, Price List and S3 Vectors).
func Settled(ctx context.Context) error { return ctx.Err() }
