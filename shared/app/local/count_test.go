package local_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	rt "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	rttypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// A dry run of 5,000 records counts a sample with CountTokens and its
// interval contains the true count: the runtime simulator's own count of
// every record, asked of it directly.
func TestDryRunCountedInterval(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	const n = 5000
	recs := make([]map[string]any, n)
	prompts := make([]string, n)
	for i := range recs {
		// Lengths vary (3..~180 words) so the sample's spread is real.
		prompts[i] = fmt.Sprintf("Summarise fact #%d:%s", i, strings.Repeat(" lorem ipsum dolor", (i*7919)%61))
		recs[i] = map[string]any{"id": fmt.Sprintf("r%05d", i), "prompt": prompts[i]}
	}
	d := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": recs, "dry_run": true})
	if d.DryRun == nil || d.DryRun.Counted == nil {
		t.Fatalf("dry run %+v has no counted input", d.DryRun)
	}
	c := d.DryRun.Counted
	if c.Sampled != 400 || c.Records != n || c.Low > c.Estimate || c.Estimate > c.High || c.Low == c.High {
		t.Fatalf("counted %+v, want 400 of %d sampled and an interval around the estimate", c, n)
	}

	paths := map[string]float64{}
	for _, p := range d.DryRun.Paths {
		paths[p.Path] = p.Cost.Total
	}
	if d.DryRun.Auto != "batch" || paths["batch"] <= 0 || paths["batch"] >= paths["on_demand standard"] || d.DryRun.AutoWhy == "" {
		t.Errorf("paths %v, auto %q (%s): want batch picked and cheaper than on demand", paths, d.DryRun.Auto, d.DryRun.AutoWhy)
	}

	client := rt.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *rt.Options) { o.BaseEndpoint = aws.String(s.l.Reports.RuntimeURL) })
	var truth int64
	for _, p := range prompts {
		out, err := client.CountTokens(context.Background(), &rt.CountTokensInput{ModelId: aws.String(haiku),
			Input: &rttypes.CountTokensInputMemberConverse{Value: rttypes.ConverseTokensRequest{Messages: []rttypes.Message{{
				Role: rttypes.ConversationRoleUser, Content: []rttypes.ContentBlock{&rttypes.ContentBlockMemberText{Value: p}}}}}}})
		if err != nil {
			t.Fatal(err)
		}
		truth += int64(aws.ToInt32(out.InputTokens))
	}
	if truth < c.Low || truth > c.High {
		t.Errorf("true count %d outside the interval [%d, %d] (estimate %d)", truth, c.Low, c.High, c.Estimate)
	}
	t.Logf("true %d, estimate %d, 99%% interval [%d, %d] (±%.2f%%); chars/4 estimate %d", truth, c.Estimate, c.Low, c.High,
		100*float64(c.High-c.Low)/2/float64(truth), d.DryRun.EstimatedInputTokens)
}
