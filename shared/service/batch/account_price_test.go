package batch

import (
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

// A model only the account knows is warned about; the warning says it is
// unpriced unless the Price List priced it.
func TestCheckAccountWarnsOfPrices(t *testing.T) {
	in := 0.5
	for _, c := range []struct {
		m    *model.Model
		want string
	}{
		{&model.Model{ID: "writer.palmyra-x5-v1:0"}, "its tokens are not priced"},
		{&model.Model{ID: "sim.model-001-v1:0", Prices: model.Prices{Input: &in}, PricesSource: model.SourcePriceList}, "priced from the AWS Price List"},
	} {
		c.m.Account = &model.AccountFacts{Source: model.SourceAccount, Access: model.AccessGranted, AsOf: "2026-12-03T00:00:00Z"}
		req := &SubmitRequest{}
		if err := checkAccount(req, c.m); err != nil || len(req.Warnings) != 1 || !strings.Contains(req.Warnings[0], c.want) {
			t.Errorf("%s: err %v warnings %q; want one naming %q", c.m.ID, err, req.Warnings, c.want)
		}
	}
}
