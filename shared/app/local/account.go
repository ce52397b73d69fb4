package local

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkbedrock "github.com/aws/aws-sdk-go-v2/service/bedrock"
	sdkpricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"

	"github.com/mcpbatch/mcpbatch/shared/app/accountapp"
	"github.com/mcpbatch/mcpbatch/shared/pricing"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

// AccountScenarioModels are allowed in make dev so list_models and submits
// show each case of the simulated account (simbedrock.NewAccount): a legacy model,
// two past their end of life, one without access, one the embedded catalog
// lacks (usable, unpriced), and open-weight models that take batch jobs
// because the account lists batch quotas for them under Service Quotas' own
// names (gpt-oss, Qwen3 235B, DeepSeek-V3.1); Mistral 7B (QuirkModels) has
// none and is refused batch jobs.
var AccountScenarioModels = []string{
	"anthropic.claude-sonnet-4-20250514-v1:0",
	"anthropic.claude-3-7-sonnet-20250219-v1:0",
	"anthropic.claude-opus-4-1-20250805-v1:0",
	"writer.palmyra-x5-v1:0",
	"openai.gpt-oss-120b-1:0",
	"qwen.qwen3-235b-a22b-2507-v1:0",
	"deepseek.v3-v1:0",
	"openai.gpt-oss-20b-1:0",
}

// account is the simulated account's model table, shared by the Bedrock
// and Service Quotas simulators.
func (l *Suite) account(o Options) *simbedrock.Account {
	l.Account = o.Account
	if l.Account == nil {
		l.Account = simbedrock.NewAccount()
	}
	return l.Account
}

// startQuotas starts the Service Quotas simulator over the simulated account,
// and the Price List simulator (its own table of Bedrock products, or
// o.PriceList).
func (l *Suite) startQuotas(o Options) error {
	l.Quotas = &simbedrock.QuotasSim{Account: l.Account, Log: o.Log}
	var err error
	if l.QuotasURL, err = l.Quotas.Listen("127.0.0.1:0"); err != nil {
		return err
	}
	l.started(l.Quotas)
	l.PriceList = &simbedrock.PriceListSim{Products: o.PriceList, Log: o.Log}
	if l.PriceListURL, err = l.PriceList.Listen("127.0.0.1:0"); err != nil {
		return err
	}
	l.started(l.PriceList)
	return nil
}

// startModels wires the refresh of the account's model facts through the
// real Bedrock, Service Quotas, Price List and Anthropic SDK clients pointed
// at the simulators, and runs the cold-start refresh, as the reconciler does.
func (l *Suite) startModels(ctx context.Context) {
	cfg := aws.Config{Region: sim.DefaultRegion, Credentials: credentials.NewStaticCredentialsProvider("simulated", "simulated", ""), HTTPClient: sim.HTTPClient()}
	l.Models = accountapp.New(l.Service.Core, accountapp.Clients{
		Bedrock: sdkbedrock.NewFromConfig(cfg, func(o *sdkbedrock.Options) { o.BaseEndpoint = aws.String(l.SimURL) }),
		Quotas:  servicequotas.NewFromConfig(cfg, func(o *servicequotas.Options) { o.BaseEndpoint = aws.String(l.QuotasURL) }),
		// The Price List endpoint Region the reconciler would pick, at the simulator.
		Pricing: sdkpricing.NewFromConfig(cfg, func(o *sdkpricing.Options) {
			o.Region, o.BaseEndpoint = pricing.EndpointRegion(sim.DefaultRegion), aws.String(l.PriceListURL)
		}),
		// The Anthropic simulator's GET /v1/models, through the provider's own client.
		Anthropic: accountapp.AnthropicModels(l.Service.Core.Providers),
	}, l.log)
	accountapp.Warm(ctx, l.Models)
}
