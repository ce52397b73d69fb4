package batch

import (
	"fmt"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// checkAccount holds a submit to what the account says of its model (the
// facts the refresh laid over the catalog): a model the account has not
// granted access to is refused with the way to get it; a model only the
// account knows runs with a warning on the job (unpriced unless the AWS
// Price List lists it).
func checkAccount(req *SubmitRequest, m *model.Model) error {
	f := m.Account
	if f == nil {
		return nil
	}
	if f.Access == model.AccessDenied {
		detail := ""
		if f.AccessDetail != "" {
			detail = " (" + f.AccessDetail + ")"
		}
		return job.Fieldf("model", "this account has no access to %s%s: request access to %s in the Bedrock console (Model access), then submit again", m.ID, detail, m.ID)
	}
	if f.Source == model.SourceAccount {
		priced := "and its tokens are not priced (cost.unpriced lists them)"
		if m.PricesSource == model.SourcePriceList {
			priced = "priced from the AWS Price List"
		}
		w := fmt.Sprintf("model %s is offered by the account (as of %s) but not in the model catalog: it runs through Converse, %s", m.ID, f.AsOf, priced)
		if !slices.Contains(req.Warnings, w) {
			req.Warnings = append(req.Warnings, w)
		}
	}
	return nil
}

// accountQuota is the account's quota of submitted and in-progress batch
// jobs for the model (0: not known).
func (s *Service) accountQuota(id string) int {
	m, ok := s.Models.LookupModel(id)
	if !ok || m.Account == nil || m.Account.Quotas == nil {
		return 0
	}
	return m.Account.Quotas.MaxConcurrentJobs
}
