package accountapp_test

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkbedrock "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"

	"github.com/mcpbatch/mcpbatch/shared/app/accountapp"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// BenchmarkRefresh200: one refresh of a 200-model simulated account through
// the real Bedrock and Service Quotas SDK clients over loopback HTTP (200
// GetFoundationModelAvailability calls, 400 profiles, 1,400 quotas in pages
// of 100), stored in the local store and merged over the embedded catalog.
// The simulators run in the same process, so B/op and the heap peak include
// their side of every call.
//
//	go test ./shared/app/accountapp/ -run '^$' -bench Refresh200 -benchmem
func BenchmarkRefresh200(b *testing.B) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	acct := simbedrock.SyntheticAccount(200)
	bed := &simbedrock.BedrockSim{Models: acct, Log: log}
	bedURL, err := bed.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer bed.Close()
	q := &simbedrock.QuotasSim{Account: acct, Log: log}
	qURL, err := q.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	st, err := localstore.Open(":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := aws.Config{Region: sim.DefaultRegion, Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	core := &service.Core{Store: st, Catalog: model.Default().Filter("", nil), Region: sim.DefaultRegion}
	r := accountapp.New(core, accountapp.Clients{
		Bedrock: sdkbedrock.NewFromConfig(cfg, func(o *sdkbedrock.Options) { o.BaseEndpoint = aws.String(bedURL) }),
		Quotas:  servicequotas.NewFromConfig(cfg, func(o *servicequotas.Options) { o.BaseEndpoint = aws.String(qURL) }),
	}, log)
	ctx := context.Background()
	a, err := r.Refresh(ctx) // warm the connections; check the result once
	if err != nil || len(a.Bedrock) != 200 || len(a.Profiles) != 400 || len(a.Gaps) > 0 {
		b.Fatalf("refresh: %d models, %d profiles, gaps %v, %v", len(a.Bedrock), len(a.Profiles), a.Gaps, err)
	}
	for _, m := range a.Bedrock {
		if m.Quotas == nil || m.Quotas.MaxRecordsPerJob != 50000 || m.Access == model.AccessUnknown {
			b.Fatalf("%s: quotas %+v access %s", m.ID, m.Quotas, m.Access)
		}
	}
	if n := len(core.Catalog.All()); n < 200 {
		b.Fatalf("merged catalog holds %d models", n)
	}

	runtime.GC()
	base := heapBytes()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // sample the live heap while refreshes run
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if h := heapBytes(); h > peak.Load() {
					peak.Store(h)
				}
			}
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "peak-heap-MB")
}

// heapBytes is the bytes of live and not yet swept heap objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
