package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// dryRunner estimates a submit without storing or submitting anything.
type dryRunner interface {
	DryRun(ctx context.Context, req batch.SubmitRequest) (*batch.DryRunResult, error)
}

// dryRun is submit_batch with dry_run: the estimate, the provider jobs it
// would create and every problem, as a successful answer.
func (s *Server) dryRun(ctx context.Context, sr batch.SubmitRequest) (JobHandle, string, string, error) {
	dr, ok := s.Jobs.(dryRunner)
	if !ok {
		return JobHandle{}, "", "", job.Fieldf("dry_run", "not available on this server")
	}
	res, err := dr.DryRun(ctx, sr)
	if err != nil {
		return JobHandle{}, "", "", err
	}
	h := JobHandle{Status: "dry_run", Provider: res.Provider, Model: res.Model, RecordCount: res.Records, Parts: len(res.Parts), DryRun: res}
	var b strings.Builder
	fmt.Fprintf(&b, "Dry run, nothing submitted: %d records to %s (%s, mode %s", res.Records, res.Model, res.Provider, res.Mode)
	if len(res.Parts) > 0 {
		fmt.Fprintf(&b, ", %d provider job(s)", len(res.Parts))
	}
	fmt.Fprintf(&b, "); about %d input tokens, at most %d output tokens; estimated cost up to $%.4f (%s prices).",
		res.EstimatedInputTokens, res.MaxOutputTokens, res.Cost.Total, strings.TrimSpace(string(res.Basis)+" "+res.Tier))
	switch {
	case res.Counted != nil:
		c := res.Counted
		fmt.Fprintf(&b, " Input counted by %s: about %d tokens (%.0f%% interval %d–%d).", c.Method, c.Estimate, 100*c.Confidence, c.Low, c.High)
		if c.Partial != "" {
			fmt.Fprintf(&b, " Fewer records counted than planned: %s.", c.Partial)
		}
	case res.NotCounted != "":
		fmt.Fprintf(&b, " Input not counted: %s.", res.NotCounted)
	}
	if len(res.Paths) > 0 {
		parts := make([]string, len(res.Paths))
		for i, p := range res.Paths {
			parts[i] = fmt.Sprintf("%s $%.4f", p.Path, p.Cost.Total)
			if p.InfoOnly {
				parts[i] += " (information only)"
			}
		}
		fmt.Fprintf(&b, " Paths: %s.", strings.Join(parts, ", "))
	}
	if res.Auto != "" {
		fmt.Fprintf(&b, " Auto picks %s: %s.", res.Auto, res.AutoWhy)
	}
	if c := res.Content; c != nil {
		fmt.Fprintf(&b, " Images: %d, documents: %d (%d bytes).", c.Blocks["image"], c.Blocks["document"], c.Bytes)
	}
	if n := len(res.Problems); n > 0 {
		fmt.Fprintf(&b, " %d problem(s) would refuse the submit: %s", n, strings.Join(res.Problems[:min(n, 5)], "; "))
	} else {
		b.WriteString(" No problems: submit without dry_run to run it.")
	}
	return h, b.String(), "", nil
}
