package local

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/app/routes"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

// routeEvents routes every row of the route table (shared/app/routes) to the
// handler its function's Lambda runs (functions/<name>/main.go), as the
// stack's rules do in AWS. It runs once the graph, the report runner and the
// notifier exist; events the bus delivers before it are dropped, as a bus
// without the rule drops them.
func (l *Suite) routeEvents(o Options) error {
	g := l.Service
	nightly := &handler.NightlyReport{Runner: l.Reports.Runner, Log: o.Log, Announce: l.Announce}
	ev, err := routes.Events(map[string]routes.Handler{
		routes.FnBedrockEvents: (&handler.BedrockEvents{Svc: g.Batch, Log: o.Log}).Handle,
		routes.FnIngest:        (&handler.Ingest{Svc: g.Batch, Log: o.Log}).Handle,
		routes.FnValidate:      (&handler.Validate{Svc: g.Transfer, Log: o.Log}).Handle,
		routes.FnOnDemand:      (&handler.OnDemand{Svc: g.OnDemandRuns, Log: o.Log}).Handle,
		// nightly-report takes its payload raw: Scheduler's ticks are no EventBridge events.
		routes.FnNightlyReport: func(ctx context.Context, ev events.CloudWatchEvent) error {
			raw, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			return nightly.Handle(ctx, raw)
		},
	})
	if err != nil {
		return err
	}
	l.Router.Events = ev
	return nil
}
