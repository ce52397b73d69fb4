package ondemand_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/ondemand"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

// BenchmarkOnDemand1000x200ms: 1,000 records, a model answering in 200 ms (the
// runtime simulator over HTTP and the real SDK client), concurrency 16. The ideal
// is 1,000 × 0.2 s ÷ 16 = 12.5 s; x_ideal reports how far the run is from it.
// Run: go test -run '^$' -bench OnDemand -benchtime=1x ./shared/service/
func BenchmarkOnDemand1000x200ms(b *testing.B) {
	const n, conc, latency = 1000, 16, 200 * time.Millisecond
	for b.Loop() {
		b.StopTimer()
		rt := &simbedrock.RuntimeSim{Latency: latency}
		svc, _ := onDemandSuiteB(b, rt, &ondemand.Service{Concurrency: conc})
		ctx := context.Background()
		j, err := svc.Batch.Submit(ctx, batch.SubmitRequest{Owner: "o", Model: model, Mode: job.ModeOnDemand,
			Records: prompts(n, func(i int) string { return fmt.Sprint("record ", i) })})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := svc.OnDemandRuns.RunOnDemand(ctx, j.ID); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		ideal := time.Duration(n) * latency / conc
		b.ReportMetric(elapsed.Seconds(), "s/run")
		b.ReportMetric(float64(elapsed)/float64(ideal), "x_ideal")
		if got := rt.Stats().PeakInFlight; got > conc {
			b.Fatalf("peak concurrency %d over %d", got, conc)
		}
	}
}
