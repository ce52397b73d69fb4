package batch

import (
	"fmt"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// resolveTier settles req.Params.Tier, the Bedrock service tier an on-demand
// run calls the model on ("" is standard). Auto (or no tier) picks Flex where
// the model offers it with known prices: a job has no deadline, so the
// discount for slower, throttle-prone service is always worth taking, and the
// on-demand runner already backs off on throttling. An explicit tier the
// model does not offer, or offers without a catalog price, is refused rather
// than run at a price the job's cost could not show.
func resolveTier(req *SubmitRequest, m *model.Model) error {
	t := req.Params.Tier
	switch t {
	case "", model.TierAuto:
		req.Params.Tier, req.autoTier = "", true
		if req.Mode != job.ModeOnDemand {
			return nil
		}
		if _, ok := m.Tier(model.TierFlex); ok {
			req.Params.Tier = model.TierFlex
		} else if _, offered := m.ServiceTiers[model.TierFlex]; offered {
			w := fmt.Sprintf("model %s offers the flex tier, but the catalog has no flex price: the run uses standard (an operator can set service_tiers.flex prices)", m.ID)
			if !slices.Contains(req.Warnings, w) {
				req.Warnings = append(req.Warnings, w)
			}
		}
		return nil
	case model.TierStandard:
		req.Params.Tier = ""
		return nil
	case model.TierFlex, model.TierPriority:
	default:
		return job.Fieldf("tier", "%q is not a service tier; use standard, flex, priority or auto", t)
	}
	if req.Mode != job.ModeOnDemand {
		return job.Fieldf("tier", "tier %s applies to on-demand runs and this job runs as %s; set mode on_demand or omit tier", t, req.Mode)
	}
	if _, offered := m.ServiceTiers[t]; !offered {
		return job.Fieldf("tier", "model %s does not offer the %s tier; use standard or auto", m.ID, t)
	}
	if _, ok := m.Tier(t); !ok {
		return job.Fieldf("tier", "the catalog has no %s input and output price for model %s, so the run's cost could not be shown; use standard, or have an operator set service_tiers.%s prices", t, m.ID, t)
	}
	return nil
}
