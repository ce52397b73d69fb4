// Package accountapp wires the refresh of the account's model facts
// (shared/service/refresh): the reconciler reads the account (daily, and at
// its cold start when the stored facts are a day old); every function, this
// one included, loads the stored ones in app.FromEnv. It lives apart from package app so only
// the reconciler links the Service Quotas and Price List SDKs, and only its role holds the reads.
package accountapp

import (
	"context"
	"log/slog"
	"time"

	sdkbedrock "github.com/aws/aws-sdk-go-v2/service/bedrock"
	sdkpricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/pricing"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockaccount"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/refresh"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// ColdStartTimeout bounds the refresh a cold start may wait for; past it the
// function serves with the stored (or the embedded) facts.
const ColdStartTimeout = 20 * time.Second

// Clients are the SDK clients the refresh reads through.
type Clients struct {
	Bedrock bedrockaccount.ModelsAPI
	Quotas  bedrockaccount.QuotasAPI
	// Anthropic is the Models API (nil: no Anthropic key configured).
	Anthropic anthropic.ModelsAPI
	// Pricing is the Price List Query API (nil: the catalog's prices only).
	Pricing pricing.ProductsAPI
}

// New is the refresh service over core's store and catalog.
func New(core *service.Core, c Clients, log *slog.Logger) *refresh.Service {
	snaps, _ := core.Store.(store.Snapshots)
	s := &refresh.Service{Store: snaps, Catalog: core.Catalog, Region: core.Region, Log: log,
		Bedrock: &bedrockaccount.AccountReader{Models: c.Bedrock, Quotas: c.Quotas}}
	if core.Clock != nil {
		s.Now = core.Clock
	}
	if c.Pricing != nil {
		s.Prices = &pricing.AccountReader{Reader: pricing.Reader{API: c.Pricing}}
	}
	if c.Anthropic != nil {
		s.Anthropic = func(ctx context.Context) ([]model.AnthropicFacts, error) {
			return anthropic.ReadModels(ctx, c.Anthropic)
		}
	}
	return s
}

// AnthropicModels is the Models API of the deployment's Anthropic provider (nil without one).
func AnthropicModels(reg *service.Registry) anthropic.ModelsAPI {
	p, ok := reg.Lookup(job.ProviderAnthropic)
	if !ok {
		return nil
	}
	ap, ok := p.(*anthropicbatch.Fetching) // the SDK's calls fetch; the remote ones reach no Models API
	if !ok {
		return nil
	}
	c, ok := ap.Calls.(*anthropicsdk.Calls)
	if !ok || c.Client == nil {
		return nil
	}
	return &c.Client.SDK.Models
}

// FromAWS is the refresh service of a Lambda, over the clients of cfg. The
// Price List is read from its endpoint nearest to the deployment's Region.
func FromAWS(a *app.AWS) *refresh.Service {
	region := a.Graph.Core.Region
	return New(a.Graph.Core, Clients{
		Bedrock:   sdkbedrock.NewFromConfig(a.Config),
		Quotas:    servicequotas.NewFromConfig(a.Config),
		Anthropic: AnthropicModels(a.Graph.Core.Providers),
		Pricing:   sdkpricing.NewFromConfig(a.Config, func(o *sdkpricing.Options) { o.Region = pricing.EndpointRegion(region) }),
	}, a.Log)
}

// Warm loads the stored facts and refreshes them when they are older than a
// day, within ColdStartTimeout; a failure is logged and the function serves
// with what it has.
func Warm(ctx context.Context, s *refresh.Service) {
	if s.Store == nil || s.Catalog == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, ColdStartTimeout)
	defer cancel()
	if _, err := s.Fresh(ctx); err != nil {
		log := s.Log
		if log == nil {
			log = slog.Default()
		}
		log.WarnContext(ctx, "account model facts not refreshed at start", "error", err)
	}
}
