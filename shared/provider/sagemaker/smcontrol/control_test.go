package smcontrol

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	sdksm "github.com/aws/aws-sdk-go-v2/service/sagemaker"
	sdk "github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	simsagemaker "github.com/mcpbatch/mcpbatch/shared/sim/sagemaker"
)

var quiet = slog.New(slog.NewJSONHandler(io.Discard, nil))

// simEndpoints starts a simulator with endpoints declared and returns the
// runtime adapter and the control adapter, both over the real SDK clients.
func simEndpoints(t testing.TB, seed uint64, eps ...simsagemaker.SageMakerEndpoint) (*sagemaker.Client, *Control, *simsagemaker.SageMakerSim) {
	t.Helper()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &simsagemaker.SageMakerSim{Log: quiet, Blobs: blobs, EndpointConfigs: eps, Seed: seed}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.Close(); s.Close() })
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("simulated", "simulated", ""), BaseEndpoint: aws.String(srv.URL)}
	ctl := &Control{SageMaker: sdksm.NewFromConfig(cfg), Scaling: applicationautoscaling.NewFromConfig(cfg), Metrics: cloudwatch.NewFromConfig(cfg)}
	return sagemaker.New(sdk.NewFromConfig(cfg), quiet), ctl, s
}

var canary = simsagemaker.SageMakerEndpoint{Name: "canary-ep", MinCapacity: 1, MaxCapacity: 4, Variants: []simsagemaker.SageMakerVariant{
	{Name: "primary", Weight: 90, Instances: 2}, {Name: "canary", Weight: 10, Instances: 1}}}

// route makes n real-time calls without TargetVariant and returns the variant sequence.
func route(t *testing.T, c *sagemaker.Client, n int) []string {
	t.Helper()
	seq := make([]string, 0, n)
	for i := 0; i < n; i++ {
		res, err := c.Invoke(t.Context(), smsvc.Invocation{Endpoint: canary.Name, Body: []byte("{}"), ContentType: "application/json"})
		if err != nil {
			t.Fatal(err)
		}
		seq = append(seq, res.InvokedVariant)
	}
	return seq
}

// TestVariantRoutingByWeight: 1,000 calls to a 90/10 endpoint split within
// tolerance (binomial, n=1000, p=0.1: sd ≈ 9.5; ±4 sd), the same seed routes
// the same way, and a named TargetVariant always wins.
func TestVariantRoutingByWeight(t *testing.T) {
	c, _, _ := simEndpoints(t, 42, canary)
	seq := route(t, c, 1000)
	n := map[string]int{}
	for _, v := range seq {
		n[v]++
	}
	if n["primary"]+n["canary"] != 1000 || math.Abs(float64(n["canary"])-100) > 38 {
		t.Fatalf("routing at 90/10 over 1000 calls: %v", n)
	}
	c2, _, _ := simEndpoints(t, 42, canary)
	if again := route(t, c2, 1000); !reflect.DeepEqual(seq, again) {
		t.Error("the same seed routed differently")
	}
	c3, _, _ := simEndpoints(t, 7, canary)
	if other := route(t, c3, 1000); reflect.DeepEqual(seq, other) {
		t.Error("another seed routed the same 1000 calls identically")
	}
	for i := 0; i < 20; i++ {
		res, err := c.Invoke(t.Context(), smsvc.Invocation{Endpoint: canary.Name, Body: []byte("{}"), ContentType: "application/json", TargetVariant: "canary"})
		if err != nil || res.InvokedVariant != "canary" {
			t.Fatalf("TargetVariant canary answered by %q (%v)", res.InvokedVariant, err)
		}
	}
	_, err := c.Invoke(t.Context(), smsvc.Invocation{Endpoint: canary.Name, Body: []byte("{}"), ContentType: "application/json", TargetVariant: "nope"})
	if ee, ok := err.(*smsvc.EndpointError); !ok || ee.Kind != smsvc.KindValidation {
		t.Fatalf("unknown TargetVariant: %v", err)
	}
}

// TestShiftWeights: DescribeEndpoint and UpdateEndpointWeightsAndCapacities
// through the real clients, and routing that follows the new weights.
func TestShiftWeights(t *testing.T) {
	c, ctl, _ := simEndpoints(t, 1, canary)
	ctx := t.Context()
	st, err := ctl.DescribeEndpoint(ctx, canary.Name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != "InService" || st.Async || len(st.Variants) != 2 || st.Variants[0].CurrentWeight != 90 || st.Variants[1].CurrentInstances != 1 ||
		st.Variants[0].Scaling == nil || *st.Variants[0].Scaling != (smsvc.ScalingLimits{Min: 1, Max: 4}) || st.Backlog != nil {
		t.Fatalf("described %+v", st)
	}
	if err := ctl.UpdateWeights(ctx, canary.Name, []smsvc.VariantWeight{{Variant: "primary", Weight: 0}, {Variant: "canary", Weight: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range route(t, c, 50) {
		if v != "canary" {
			t.Fatalf("after shifting all traffic to canary, %s answered", v)
		}
	}
	err = ctl.UpdateWeights(ctx, canary.Name, []smsvc.VariantWeight{{Variant: "ghost", Weight: 1}})
	if ee, ok := err.(*smsvc.EndpointError); !ok || ee.Kind != smsvc.KindValidation {
		t.Fatalf("unknown variant: %v", err)
	}
	_, err = ctl.DescribeEndpoint(ctx, "missing")
	if ee, ok := err.(*smsvc.EndpointError); !ok || ee.Kind != smsvc.KindValidation {
		t.Fatalf("unknown endpoint: %v", err)
	}
}

// TestAsyncFromZero: an async endpoint at zero instances takes a request,
// shows HasBacklogWithoutCapacity, starts an instance after the simulated
// start and only then answers; the start is the variant's last scaling activity.
func TestAsyncFromZero(t *testing.T) {
	const start = 300 * time.Millisecond
	ep := simsagemaker.SageMakerEndpoint{Name: "zero", Async: true, MaxCapacity: 2, StartDelay: start,
		Variants: []simsagemaker.SageMakerVariant{{Name: "AllTraffic", Weight: 1, Instances: 0}}}
	c, ctl, s := simEndpoints(t, 1, ep)
	var mu sync.Mutex
	var notified time.Time
	s.Emit = func(context.Context, []byte) { mu.Lock(); notified = time.Now(); mu.Unlock() }
	ctx := t.Context()
	before, err := ctl.DescribeEndpoint(ctx, "zero")
	if err != nil {
		t.Fatal(err)
	}
	if !before.Async || before.Instances() != 0 || before.Variants[0].LastActivity != nil {
		t.Fatalf("before: %+v", before)
	}
	sent := time.Now()
	if _, err := c.InvokeAsync(ctx, smsvc.AsyncInvocation{Endpoint: "zero", InferenceID: "inf-1", Body: []byte(`{"x":1}`), ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	waiting, err := ctl.DescribeEndpoint(ctx, "zero")
	if err != nil {
		t.Fatal(err)
	}
	if waiting.HasBacklogWithoutCapacity == nil || !*waiting.HasBacklogWithoutCapacity || waiting.Backlog == nil || *waiting.Backlog != 1 {
		t.Fatalf("while starting: backlog %v, without capacity %v", waiting.Backlog, waiting.HasBacklogWithoutCapacity)
	}
	if err := s.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	took := notified.Sub(sent)
	mu.Unlock()
	if notified.IsZero() || took < start {
		t.Fatalf("answered %v after the request, before the simulated start of %v", took, start)
	}
	after, err := ctl.DescribeEndpoint(ctx, "zero")
	if err != nil {
		t.Fatal(err)
	}
	a := after.Variants[0].LastActivity
	if after.Instances() != 1 || *after.HasBacklogWithoutCapacity || a == nil || a.Status != "Successful" || a.Description != "Setting desired instance count to 1." {
		t.Fatalf("after: %+v activity %+v", after, a)
	}
}
