package local

import (
	"context"
	"os"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
)

// simAPIKey is what the simulator and client share when ANTHROPIC_API_KEY is unset.
const simAPIKey = "sk-ant-simulated-local"

// startAnthropic starts the Message Batches simulator and adds the
// Anthropic provider, reached by the official SDK over HTTP. The key comes from
// ANTHROPIC_API_KEY when set, so the auth path is the deployed one; it is
// never logged.
func (l *Suite) startAnthropic(o Options, blobs Objects, d *graph.Deps) error {
	key := os.Getenv(config.EnvAnthropicAPIKey)
	if key == "" {
		key = simAPIKey
	}
	l.Anthropic = &simanthropic.AnthropicSim{APIKey: key, StepDelay: o.StepDelay, ErrorEvery: o.FailEvery, Log: o.Log,
		CountBusy: o.AnthropicCountBusy, Now: o.AnthropicNow, Violations: l.Sim.Violations}
	var err error
	if l.AnthropicURL, err = l.Anthropic.Listen("127.0.0.1:0"); err != nil {
		return err
	}
	l.started(l.Anthropic)
	p := anthropicsdk.NewProvider(key, l.AnthropicURL, blobs)
	d.Providers = append(d.Providers, p)
	return nil
}

// RunReconciler runs the reconciler every interval until ctx ends, as the
// deployed schedule does.
func (l *Suite) RunReconciler(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if l.Models != nil {
				if _, err := l.Models.Fresh(ctx); err != nil {
					l.log.Warn("account model facts not refreshed", "error", err)
				}
			}
			if _, err := l.Service.Reconciler.Reconcile(ctx); err != nil {
				l.log.Error("reconcile run", "error", err)
			}
			if l.SageMaker != nil {
				if _, err := l.Service.SageMaker.ReconcileSageMaker(ctx, time.Now().Add(-time.Minute), 500); err != nil {
					l.log.Error("reconcile SageMaker jobs", "error", err)
				}
			}
		}
	}
}
