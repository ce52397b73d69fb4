package accountapp_test

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkbedrock "github.com/aws/aws-sdk-go-v2/service/bedrock"
	sdkpricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"

	"github.com/mcpbatch/mcpbatch/shared/app/accountapp"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// BenchmarkRefresh200PriceList5000: BenchmarkRefresh200's refresh of a
// 200-model account plus the Price List read: 5,000 simulated products
// (those of the 200 account models and of other models and Regions) paged
// through the real pricing SDK client over loopback HTTP, classified,
// matched to the account and stored in the snapshot. The simulators run in
// the same process, so B/op and the heap peak include their side.
//
//	go test ./shared/app/accountapp/ -run '^$' -bench Refresh200PriceList5000 -benchmem
func BenchmarkRefresh200PriceList5000(b *testing.B) {
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
	pl := &simbedrock.PriceListSim{Products: simbedrock.SyntheticPriceList(5000, 200), Log: log}
	plURL, err := pl.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer pl.Close()
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
		Pricing: sdkpricing.NewFromConfig(cfg, func(o *sdkpricing.Options) { o.BaseEndpoint = aws.String(plURL) }),
	}, log)
	ctx := context.Background()
	a, err := r.Refresh(ctx) // warm the connections; check the result once
	if err != nil || len(a.Bedrock) != 200 || len(a.Gaps) > 0 || a.PriceList == nil {
		b.Fatalf("refresh: %d models, gaps %v, price list %v, %v", len(a.Bedrock), a.Gaps, a.PriceList != nil, err)
	}
	if n := len(a.PriceList.Models); n != 200 || len(a.PriceList.Unclassified) > 0 {
		b.Fatalf("price list: %d models priced, unclassified %q", n, a.PriceList.Unclassified)
	}
	if m, ok := core.Catalog.Lookup("sim.model-199-v1:0"); !ok || m.Prices.Input == nil || m.PricesSource != model.SourcePriceList {
		b.Fatalf("sim.model-199 not priced from the price list: %+v", m)
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
	b.ReportMetric(float64(pl.Calls())/float64(b.N+1), "GetProducts/op")
}
