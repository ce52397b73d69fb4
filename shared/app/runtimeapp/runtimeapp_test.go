package runtimeapp_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/runtimeapp"
	"github.com/mcpbatch/mcpbatch/shared/internal/awsstack"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

var srv *motoserver.Server

func TestMain(m *testing.M) { os.Exit(motoserver.Main(m, &srv)) }

// TestDryRunCountsOnAWS: the mcp function's wiring (app.FromEnv with
// runtimeapp.Counter, the store and bucket in moto, bedrock-runtime sent to
// the simulator) counts a Bedrock dry run's input with CountTokens.
func TestDryRunCountsOnAWS(t *testing.T) {
	rt := &simbedrock.RuntimeSim{}
	url, err := rt.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	awsstack.New(t, srv, map[string]string{"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": url})
	a, err := app.FromEnv(t.Context(), runtimeapp.Counter)
	if err != nil {
		t.Fatal(err)
	}
	req := batch.SubmitRequest{Owner: "alice", Model: "anthropic.claude-haiku-4-5-20251001-v1:0", Mode: job.ModeBatch}
	for i := range 120 {
		req.Records = append(req.Records, job.Input{ID: fmt.Sprintf("q%03d", i), Prompt: strings.Repeat("count me ", 1+i%7)})
	}
	res, err := a.Graph.Batch.DryRun(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counted
	if c == nil {
		t.Fatalf("dry run not counted: %q", res.NotCounted)
	}
	if !strings.HasPrefix(c.Method, "Bedrock CountTokens") || c.Sampled != len(req.Records) || c.Estimate <= 0 {
		t.Errorf("counted %+v, want Bedrock CountTokens on all %d records", *c, len(req.Records))
	}
}
