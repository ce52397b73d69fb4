package batch

import (
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

func TestResolveTier(t *testing.T) {
	in, out := 0.1, 0.2
	priced := &model.Model{ID: "priced", ServiceTiers: map[string]model.TierPrices{model.TierFlex: {Input: &in, Output: &out}, model.TierPriority: {}}}
	unpriced := &model.Model{ID: "unpriced", ServiceTiers: map[string]model.TierPrices{model.TierFlex: {}}}
	plain := &model.Model{ID: "plain"}
	tests := []struct {
		name     string
		m        *model.Model
		mode     string
		tier     string
		want     string // settled tier
		wantErr  string
		wantWarn bool
	}{
		{name: "auto takes priced flex", m: priced, mode: job.ModeOnDemand, want: model.TierFlex},
		{name: "auto on unpriced flex stays standard, warned", m: unpriced, mode: job.ModeOnDemand, want: "", wantWarn: true},
		{name: "auto on a model without tiers", m: plain, mode: job.ModeOnDemand, want: ""},
		{name: "auto on a batch job", m: priced, mode: job.ModeBatch, want: ""},
		{name: "standard", m: priced, mode: job.ModeOnDemand, tier: "standard", want: ""},
		{name: "explicit flex", m: priced, mode: job.ModeOnDemand, tier: "flex", want: model.TierFlex},
		{name: "priority offered without prices", m: priced, mode: job.ModeOnDemand, tier: "priority", wantErr: "no priority input and output price"},
		{name: "flex not offered", m: plain, mode: job.ModeOnDemand, tier: "flex", wantErr: "does not offer the flex tier"},
		{name: "flex on batch", m: priced, mode: job.ModeBatch, tier: "flex", wantErr: "applies to on-demand runs"},
		{name: "unknown", m: priced, mode: job.ModeOnDemand, tier: "reserved", wantErr: "is not a service tier"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &SubmitRequest{Mode: tc.mode, Params: job.Params{Tier: tc.tier}}
			err := resolveTier(req, tc.m)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "tier") {
					t.Fatalf("err = %v, want one naming tier with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || req.Params.Tier != tc.want || (len(req.Warnings) > 0) != tc.wantWarn {
				t.Errorf("err %v, tier %q, warnings %q; want tier %q, warned %v", err, req.Params.Tier, req.Warnings, tc.want, tc.wantWarn)
			}
		})
	}
}
