// Package remoteapp wires the mcp function's provider calls through the
// providers function (package remote): the Anthropic provider and the
// SageMaker endpoint control.
package remoteapp

import (
	"context"
	"fmt"
	"os"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/remote"
)

// Providers adds the Anthropic provider and the endpoint control, both
// calling the function MCPBATCH_PROVIDERS_FUNCTION names. Lambda's endpoint
// is AWS_ENDPOINT_URL_LAMBDA or AWS_ENDPOINT_URL when set (tests: the Lambda
// Runtime Interface Emulator). The stack deploys Anthropic's key secret with
// every suite, so the provider is always there; without a key the providers
// function answers busy, naming the secret to put it in, and a part waits
// queued for the reconciler.
func Providers(_ context.Context, e *app.Env) error {
	fn := os.Getenv(config.EnvProvidersFunction)
	if fn == "" {
		return fmt.Errorf("%s is not set: the mcp function reaches Anthropic and the SageMaker control plane through the providers function", config.EnvProvidersFunction)
	}
	endpoint := os.Getenv("AWS_ENDPOINT_URL_LAMBDA")
	if endpoint == "" && e.Config.BaseEndpoint != nil {
		endpoint = *e.Config.BaseEndpoint
	}
	inv := remote.NewInvoker(e.Config, fn, endpoint)
	e.Deps.Providers = append(e.Deps.Providers, &anthropicbatch.Provider{Calls: remote.AnthropicCalls{Caller: inv}, ModelIDs: anthropicbatch.ModelIDs()})
	e.Deps.SageMakerControl = remote.EndpointControl{Caller: inv}
	return nil
}
