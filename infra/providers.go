package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// FnProviders makes the provider calls the mcp function does not link
// (shared/remote): Anthropic Message Batches through the official SDK, and the
// SageMaker endpoint control plane. mcp invokes it synchronously.
const FnProviders = "providers"

// ProvidersProps connect the providers function to the rest of the stack.
type ProvidersProps struct {
	Settings  Settings
	Data      *Data
	Functions *Functions
	Anthropic *Anthropic
}

// Providers is the providers function.
type Providers struct {
	Scope    constructs.Construct
	Function *GoFunction
}

// NewProviders creates the function, lets mcp invoke it and tells mcp its
// name. Its timeout is mcp's: a call never outlives the tool call waiting on
// it. It holds no table, bus or bucket setting, only what its calls need: the
// Anthropic key (Grant) and the batch request lines an Anthropic create
// streams from input/. The endpoint grants come with the endpoints
// (endpoints.go).
func NewProviders(scope constructs.Construct, id string, p *ProvidersProps) *Providers {
	c := constructs.NewConstruct(scope, jsii.String(id))
	s := p.Settings
	pr := &Providers{Scope: c}
	pr.Function = NewGoFunction(c, "Providers", &GoFunctionProps{
		Name:        FnProviders,
		Description: "mcpbatch providers: the Anthropic and SageMaker control-plane calls of the mcp function",
		AssetDir:    s.AssetDir, LogLevel: s.LogLevel,
		Env:     map[string]*string{config.EnvLogLevel: jsii.String(s.LogLevel)},
		Timeout: awscdk.Duration_Seconds(jsii.Number(90)),
		// Network-bound: an Anthropic create streams up to 256 MB of request
		// lines from S3 through a pipe; 512 MB buys the network share.
		MemoryMB: 512,
	})
	p.Anthropic.Grant(pr.Function)
	g := pr.Function
	g.Role.AddToPrincipalPolicy(allow("ReadBatchRequests", []string{"s3:GetObject"}, p.Data.ObjectArns(PrefixInput), nil))
	suppressWildcards(g.Role, wildObjects)

	mcp := p.Functions.MCP
	mcp.Role.AddToPrincipalPolicy(allow("InvokeProviders", []string{"lambda:InvokeFunction"}, []*string{g.Function.FunctionArn()}, nil))
	mcp.Function.AddEnvironment(jsii.String(config.EnvProvidersFunction), g.Function.FunctionName(), nil)
	return pr
}
