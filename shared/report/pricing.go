package report

import (
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// price is USD per million tokens, on demand (Bedrock list prices, us-east-1).
type price struct{ in, out float64 }

// prices by base model id prefix. Batch inference bills half; prompt-cache reads
// bill 10% of the input price and cache writes 125%.
var prices = []struct {
	prefix string
	p      price
}{
	{"anthropic.claude-3-5-haiku", price{0.80, 4}},
	{"anthropic.claude-haiku-4-5", price{1, 5}},
	{"anthropic.claude-3-5-sonnet", price{3, 15}},
	{"anthropic.claude-3-7-sonnet", price{3, 15}},
	{"anthropic.claude-sonnet-4", price{3, 15}},
	{"anthropic.claude-3-haiku", price{0.25, 1.25}},
	{"anthropic.claude-opus-4", price{15, 75}},
}

// Cost estimates a job's price in USD; known is false for a model without a price here.
func Cost(model, mode string, in, out, cacheRead, cacheWrite int64) (usd float64, known bool) {
	base, _ := config.BaseModel(model)
	for _, p := range prices {
		if strings.HasPrefix(base, p.prefix) {
			usd = (float64(in)*p.p.in + float64(out)*p.p.out + float64(cacheRead)*p.p.in*0.1 + float64(cacheWrite)*p.p.in*1.25) / 1e6
			if mode != job.ModeOnDemand {
				usd /= 2
			}
			return usd, true
		}
	}
	return 0, false
}
